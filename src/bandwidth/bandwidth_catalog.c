/* The kernel catalogue: which kernels exist for which ISA, run-time ISA
 * dispatch on CPUID, and the byte accounting every figure is based on. */
#include <string.h>
#include "bandwidth/bandwidth.h"
#include "bandwidth/bandwidth_kernels.h"

static const char *const isa_names[BANDWIDTH_ISAS] = { "scalar", "avx2", "avx512" };

const char *const bandwidth_kernel_names[] = {
	"read", "write", "copy", "triad", "write-nt", "copy-nt", "triad-nt", NULL
};

#define KERNEL(op_name, sym, op, isa_value, nt, arrays_n, reads_n, writes_n) \
	{ op_name, #sym, op, isa_value, nt, arrays_n, reads_n, writes_n, sym }

#define KERNELS_FOR(isa, isa_value) \
	KERNEL("read", bandwidth_kernel_read_##isa, BANDWIDTH_READ, isa_value, false, 1, 1, 0), \
	KERNEL("write", bandwidth_kernel_write_##isa, BANDWIDTH_WRITE, isa_value, false, 1, 0, 1), \
	KERNEL("copy", bandwidth_kernel_copy_##isa, BANDWIDTH_COPY, isa_value, false, 2, 1, 1), \
	KERNEL("triad", bandwidth_kernel_triad_##isa, BANDWIDTH_TRIAD, isa_value, false, 3, 2, 1), \
	KERNEL("write-nt", bandwidth_kernel_write_nt_##isa, BANDWIDTH_WRITE, isa_value, true, 1, 0, 1), \
	KERNEL("copy-nt", bandwidth_kernel_copy_nt_##isa, BANDWIDTH_COPY, isa_value, true, 2, 1, 1), \
	KERNEL("triad-nt", bandwidth_kernel_triad_nt_##isa, BANDWIDTH_TRIAD, isa_value, true, 3, 2, 1)

static const bandwidth_kernel kernels[] = {
	KERNELS_FOR(scalar, BANDWIDTH_ISA_SCALAR),
	KERNELS_FOR(avx2, BANDWIDTH_ISA_AVX2),
	KERNELS_FOR(avx512, BANDWIDTH_ISA_AVX512),
};

const char *bandwidth_isa_name(bandwidth_isa isa)
{
	return (unsigned)isa < BANDWIDTH_ISAS ? isa_names[isa] : "unknown";
}

int bandwidth_isa_parse(const char *text)
{
	for (int i = 0; i < BANDWIDTH_ISAS; i++)
		if (strcmp(text, isa_names[i]) == 0)
			return i;
	return -1;
}

/* CPUID alone is not enough for AVX: the OS must also save the wider
 * registers (XCR0).  __builtin_cpu_supports checks both, so it is asked
 * too; a CPU that says avx512f under an OS that does not enable it gets
 * the AVX2 kernels. */
bool bandwidth_isa_available(bandwidth_isa isa, const cpu_features *features)
{
	__builtin_cpu_init();
	switch (isa) {
	case BANDWIDTH_ISA_SCALAR: return true;
	case BANDWIDTH_ISA_AVX2: return features->avx2 && __builtin_cpu_supports("avx2");
	case BANDWIDTH_ISA_AVX512: return features->avx512f && __builtin_cpu_supports("avx512f");
	default: return false;
	}
}

bandwidth_isa bandwidth_isa_best(const cpu_features *features)
{
	if (bandwidth_isa_available(BANDWIDTH_ISA_AVX512, features))
		return BANDWIDTH_ISA_AVX512;
	if (bandwidth_isa_available(BANDWIDTH_ISA_AVX2, features))
		return BANDWIDTH_ISA_AVX2;
	return BANDWIDTH_ISA_SCALAR;
}

const bandwidth_kernel *bandwidth_kernel_find(bandwidth_operation operation, bool nontemporal, bandwidth_isa isa)
{
	for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
		if (kernels[i].operation == operation && kernels[i].nontemporal == nontemporal && kernels[i].isa == isa)
			return &kernels[i];
	return NULL;
}

const bandwidth_kernel *bandwidth_kernel_by_name(const char *name, bandwidth_isa isa)
{
	for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
		if (kernels[i].isa == isa && strcmp(kernels[i].name, name) == 0)
			return &kernels[i];
	return NULL;
}

/* STREAM's convention: every double the kernel names is 8 bytes, read or
 * written, once.  Copy moves 16 B per element, triad 24 B. */
uint64_t bandwidth_bytes_counted(const bandwidth_kernel *kernel, size_t elements)
{
	return (uint64_t)elements * sizeof(double) * (kernel->reads_per_element + kernel->writes_per_element);
}

/* An ordinary store that misses reads the line first (write-allocate /
 * read-for-ownership) and later writes it back: every stored byte then
 * crosses the link twice.  Non-temporal stores skip the read. */
uint64_t bandwidth_bytes_moved(const bandwidth_kernel *kernel, size_t elements)
{
	uint64_t allocate = kernel->nontemporal ? 0 : (uint64_t)elements * sizeof(double) * kernel->writes_per_element;
	return bandwidth_bytes_counted(kernel, elements) + allocate;
}

size_t bandwidth_elements_for_footprint(const bandwidth_kernel *kernel, uint64_t footprint)
{
	const uint64_t block = 512;   /* bytes: a whole number of unrolled iterations */
	uint64_t per_array = footprint / kernel->arrays;
	per_array -= per_array % block;
	return (size_t)(per_array / sizeof(double));
}
