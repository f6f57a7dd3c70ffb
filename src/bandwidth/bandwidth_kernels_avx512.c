/* AVX-512 bandwidth kernels (512-bit, AVX512F only).  Compiled for
 * AVX-512 by a target attribute on each function, so no global -mavx512f
 * is needed; bandwidth_catalog.c calls these only when CPUID (and the
 * OS's XCR0) say the CPU can run them.
 *
 * A 512-bit access is a whole 64-byte line when aligned.  The read kernel
 * keeps 8 independent accumulators (64 doubles per iteration): CPUs that
 * load two zmm registers a cycle with a 4-cycle add need that many, or the
 * add chain, not the memory system, sets the L1 figure.  Stores handle 32
 * doubles (four lines) per iteration.  Non-temporal stores need 64-byte
 * alignment, so those kernels store a scalar head until aligned. */
#include <immintrin.h>
#include <stdint.h>
#include "bandwidth/bandwidth_kernels.h"

#define AVX512 __attribute__((target("avx512f")))

AVX512 double bandwidth_kernel_read_avx512(double *a, const double *b, const double *c, size_t n, double s)
{
	__m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
	size_t i = 0;
	for (; i + 64 <= n; i += 64) {
		s0 = _mm512_add_pd(s0, _mm512_loadu_pd(b + i));
		s1 = _mm512_add_pd(s1, _mm512_loadu_pd(b + i + 8));
		s2 = _mm512_add_pd(s2, _mm512_loadu_pd(b + i + 16));
		s3 = _mm512_add_pd(s3, _mm512_loadu_pd(b + i + 24));
		s4 = _mm512_add_pd(s4, _mm512_loadu_pd(b + i + 32));
		s5 = _mm512_add_pd(s5, _mm512_loadu_pd(b + i + 40));
		s6 = _mm512_add_pd(s6, _mm512_loadu_pd(b + i + 48));
		s7 = _mm512_add_pd(s7, _mm512_loadu_pd(b + i + 56));
	}
	__m512d total = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)),
	                              _mm512_add_pd(_mm512_add_pd(s4, s5), _mm512_add_pd(s6, s7)));
	double lanes[8];
	_mm512_storeu_pd(lanes, total);
	double sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
	for (; i < n; i++)
		sum += b[i];
	return sum;
}

AVX512 double bandwidth_kernel_write_avx512(double *a, const double *b, const double *c, size_t n, double s)
{
	__m512d value = _mm512_set1_pd(s);
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		_mm512_storeu_pd(a + i, value);
		_mm512_storeu_pd(a + i + 8, value);
		_mm512_storeu_pd(a + i + 16, value);
		_mm512_storeu_pd(a + i + 24, value);
	}
	for (; i < n; i++)
		a[i] = s;
	return 0;
}

AVX512 double bandwidth_kernel_copy_avx512(double *a, const double *b, const double *c, size_t n, double s)
{
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		__m512d v0 = _mm512_loadu_pd(b + i), v1 = _mm512_loadu_pd(b + i + 8);
		__m512d v2 = _mm512_loadu_pd(b + i + 16), v3 = _mm512_loadu_pd(b + i + 24);
		_mm512_storeu_pd(a + i, v0);
		_mm512_storeu_pd(a + i + 8, v1);
		_mm512_storeu_pd(a + i + 16, v2);
		_mm512_storeu_pd(a + i + 24, v3);
	}
	for (; i < n; i++)
		a[i] = b[i];
	return 0;
}

AVX512 double bandwidth_kernel_triad_avx512(double *a, const double *b, const double *c, size_t n, double s)
{
	__m512d scale = _mm512_set1_pd(s);
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		__m512d v0 = _mm512_fmadd_pd(scale, _mm512_loadu_pd(c + i), _mm512_loadu_pd(b + i));
		__m512d v1 = _mm512_fmadd_pd(scale, _mm512_loadu_pd(c + i + 8), _mm512_loadu_pd(b + i + 8));
		__m512d v2 = _mm512_fmadd_pd(scale, _mm512_loadu_pd(c + i + 16), _mm512_loadu_pd(b + i + 16));
		__m512d v3 = _mm512_fmadd_pd(scale, _mm512_loadu_pd(c + i + 24), _mm512_loadu_pd(b + i + 24));
		_mm512_storeu_pd(a + i, v0);
		_mm512_storeu_pd(a + i + 8, v1);
		_mm512_storeu_pd(a + i + 16, v2);
		_mm512_storeu_pd(a + i + 24, v3);
	}
	for (; i < n; i++)
		a[i] = b[i] + s * c[i];
	return 0;
}

static inline size_t head_to_align(const double *a, size_t n)
{
	size_t misalignment = (uintptr_t)a & 63;
	size_t head = misalignment ? (64 - misalignment) / sizeof(double) : 0;
	return head < n ? head : n;
}

AVX512 double bandwidth_kernel_write_nt_avx512(double *a, const double *b, const double *c, size_t n, double s)
{
	__m512d value = _mm512_set1_pd(s);
	size_t i = 0, head = head_to_align(a, n);
	for (; i < head; i++)
		a[i] = s;
	for (; i + 32 <= n; i += 32) {
		_mm512_stream_pd(a + i, value);
		_mm512_stream_pd(a + i + 8, value);
		_mm512_stream_pd(a + i + 16, value);
		_mm512_stream_pd(a + i + 24, value);
	}
	for (; i < n; i++)
		a[i] = s;
	_mm_sfence();
	return 0;
}

AVX512 double bandwidth_kernel_copy_nt_avx512(double *a, const double *b, const double *c, size_t n, double s)
{
	size_t i = 0, head = head_to_align(a, n);
	for (; i < head; i++)
		a[i] = b[i];
	for (; i + 32 <= n; i += 32) {
		__m512d v0 = _mm512_loadu_pd(b + i), v1 = _mm512_loadu_pd(b + i + 8);
		__m512d v2 = _mm512_loadu_pd(b + i + 16), v3 = _mm512_loadu_pd(b + i + 24);
		_mm512_stream_pd(a + i, v0);
		_mm512_stream_pd(a + i + 8, v1);
		_mm512_stream_pd(a + i + 16, v2);
		_mm512_stream_pd(a + i + 24, v3);
	}
	for (; i < n; i++)
		a[i] = b[i];
	_mm_sfence();
	return 0;
}

AVX512 double bandwidth_kernel_triad_nt_avx512(double *a, const double *b, const double *c, size_t n, double s)
{
	__m512d scale = _mm512_set1_pd(s);
	size_t i = 0, head = head_to_align(a, n);
	for (; i < head; i++)
		a[i] = b[i] + s * c[i];
	for (; i + 32 <= n; i += 32) {
		__m512d v0 = _mm512_fmadd_pd(scale, _mm512_loadu_pd(c + i), _mm512_loadu_pd(b + i));
		__m512d v1 = _mm512_fmadd_pd(scale, _mm512_loadu_pd(c + i + 8), _mm512_loadu_pd(b + i + 8));
		__m512d v2 = _mm512_fmadd_pd(scale, _mm512_loadu_pd(c + i + 16), _mm512_loadu_pd(b + i + 16));
		__m512d v3 = _mm512_fmadd_pd(scale, _mm512_loadu_pd(c + i + 24), _mm512_loadu_pd(b + i + 24));
		_mm512_stream_pd(a + i, v0);
		_mm512_stream_pd(a + i + 8, v1);
		_mm512_stream_pd(a + i + 16, v2);
		_mm512_stream_pd(a + i + 24, v3);
	}
	for (; i < n; i++)
		a[i] = b[i] + s * c[i];
	_mm_sfence();
	return 0;
}
