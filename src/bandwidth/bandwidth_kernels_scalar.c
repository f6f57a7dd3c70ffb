/* Scalar bandwidth kernels: the fallback for CPUs without AVX2.
 *
 * Every access goes through a volatile pointer.  That is what keeps them
 * scalar: without it gcc and clang vectorise these loops with SSE2 (so the
 * "scalar" figure would really be SSE2) or turn write and copy into memset
 * and memcpy calls, whose speed is the C library's, not this loop's.  A
 * volatile access compiles to exactly one load or store, in order, and is
 * never deleted.  Unrolling by 4 with separate accumulators keeps the
 * add latency off the critical path of the read kernel. */
#include <emmintrin.h>
#include <stdint.h>
#include <string.h>
#include "bandwidth/bandwidth_kernels.h"

double bandwidth_kernel_read_scalar(double *a, const double *b, const double *c, size_t n, double s)
{
	const volatile double *source = b;
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		s0 += source[i];
		s1 += source[i + 1];
		s2 += source[i + 2];
		s3 += source[i + 3];
	}
	for (; i < n; i++)
		s0 += source[i];
	return (s0 + s1) + (s2 + s3);
}

double bandwidth_kernel_write_scalar(double *a, const double *b, const double *c, size_t n, double s)
{
	volatile double *destination = a;
	for (size_t i = 0; i < n; i++)
		destination[i] = s;
	return 0;
}

double bandwidth_kernel_copy_scalar(double *a, const double *b, const double *c, size_t n, double s)
{
	volatile double *destination = a;
	const volatile double *source = b;
	for (size_t i = 0; i < n; i++)
		destination[i] = source[i];
	return 0;
}

double bandwidth_kernel_triad_scalar(double *a, const double *b, const double *c, size_t n, double s)
{
	volatile double *destination = a;
	const volatile double *first = b, *second = c;
	for (size_t i = 0; i < n; i++)
		destination[i] = first[i] + s * second[i];
	return 0;
}

/* Non-temporal scalar stores use movnti (SSE2, so every x86-64 has it):
 * 8-byte stores that go to write-combining buffers instead of allocating
 * the line, which removes the write-allocate read.  They are written in
 * inline assembly because clang 14 lowers _mm_stream_si64 of a value that
 * came from a double into an ordinary movsd store (the objdump check in
 * tests/e2e/test_bw_cli.c caught it). */
static inline long long bits_of(double value)
{
	long long bits;
	memcpy(&bits, &value, sizeof bits);
	return bits;
}

static inline void store_nontemporal(double *p, long long bits)
{
	__asm__ __volatile__("movnti %1, %0" : "=m"(*(long long *)p) : "r"(bits));
}

double bandwidth_kernel_write_nt_scalar(double *a, const double *b, const double *c, size_t n, double s)
{
	long long bits = bits_of(s);
	for (size_t i = 0; i < n; i++)
		store_nontemporal(a + i, bits);
	_mm_sfence();
	return 0;
}

double bandwidth_kernel_copy_nt_scalar(double *a, const double *b, const double *c, size_t n, double s)
{
	const volatile double *source = b;
	for (size_t i = 0; i < n; i++)
		store_nontemporal(a + i, bits_of(source[i]));
	_mm_sfence();
	return 0;
}

double bandwidth_kernel_triad_nt_scalar(double *a, const double *b, const double *c, size_t n, double s)
{
	const volatile double *first = b, *second = c;
	for (size_t i = 0; i < n; i++)
		store_nontemporal(a + i, bits_of(first[i] + s * second[i]));
	_mm_sfence();
	return 0;
}
