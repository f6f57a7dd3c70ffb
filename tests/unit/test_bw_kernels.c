/* Each bandwidth kernel computes what it claims, for every ISA this CPU
 * can run, on odd lengths and misaligned destinations (which exercise the
 * tails and the alignment heads of the non-temporal kernels). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "bandwidth/bandwidth.h"

#define CAPACITY 4096

static double *aligned_doubles(size_t n)
{
	double *p = aligned_alloc(64, ((n * sizeof(double) + 63) / 64) * 64);
	cr_assert_not_null(p);
	return p;
}

/* Integer-valued doubles keep every sum and product exact, so results
 * compare with == whatever the ISA's rounding or FMA contraction. */
static void check_kernel(const bandwidth_kernel *k, size_t n, size_t offset)
{
	double *a = aligned_doubles(CAPACITY), *b = aligned_doubles(CAPACITY), *c = aligned_doubles(CAPACITY);
	for (size_t i = 0; i < CAPACITY; i++) {
		a[i] = -1;
		b[i] = (double)(i % 1000) + 1;
		c[i] = (double)(i % 7);
	}
	double *dst = a + offset, *src1 = b + offset, *src2 = c + offset;
	double result = k->run(dst, src1, src2, n, 3.0);
	switch (k->operation) {
	case BANDWIDTH_READ: {
		double expected = 0;
		for (size_t i = 0; i < n; i++)
			expected += src1[i];
		cr_assert_eq(result, expected, "%s/%s n=%zu: sum %f, expected %f", k->name,
		             bandwidth_isa_name(k->isa), n, result, expected);
		for (size_t i = 0; i < CAPACITY; i++)
			cr_assert_eq(a[i], -1, "read wrote a[%zu]", i);
		break;
	}
	case BANDWIDTH_WRITE:
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(dst[i], 3.0, "%s/%s n=%zu: a[%zu] = %f", k->name, bandwidth_isa_name(k->isa), n, i, dst[i]);
		break;
	case BANDWIDTH_COPY:
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(dst[i], src1[i], "%s/%s n=%zu: a[%zu] = %f", k->name, bandwidth_isa_name(k->isa), n, i, dst[i]);
		break;
	case BANDWIDTH_TRIAD:
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(dst[i], src1[i] + 3.0 * src2[i], "%s/%s n=%zu: a[%zu] = %f", k->name,
			             bandwidth_isa_name(k->isa), n, i, dst[i]);
		break;
	default:
		cr_assert_fail("unknown operation");
	}
	/* Nothing outside [offset, offset + n) of the destination changes. */
	if (k->operation != BANDWIDTH_READ) {
		for (size_t i = 0; i < offset; i++)
			cr_assert_eq(a[i], -1, "%s/%s wrote before the array", k->name, bandwidth_isa_name(k->isa));
		for (size_t i = offset + n; i < CAPACITY; i++)
			cr_assert_eq(a[i], -1, "%s/%s wrote past the array (a[%zu])", k->name, bandwidth_isa_name(k->isa), i);
	}
	free(a);
	free(b);
	free(c);
}

Test(bw_kernels, every_kernel_every_available_isa_computes_right)
{
	cpu_features features;
	cpu_features_detect(&features);
	const size_t lengths[] = { 0, 1, 7, 31, 64, 65, 1000, 1003, 2048 };
	const size_t offsets[] = { 0, 1, 3 };
	int checked = 0;
	for (int isa = 0; isa < BANDWIDTH_ISAS; isa++) {
		if (!bandwidth_isa_available((bandwidth_isa)isa, &features))
			continue;
		for (int k = 0; bandwidth_kernel_names[k]; k++) {
			const bandwidth_kernel *kernel = bandwidth_kernel_by_name(bandwidth_kernel_names[k], (bandwidth_isa)isa);
			cr_assert_not_null(kernel);
			cr_assert_eq(kernel->isa, (bandwidth_isa)isa);
			for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
				for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
					check_kernel(kernel, lengths[l], offsets[o]);
			checked++;
		}
	}
	cr_assert_geq(checked, 7, "at least the scalar kernels run everywhere");
}

Test(bw_kernels, catalogue_and_isa_dispatch)
{
	cpu_features features;
	cpu_features_detect(&features);
	cr_assert(bandwidth_isa_available(BANDWIDTH_ISA_SCALAR, &features));
	bandwidth_isa best = bandwidth_isa_best(&features);
	cr_assert(bandwidth_isa_available(best, &features));
	if (features.avx512f && __builtin_cpu_supports("avx512f"))
		cr_assert_eq(best, BANDWIDTH_ISA_AVX512);
	/* A CPU without the features is never offered the wide kernels. */
	cpu_features none;
	memset(&none, 0, sizeof none);
	cr_assert_eq(bandwidth_isa_best(&none), BANDWIDTH_ISA_SCALAR);
	cr_assert_not(bandwidth_isa_available(BANDWIDTH_ISA_AVX2, &none));
	cr_assert_null(bandwidth_kernel_find(BANDWIDTH_READ, true, BANDWIDTH_ISA_SCALAR), "there is no non-temporal read");
	cr_assert_null(bandwidth_kernel_by_name("bogus", BANDWIDTH_ISA_SCALAR));
	cr_assert_eq(bandwidth_isa_parse("avx2"), BANDWIDTH_ISA_AVX2);
	cr_assert_eq(bandwidth_isa_parse("sse9"), -1);
	const bandwidth_kernel *k = bandwidth_kernel_find(BANDWIDTH_TRIAD, true, BANDWIDTH_ISA_AVX2);
	cr_assert_not_null(k);
	cr_assert_str_eq(k->name, "triad-nt");
	cr_assert_str_eq(k->symbol, "bandwidth_kernel_triad_nt_avx2");
}
