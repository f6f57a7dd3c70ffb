/* The bandwidth kernels, one set per ISA (see plumb/bandwidth.h for the
 * shared signature).  Each ISA's file is compiled for its ISA through
 * target attributes only, so the build needs no global -mavx flags and
 * the dispatcher (bandwidth_catalog.c) picks a set at run time. */
#ifndef PLUMB_PROBE_BANDWIDTH_KERNELS_H
#define PLUMB_PROBE_BANDWIDTH_KERNELS_H

#include <stddef.h>

#define BANDWIDTH_DECLARE_KERNELS(isa) \
	double bandwidth_kernel_read_##isa(double *a, const double *b, const double *c, size_t n, double s); \
	double bandwidth_kernel_write_##isa(double *a, const double *b, const double *c, size_t n, double s); \
	double bandwidth_kernel_copy_##isa(double *a, const double *b, const double *c, size_t n, double s); \
	double bandwidth_kernel_triad_##isa(double *a, const double *b, const double *c, size_t n, double s); \
	double bandwidth_kernel_write_nt_##isa(double *a, const double *b, const double *c, size_t n, double s); \
	double bandwidth_kernel_copy_nt_##isa(double *a, const double *b, const double *c, size_t n, double s); \
	double bandwidth_kernel_triad_nt_##isa(double *a, const double *b, const double *c, size_t n, double s);

BANDWIDTH_DECLARE_KERNELS(scalar)
BANDWIDTH_DECLARE_KERNELS(avx2)
BANDWIDTH_DECLARE_KERNELS(avx512)

#endif
