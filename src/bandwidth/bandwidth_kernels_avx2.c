/* AVX2 bandwidth kernels (256-bit).  Compiled for AVX2 by a target
 * attribute on each function, not by a global -mavx2, so the rest of
 * plumb still runs on any x86-64; bandwidth_catalog.c calls these only
 * when CPUID says the CPU has AVX2.
 *
 * Each loop handles 32 doubles (256 bytes, four cache lines) per
 * iteration so that loop overhead is a small part of the instructions.
 * The read kernel keeps 8 independent accumulators: with an add latency
 * of 3-4 cycles and two loads a cycle, fewer would make the adds, not the
 * memory system, the limit for L1-resident data.  Unaligned loads/stores
 * cost nothing extra when the data is aligned (it is: arenas are page
 * aligned); non-temporal stores need 32-byte alignment, so those kernels
 * store a scalar head until the destination is aligned. */
#include <immintrin.h>
#include <stdint.h>
#include "bandwidth/bandwidth_kernels.h"

#define AVX2 __attribute__((target("avx2")))

AVX2 double bandwidth_kernel_read_avx2(double *a, const double *b, const double *c, size_t n, double s)
{
	__m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		s0 = _mm256_add_pd(s0, _mm256_loadu_pd(b + i));
		s1 = _mm256_add_pd(s1, _mm256_loadu_pd(b + i + 4));
		s2 = _mm256_add_pd(s2, _mm256_loadu_pd(b + i + 8));
		s3 = _mm256_add_pd(s3, _mm256_loadu_pd(b + i + 12));
		s4 = _mm256_add_pd(s4, _mm256_loadu_pd(b + i + 16));
		s5 = _mm256_add_pd(s5, _mm256_loadu_pd(b + i + 20));
		s6 = _mm256_add_pd(s6, _mm256_loadu_pd(b + i + 24));
		s7 = _mm256_add_pd(s7, _mm256_loadu_pd(b + i + 28));
	}
	__m256d total = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)),
	                              _mm256_add_pd(_mm256_add_pd(s4, s5), _mm256_add_pd(s6, s7)));
	double lanes[4];
	_mm256_storeu_pd(lanes, total);
	double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
	for (; i < n; i++)
		sum += b[i];
	return sum;
}

AVX2 double bandwidth_kernel_write_avx2(double *a, const double *b, const double *c, size_t n, double s)
{
	__m256d value = _mm256_set1_pd(s);
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		_mm256_storeu_pd(a + i, value);
		_mm256_storeu_pd(a + i + 4, value);
		_mm256_storeu_pd(a + i + 8, value);
		_mm256_storeu_pd(a + i + 12, value);
	}
	for (; i < n; i++)
		a[i] = s;
	return 0;
}

AVX2 double bandwidth_kernel_copy_avx2(double *a, const double *b, const double *c, size_t n, double s)
{
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m256d v0 = _mm256_loadu_pd(b + i), v1 = _mm256_loadu_pd(b + i + 4);
		__m256d v2 = _mm256_loadu_pd(b + i + 8), v3 = _mm256_loadu_pd(b + i + 12);
		_mm256_storeu_pd(a + i, v0);
		_mm256_storeu_pd(a + i + 4, v1);
		_mm256_storeu_pd(a + i + 8, v2);
		_mm256_storeu_pd(a + i + 12, v3);
	}
	for (; i < n; i++)
		a[i] = b[i];
	return 0;
}

/* Multiply then add, not FMA: AVX2 does not imply FMA, and the triad is
 * memory bound, so the extra instruction costs nothing measurable. */
AVX2 double bandwidth_kernel_triad_avx2(double *a, const double *b, const double *c, size_t n, double s)
{
	__m256d scale = _mm256_set1_pd(s);
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m256d v0 = _mm256_add_pd(_mm256_loadu_pd(b + i), _mm256_mul_pd(scale, _mm256_loadu_pd(c + i)));
		__m256d v1 = _mm256_add_pd(_mm256_loadu_pd(b + i + 4), _mm256_mul_pd(scale, _mm256_loadu_pd(c + i + 4)));
		__m256d v2 = _mm256_add_pd(_mm256_loadu_pd(b + i + 8), _mm256_mul_pd(scale, _mm256_loadu_pd(c + i + 8)));
		__m256d v3 = _mm256_add_pd(_mm256_loadu_pd(b + i + 12), _mm256_mul_pd(scale, _mm256_loadu_pd(c + i + 12)));
		_mm256_storeu_pd(a + i, v0);
		_mm256_storeu_pd(a + i + 4, v1);
		_mm256_storeu_pd(a + i + 8, v2);
		_mm256_storeu_pd(a + i + 12, v3);
	}
	for (; i < n; i++)
		a[i] = b[i] + s * c[i];
	return 0;
}

/* Elements to store one by one before a reaches a 32-byte boundary. */
static inline size_t head_to_align(const double *a, size_t n)
{
	size_t misalignment = (uintptr_t)a & 31;
	size_t head = misalignment ? (32 - misalignment) / sizeof(double) : 0;
	return head < n ? head : n;
}

AVX2 double bandwidth_kernel_write_nt_avx2(double *a, const double *b, const double *c, size_t n, double s)
{
	__m256d value = _mm256_set1_pd(s);
	size_t i = 0, head = head_to_align(a, n);
	for (; i < head; i++)
		a[i] = s;
	for (; i + 16 <= n; i += 16) {
		_mm256_stream_pd(a + i, value);
		_mm256_stream_pd(a + i + 4, value);
		_mm256_stream_pd(a + i + 8, value);
		_mm256_stream_pd(a + i + 12, value);
	}
	for (; i < n; i++)
		a[i] = s;
	_mm_sfence();
	return 0;
}

AVX2 double bandwidth_kernel_copy_nt_avx2(double *a, const double *b, const double *c, size_t n, double s)
{
	size_t i = 0, head = head_to_align(a, n);
	for (; i < head; i++)
		a[i] = b[i];
	for (; i + 16 <= n; i += 16) {
		__m256d v0 = _mm256_loadu_pd(b + i), v1 = _mm256_loadu_pd(b + i + 4);
		__m256d v2 = _mm256_loadu_pd(b + i + 8), v3 = _mm256_loadu_pd(b + i + 12);
		_mm256_stream_pd(a + i, v0);
		_mm256_stream_pd(a + i + 4, v1);
		_mm256_stream_pd(a + i + 8, v2);
		_mm256_stream_pd(a + i + 12, v3);
	}
	for (; i < n; i++)
		a[i] = b[i];
	_mm_sfence();
	return 0;
}

AVX2 double bandwidth_kernel_triad_nt_avx2(double *a, const double *b, const double *c, size_t n, double s)
{
	__m256d scale = _mm256_set1_pd(s);
	size_t i = 0, head = head_to_align(a, n);
	for (; i < head; i++)
		a[i] = b[i] + s * c[i];
	for (; i + 16 <= n; i += 16) {
		__m256d v0 = _mm256_add_pd(_mm256_loadu_pd(b + i), _mm256_mul_pd(scale, _mm256_loadu_pd(c + i)));
		__m256d v1 = _mm256_add_pd(_mm256_loadu_pd(b + i + 4), _mm256_mul_pd(scale, _mm256_loadu_pd(c + i + 4)));
		__m256d v2 = _mm256_add_pd(_mm256_loadu_pd(b + i + 8), _mm256_mul_pd(scale, _mm256_loadu_pd(c + i + 8)));
		__m256d v3 = _mm256_add_pd(_mm256_loadu_pd(b + i + 12), _mm256_mul_pd(scale, _mm256_loadu_pd(c + i + 12)));
		_mm256_stream_pd(a + i, v0);
		_mm256_stream_pd(a + i + 4, v1);
		_mm256_stream_pd(a + i + 8, v2);
		_mm256_stream_pd(a + i + 12, v3);
	}
	for (; i < n; i++)
		a[i] = b[i] + s * c[i];
	_mm_sfence();
	return 0;
}
