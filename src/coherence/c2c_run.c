/* `plumb c2c` as a library call: picks the pairs (per topology distance,
 * every ordered pair, or the one given), runs the selected sections and
 * adds their tables to a report.  Cases the CPUs cannot support become
 * `skipped` cells with the reason; measurements that did not complete
 * become `failed` cells; the call itself fails only on bad options. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "coherence/c2c.h"
#include "core/progress.h"

void c2c_run_options_default(c2c_run_options *options)
{
	memset(options, 0, sizeof *options);
	options->sections = C2C_SECTION_PAIRS | C2C_SECTION_STATES | C2C_SECTION_INVALIDATE | C2C_SECTION_FALSE_SHARING;
	options->round_trips = 5000;
	options->duration_ns = 100000000u;
	c2c_config_default(&options->config);
}

static void cpu_list_text(const int *cpus, int n, char *buffer, size_t size)
{
	size_t used = 0;
	buffer[0] = 0;
	for (int i = 0; i < n && used + 12 < size; i++)
		used += (size_t)snprintf(buffer + used, size - used, "%s%d", i ? "," : "", cpus[i]);
}

/* CPUs for a bench: A, B, then the other usable CPUs in order. */
static int bench_cpus(const c2c_run_options *o, int a, int b, int *out)
{
	int n = 0;
	out[n++] = a;
	if (b >= 0)
		out[n++] = b;
	for (int i = 0; i < o->cpu_count && n < COHERENCE_MAX_ROLES; i++)
		if (o->cpus[i] != a && o->cpus[i] != b)
			out[n++] = o->cpus[i];
	return n;
}

static void skipped_cells(output_table *t, int count, const char *reason)
{
	for (int i = 0; i < count; i++)
		output_cell_status(t, "skipped", reason);
}

static void failed_cells(output_table *t, int count, const plumb_status *status)
{
	for (int i = 0; i < count; i++)
		output_cell_status(t, "failed", status->message);
}

/* ---- pairs: load from Modified and ping-pong per distance or per pair ---- */
static void measure_pair_row(output_table *t, const c2c_run_options *o, const timer_calibration *timer, int a, int b)
{
	plumb_status status;
	c2c_bench *bench;
	c2c_config config = o->config;
	int cpus[2] = { a, b };
	if (c2c_bench_open(&bench, &config, cpus, 2, timer, &status) != 0) {
		failed_cells(t, 5, &status);
		return;
	}
	c2c_result result;
	int rc = c2c_bench_measure(bench, COHERENCE_MODIFIED, 0, COHERENCE_ACCESS_LOAD, &result, &status);
	c2c_bench_close(bench);
	if (rc == 0) {
		output_cell_real(t, result.median_ns);
		output_cell_real(t, result.min_ns);
	} else {
		failed_cells(t, 2, &status);
	}
	c2c_pingpong_result pong;
	/* The ping-pong repeats as many times as --trials says, like the loads
	 * above; pingpong_trials records how many were run. */
	if (c2c_pingpong(a, b, o->round_trips, o->config.trials, o->config.timeout_ns, &pong, &status) == 0) {
		output_cell_real(t, pong.median_ns);
		output_cell_real(t, pong.min_ns);
		output_cell_integer(t, pong.trials);
	} else {
		failed_cells(t, 3, &status);
	}
}

static output_table *pairs_table(output_report *r, const char *name, const char *title)
{
	output_table *t = output_table_add(r, name, title);
	output_column(t, "distance", NULL, 0);
	output_column(t, "cpu_a", NULL, 0);
	output_column(t, "cpu_b", NULL, 0);
	output_column(t, "load_from_modified", "ns", 1);
	output_column(t, "load_from_modified_min", "ns", 1);
	output_column(t, "pingpong_round_trip", "ns", 1);
	output_column(t, "pingpong_round_trip_min", "ns", 1);
	output_column(t, "pingpong_trials", NULL, 0);
	return t;
}

static void run_pairs(output_report *r, const c2c_run_options *o, const timer_calibration *timer,
                      const cpu_distance_map *map, int pairs[CPU_DISTANCE_COUNT][2])
{
	if (o->matrix) {
		output_table *t = pairs_table(r, "matrix", "Every ordered pair: A loads lines B modified; ping-pong round trip");
		progress bar;
		size_t done = 0;
		progress_begin(&bar, "plumb c2c: matrix", (size_t)o->cpu_count * (size_t)(o->cpu_count > 0 ? o->cpu_count - 1 : 0));
		for (int i = 0; i < o->cpu_count; i++)
			for (int j = 0; j < o->cpu_count; j++) {
				if (i == j)
					continue;
				int a = o->cpus[i], b = o->cpus[j];
				output_row(t);
				output_cell_text(t, map ? cpu_distance_name(cpu_distance_between(map, a, b)) : "unknown");
				output_cell_integer(t, a);
				output_cell_integer(t, b);
				measure_pair_row(t, o, timer, a, b);
				progress_step(&bar, ++done);
			}
		progress_end(&bar);
		if (o->cpu_count < 2) {
			output_row(t);
			output_cell_text(t, "any");
			skipped_cells(t, 7, "needs 2 CPUs; this process may use 1");
		}
		return;
	}
	output_table *t = pairs_table(r, "pairs", "One pair per topology distance: A loads lines B modified; ping-pong round trip");
	static const cpu_distance classes[] = { CPU_DISTANCE_SMT, CPU_DISTANCE_SAME_L2, CPU_DISTANCE_SAME_L3,
	                                        CPU_DISTANCE_OTHER_L3, CPU_DISTANCE_OTHER_SOCKET, CPU_DISTANCE_UNKNOWN };
	char list[256], reason[320];
	cpu_list_text(o->cpus, o->cpu_count, list, sizeof list);
	for (size_t k = 0; k < sizeof classes / sizeof classes[0]; k++) {
		cpu_distance d = classes[k];
		if (pairs[d][0] < 0) {
			/* Classes the machine has no pair for are listed (except the
			 * rare ones), so the reader sees what was not measured and why. */
			if (d == CPU_DISTANCE_UNKNOWN || d == CPU_DISTANCE_SAME_L2)
				continue;
			output_row(t);
			output_cell_text(t, cpu_distance_name(d));
			snprintf(reason, sizeof reason, "no two CPUs at this distance among CPUs %s", list);
			skipped_cells(t, 7, reason);
			continue;
		}
		output_row(t);
		output_cell_text(t, cpu_distance_name(d));
		output_cell_integer(t, pairs[d][0]);
		output_cell_integer(t, pairs[d][1]);
		measure_pair_row(t, o, timer, pairs[d][0], pairs[d][1]);
	}
}

/* ---- states: every access on every state, for one pair ---- */
static void states_row_cells(output_table *t, c2c_bench *bench, coherence_state state, int sharers,
                             const char *skip_word, const char *skip_reason)
{
	for (int access = 0; access < COHERENCE_ACCESS_COUNT; access++) {
		if (skip_reason) {
			output_cell_status(t, skip_word, skip_reason);
			continue;
		}
		c2c_result result;
		plumb_status status;
		if (c2c_bench_measure(bench, state, sharers, (coherence_access)access, &result, &status) == 0)
			output_cell_real(t, result.median_ns);
		else
			output_cell_status(t, "failed", status.message);
	}
}

static void run_states(output_report *r, const c2c_run_options *o, const timer_calibration *timer, int a, int b,
                       const char *distance)
{
	output_table *t = output_table_add(r, "states",
	                                   "Access latency by A on lines in each state (median per access)");
	output_column(t, "distance", NULL, 0);
	output_column(t, "cpu_a", NULL, 0);
	output_column(t, "cpu_b", NULL, 0);
	output_column(t, "state", NULL, 0);
	output_column(t, "further_sharers", NULL, 0);
	output_column(t, "load", "ns", 1);
	output_column(t, "store", "ns", 1);
	output_column(t, "atomic_add", "ns", 1);
	output_column(t, "cas", "ns", 1);
	int cpus[COHERENCE_MAX_ROLES];
	int n = bench_cpus(o, a, b, cpus);
	plumb_status status;
	c2c_bench *bench = NULL;
	char open_error[PLUMB_MESSAGE_MAX] = "";
	if (c2c_bench_open(&bench, &o->config, cpus, n, timer, &status) != 0) {
		snprintf(open_error, sizeof open_error, "%s", status.message);
		bench = NULL;
	}
	/* S with 1..N-2 further sharers: all counts up to 8, then powers of two
	 * and N-2, so big machines stay quick. */
	int sharer_counts[64], sharer_rows = 0;
	for (int k = 1; k <= n - 2 && sharer_rows < 63; k = k < 8 ? k + 1 : k * 2)
		sharer_counts[sharer_rows++] = k;
	if (n - 2 >= 1 && sharer_counts[sharer_rows - 1] != n - 2)
		sharer_counts[sharer_rows++] = n - 2;
	const coherence_state order[] = { COHERENCE_LOCAL, COHERENCE_MODIFIED, COHERENCE_EXCLUSIVE, COHERENCE_SHARED,
	                                  COHERENCE_INVALID };
	for (size_t s = 0; s < sizeof order / sizeof order[0]; s++) {
		coherence_state state = order[s];
		int rows = state == COHERENCE_SHARED ? (sharer_rows ? sharer_rows : 1) : 1;
		for (int row = 0; row < rows; row++) {
			int sharers = state == COHERENCE_SHARED ? (sharer_rows ? sharer_counts[row] : 1) : 0;
			output_row(t);
			output_cell_text(t, distance);
			output_cell_integer(t, a);
			if (b >= 0)
				output_cell_integer(t, b);
			else
				output_cell_status(t, "skipped", "no second CPU");
			output_cell_text(t, coherence_state_name(state));
			output_cell_integer(t, sharers);
			const char *skip = NULL, *word = "skipped";
			char reason[PLUMB_MESSAGE_MAX];
			int needed = coherence_state_roles(state, state == COHERENCE_SHARED ? 1 : sharers);
			if (needed > n) {
				snprintf(reason, sizeof reason,
				         state == COHERENCE_SHARED
				         ? "needs %d CPUs (A, owner B and a further sharer); %d available"
				         : "needs %d CPUs (A and a helper B); %d available", needed, n);
				skip = reason;
			} else if (!bench) {
				snprintf(reason, sizeof reason, "%s", open_error);
				skip = reason;
				word = "failed";
			}
			states_row_cells(t, bench, state, sharers, word, skip);
		}
	}
	c2c_bench_close(bench);
}

/* ---- a store invalidating k sharers, k = 1..N-1 ---- */
static void run_invalidate(output_report *r, const c2c_run_options *o, const timer_calibration *timer, int a, int b)
{
	output_table *t = output_table_add(r, "invalidate",
	                                   "Store by A on lines with clean copies in k other cores (k = 1: one Exclusive copy)");
	output_column(t, "cpu_a", NULL, 0);
	output_column(t, "sharers", NULL, 0);
	output_column(t, "sharer_cpus", NULL, 0);
	output_column(t, "store", "ns", 1);
	output_column(t, "store_min", "ns", 1);
	output_column(t, "atomic_add", "ns", 1);
	int cpus[COHERENCE_MAX_ROLES];
	int n = bench_cpus(o, a, b, cpus);
	if (n < 2) {
		output_row(t);
		output_cell_integer(t, a);
		output_cell_integer(t, 1);
		skipped_cells(t, 4, "needs 2 CPUs (A and one sharer); this process may use 1");
		return;
	}
	plumb_status status;
	c2c_bench *bench;
	if (c2c_bench_open(&bench, &o->config, cpus, n, timer, &status) != 0) {
		output_row(t);
		output_cell_integer(t, a);
		output_cell_integer(t, 1);
		failed_cells(t, 4, &status);
		return;
	}
	/* k = 1..8, then powers of two, then N-1: the curve's shape without
	 * hundreds of rows on big machines. */
	int ks[64], kn = 0;
	for (int k = 1; k <= n - 1 && kn < 63; k = k < 8 ? k + 1 : k * 2)
		ks[kn++] = k;
	if (ks[kn - 1] != n - 1)
		ks[kn++] = n - 1;
	for (int i = 0; i < kn; i++) {
		int k = ks[i];
		char list[256];
		cpu_list_text(cpus + 1, k, list, sizeof list);
		output_row(t);
		output_cell_integer(t, a);
		output_cell_integer(t, k);
		output_cell_text(t, list);
		c2c_result store, atomic;
		if (c2c_bench_measure(bench, COHERENCE_CLEAN_SHARED, k, COHERENCE_ACCESS_STORE, &store, &status) == 0) {
			output_cell_real(t, store.median_ns);
			output_cell_real(t, store.min_ns);
		} else {
			failed_cells(t, 2, &status);
		}
		if (c2c_bench_measure(bench, COHERENCE_CLEAN_SHARED, k, COHERENCE_ACCESS_ATOMIC_ADD, &atomic, &status) == 0)
			output_cell_real(t, atomic.median_ns);
		else
			failed_cells(t, 1, &status);
	}
	c2c_bench_close(bench);
}

static void run_false_sharing(output_report *r, const c2c_run_options *o, int a, int b)
{
	output_table *t = output_table_add(r, "false_sharing",
	                                   "Two threads atomically incrementing different words: one line vs 256 bytes apart");
	output_column(t, "cpu_a", NULL, 0);
	output_column(t, "cpu_b", NULL, 0);
	output_column(t, "shared_line", "ns/update", 2);  /* atomic increments */
	output_column(t, "padded", "ns/update", 2);
	output_column(t, "slowdown", "x", 2);
	output_row(t);
	output_cell_integer(t, a);
	if (b < 0) {
		skipped_cells(t, 4, "needs 2 CPUs; this process may use 1");
		return;
	}
	output_cell_integer(t, b);
	c2c_false_sharing_result result;
	plumb_status status;
	if (c2c_false_sharing(a, b, o->duration_ns, 3, o->config.timeout_ns, &result, &status) == 0) {
		output_cell_real(t, result.shared_ns_per_update);
		output_cell_real(t, result.padded_ns_per_update);
		output_cell_real(t, result.slowdown);
	} else {
		failed_cells(t, 3, &status);
	}
}

int c2c_run(const c2c_run_options *o, const timer_calibration *timer, output_report *r, plumb_status *status)
{
	if (o->cpu_count < 1 || o->cpu_count > C2C_MAX_CPUS)
		return plumb_fail(status, EINVAL, "c2c: 1..%d CPUs", C2C_MAX_CPUS);
	if (o->has_pair && o->pair[0] == o->pair[1])
		return plumb_fail(status, EINVAL, "c2c: the pair needs two different CPUs");
	cpu_distance_map *map = NULL;
	plumb_status map_status;
	if (cpu_distance_open(&map, &map_status) != 0) {
		/* Without hwloc's tree the pairs are still measured, labelled unknown. */
		map = NULL;
		output_note(r, "topology distances unknown: %s", map_status.message);
	}
	int pairs[CPU_DISTANCE_COUNT][2];
	for (int d = 0; d < CPU_DISTANCE_COUNT; d++)
		pairs[d][0] = pairs[d][1] = -1;
	if (map)
		cpu_distance_representatives(map, o->cpus, o->cpu_count, pairs);
	else if (o->cpu_count >= 2) {
		pairs[CPU_DISTANCE_UNKNOWN][0] = o->cpus[0];
		pairs[CPU_DISTANCE_UNKNOWN][1] = o->cpus[1];
	}

	char list[256];
	cpu_list_text(o->cpus, o->cpu_count, list, sizeof list);
	output_meta_text(r, "cpus", list);
	output_meta_integer(r, "lines", (int64_t)o->config.lines);
	output_meta_integer(r, "line_spacing_bytes", (int64_t)o->config.spacing);
	output_meta_integer(r, "trials", o->config.trials);
	output_meta_integer(r, "pingpong_round_trips", (int64_t)o->round_trips);
	output_meta_text(r, "timer", timer->source == TIMER_TSC ? "tsc" : "clock_gettime");

	/* The pair the state, invalidation and false-sharing sections use:
	 * --pair, else the closest pair that is not an SMT sibling (siblings
	 * share L1 and L2, so "another core's cache" would not be measured),
	 * else an SMT pair. */
	int a = o->cpus[0], b = -1;
	const char *distance = "none";
	if (o->has_pair) {
		a = o->pair[0];
		b = o->pair[1];
		distance = map ? cpu_distance_name(cpu_distance_between(map, a, b)) : "unknown";
	} else {
		static const cpu_distance preference[] = { CPU_DISTANCE_SAME_L2, CPU_DISTANCE_SAME_L3, CPU_DISTANCE_OTHER_L3,
		                                           CPU_DISTANCE_OTHER_SOCKET, CPU_DISTANCE_UNKNOWN, CPU_DISTANCE_SMT };
		for (size_t i = 0; i < sizeof preference / sizeof preference[0]; i++)
			if (pairs[preference[i]][0] >= 0) {
				a = pairs[preference[i]][0];
				b = pairs[preference[i]][1];
				distance = cpu_distance_name(preference[i]);
				break;
			}
	}
	if (o->sections & C2C_SECTION_PAIRS) {
		if (o->has_pair && !o->matrix) {
			output_table *t = pairs_table(r, "pairs", "The given pair: A loads lines B modified; ping-pong round trip");
			output_row(t);
			output_cell_text(t, distance);
			output_cell_integer(t, a);
			output_cell_integer(t, b);
			measure_pair_row(t, o, timer, a, b);
		} else {
			run_pairs(r, o, timer, map, pairs);
		}
	}
	if (o->sections & C2C_SECTION_STATES)
		run_states(r, o, timer, a, b, distance);
	if (o->sections & C2C_SECTION_INVALIDATE)
		run_invalidate(r, o, timer, a, b);
	if (o->sections & C2C_SECTION_FALSE_SHARING)
		run_false_sharing(r, o, a, b);
	cpu_distance_close(map);

	output_note(r, "store = a store followed by mfence (waits until the RFO and invalidations complete); "
	               "atomic-add = lock xadd of 0; cas = lock cmpxchg that fails (it still takes the line exclusively)");
	output_note(r, "states: local = A's own cache; M = B wrote; E = B wrote, flushed, read; S = B wrote, then "
	               "further sharers read (on AMD's MOESI B may keep the line Owned); I = B wrote, flushed");
	if (o->cpu_count < 2)
		output_note(r, "only CPU %d is available: cases needing a second CPU are skipped", o->cpus[0]);
	return 0;
}
