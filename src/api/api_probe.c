/* The public probes: one latency point (a random pointer chase) and one
 * bandwidth point (a STREAM kernel), each with the library's defaults. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "api_internal.h"
#include "core/arena.h"
#include "bandwidth/bandwidth.h"
#include "chase/chase.h"
#include "core/cpu.h"
#include "latency/latency.h"
#include "core/timer.h"

#define API_TIMER_CALIBRATION_MS 50
#define API_TIME_CAP_NS 1000000000ull
#define API_MAX_CPUS 1024

static size_t line_bytes(void)
{
	long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	return line >= 16 && line <= 4096 && (line & (line - 1)) == 0 ? (size_t)line : 64;
}

int plumb_latency_measure(size_t bytes, plumb_latency *out, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!out || bytes < 4096)
		return api_error(error, (plumb_fail(&status, EINVAL,
		                                    "plumb_latency_measure: a working set of %zu bytes is under 4 KiB", bytes),
		                         &status));
	timer_calibration timer;
	if (timer_calibrate(&timer, API_TIMER_CALIBRATION_MS, &status) != 0)
		return api_error(error, &status);
	arena memory;
	arena_request request = { .size = bytes, .pages = ARENA_PAGES_DEFAULT, .fault = ARENA_FAULT_PREFAULT };
	if (arena_create(&memory, &request, &status) != 0)
		return api_error(error, &status);
	chase_layout layout = { .pattern = CHASE_RANDOM, .bytes = bytes, .slot_bytes = line_bytes(), .seed = 1 };
	chase_chain chain;
	latency_measure_options options;
	latency_measure_defaults(&options);
	if (options.time_cap_ns > API_TIME_CAP_NS)
		options.time_cap_ns = API_TIME_CAP_NS;
	latency_result result;
	int rc = chase_build_layout(&chain, memory.base, memory.size, &layout, &status) == 0 &&
	         latency_measure_chain(&timer, &chain, &options, &result, &status) == 0 ? 0 : -1;
	arena_destroy(&memory);
	if (rc != 0)
		return api_error(error, &status);
	out->ns = result.ns;
	out->ns_min = result.ns_min;
	out->ns_p10 = result.ns_p10;
	out->ci95_relative = result.ci95_relative;
	out->samples = result.samples;
	out->noisy = result.noisy;
	return 0;
}

int plumb_bandwidth_measure(const char *kernel_name, size_t bytes, int threads, plumb_bandwidth *out,
                            plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!out || !kernel_name || threads < 1 || bytes < 4096)
		return api_error(error, (plumb_fail(&status, EINVAL,
		                                    "plumb_bandwidth_measure: needs a kernel, 1 or more threads and 4 KiB "
		                                    "or more per thread"), &status));
	cpu_features features;
	cpu_features_detect(&features);
	const bandwidth_kernel *kernel = bandwidth_kernel_by_name(kernel_name, bandwidth_isa_best(&features));
	if (!kernel)
		kernel = bandwidth_kernel_by_name(kernel_name, BANDWIDTH_ISA_SCALAR);
	if (!kernel)
		return api_error(error, (plumb_fail(&status, EINVAL,
		                                    "plumb_bandwidth_measure: unknown kernel '%s' (read, write, copy, triad; "
		                                    "-nt for non-temporal stores)", kernel_name), &status));
	int cpus[API_MAX_CPUS];
	int allowed = cpu_allowed(cpus, API_MAX_CPUS, &status);
	if (allowed < 0)
		return api_error(error, &status);
	if (threads > allowed)
		return api_error(error, (plumb_fail(&status, EINVAL,
		                                    "plumb_bandwidth_measure: %d threads but this process may use %d CPU%s",
		                                    threads, allowed, allowed == 1 ? "" : "s"), &status));
	timer_calibration timer;
	if (timer_calibrate(&timer, API_TIMER_CALIBRATION_MS, &status) != 0)
		return api_error(error, &status);
	bandwidth_team_request request = { .threads = threads, .cpus = cpus, .footprint = bytes,
	                                   .pages = ARENA_PAGES_DEFAULT, .timer = &timer };
	bandwidth_team *team;
	if (bandwidth_team_create(&team, &request, &status) != 0)
		return api_error(error, &status);
	bandwidth_measure_options options;
	bandwidth_measure_defaults(&options);
	if (options.time_cap_ns > API_TIME_CAP_NS)
		options.time_cap_ns = API_TIME_CAP_NS;
	bandwidth_result result;
	int rc = bandwidth_measure(team, kernel, bytes, &options, &result, &status);
	bandwidth_team_destroy(team);
	if (rc != 0)
		return api_error(error, &status);
	out->gbps = result.gbps.median;
	out->gbps_min = result.gbps.min;
	out->gbps_max = result.gbps.max;
	out->ci95_relative = result.gbps.ci95_relative;
	out->samples = result.gbps.n;
	out->noisy = result.noisy;
	return 0;
}
