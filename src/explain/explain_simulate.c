/* The simulated source: the program's references, region markers included,
 * through this machine's caches (the simulator's host preset: sysfs/hwloc),
 * per region (sim_region, src/sim/sim.h).
 *
 * Which misses are sequential (prefetchable) comes from the code watch's
 * per-instruction strides (explain_code.c), not from a second simulator
 * with a prefetcher: that twin cost a fifth of explain's CPU time and moved
 * no PolyBench prediction by more than 1% (docs/PERFORMANCE.md, "The
 * sequential fraction from the stride watch alone"). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "sim/sim.h"
#include "sim/sim_curve.h"
#include "explain/explain_internal.h"

bool explain_simulation_available(char *reason, size_t size)
{
	(void)reason, (void)size;
	return true;
}

static uint64_t kinds(const uint64_t counts[SIM_KIND_COUNT], bool instructions)
{
	return (instructions ? counts[SIM_IFETCH] : 0) + counts[SIM_READ] + counts[SIM_WRITE];
}

/* One core's (or region's) statistics into simulated counts. */
static void take_core(explain_simulated *into, const sim_core_stats *core, uint64_t l3_misses, bool have_l3)
{
	into->references += core->references[SIM_READ] + core->references[SIM_WRITE];
	into->instruction_fetches += core->references[SIM_IFETCH];
	into->l1i_misses += kinds(core->cache[SIM_L1I].misses, true);
	into->misses[0] += kinds(core->cache[SIM_L1D].misses, true);
	uint64_t l2 = kinds(core->cache[SIM_L2].misses, true);
	into->misses[1] += l2;
	into->misses[2] += have_l3 ? l3_misses : l2;
	into->memory_reads += core->memory_reads;
	into->memory_writes += core->memory_writes;
	into->invalidations += core->coherence.invalidations_received;
	into->transfers += core->coherence.transfers_received;
	into->upgrades += core->coherence.upgrades_shared + core->coherence.upgrades_owned;
	into->done = true;
}

/* The third simulator, of the threads' sharing: the plain one's caches with
 * the misses classified (true and false sharing, hot lines), made when a
 * second thread appears.  Classification slows every reference, so a
 * program of one thread never pays for it. */
/* The preset's caches; under the host preset, a shared cache at the usable
 * size this machine's figures measured where that is under half the size
 * sysfs lists (as plumb sim --machine does): a VM's guest may use a few MiB
 * of a 260 MiB L3, and a chase of 32 MiB then misses there.  The figures
 * were measured (or read) before the Valgrind run; --preset host-nominal
 * keeps sysfs's size.  note (if not NULL) gets what was done. */
static int explain_sim_config(const explain_result *result, sim_config *config, char *note, size_t length,
                              plumb_status *status)
{
	if (note && length)
		note[0] = 0;
	if (sim_preset(config, result->preset, status) != 0)
		return -1;
	if (strcmp(result->preset, "host") != 0 || !result->have_machine)
		return 0;
	sim_level level = config->cache[SIM_L3].size ? SIM_L3 : SIM_L2;
	uint64_t usable = result->machine.size_bytes[level == SIM_L3 ? EXPLAIN_L3 : EXPLAIN_L2];
	uint64_t nominal = config->cache[level].size;
	/* plumb sim --machine's rule (threshold, whole sets); the note in
	 * explain's words */
	if (!usable || sim_preset_apply_usable(config, (double)usable, NULL, NULL, 0) == 0)
		return 0;
	if (note && length)
		snprintf(note, length, "; L%d at its usable %.1f MiB of the nominal %.0f MiB sysfs lists (--preset host-nominal "
		         "simulates that)", level == SIM_L3 ? 3 : 2, (double)config->cache[level].size / 1048576,
		         (double)nominal / 1048576);
	return 0;
}

static int make_sharing(const explain_result *result, sim **sharing, plumb_status *status)
{
	sim_config config;
	if (explain_sim_config(result, &config, NULL, 0, status) != 0)
		return -1;
	config.classify = true;
	config.check = false;
	if (sim_config_validate(&config, status) != 0)
		return -1;
	return sim_new(sharing, &config, status);
}

static uint64_t sharing_misses(const sim_core_stats *core, bool true_sharing)
{
	uint64_t n = 0;
	/* the L1s' (a miss there goes on to the L2, which counts it again) */
	for (int level = SIM_L1I; level <= SIM_L1D; level++)
		n += true_sharing ? core->cache[level].coherence_true : core->cache[level].coherence_false;
	return n;
}

/* The sharing simulator's regions and hottest shared lines into the result. */
static void take_sharing(const sim *sharing, explain_result *result)
{
	const sim_stats *all = sim_statistics(sharing);
	explain_simulated *program = &result->regions[0].simulated;
	for (uint32_t c = 0; c < all->cores; c++) {
		program->true_sharing += sharing_misses(&all->core[c], true);
		program->false_sharing += sharing_misses(&all->core[c], false);
	}
	for (size_t i = 0; i < sim_region_count(sharing); i++) {
		const sim_region_stats *region = sim_region(sharing, i);
		explain_region *into = explain_result_region(result, region->name);
		if (!into)
			continue;
		into->simulated.true_sharing += sharing_misses(&region->stats, true);
		into->simulated.false_sharing += sharing_misses(&region->stats, false);
	}
	sim_line_stats lines[16];
	size_t n = sim_hot_lines(sharing, lines, 16);
	result->shared_count = 0;
	for (size_t i = 0; i < n && result->shared_count < EXPLAIN_SHARED_LINES; i++) {
		const sim_line_stats *line = &lines[i];
		/* shared: more than one core took part, and lost it to another's write */
		if ((line->cores & (line->cores - 1)) == 0 || line->coherence_true + line->coherence_false == 0)
			continue;
		explain_shared_line *into = &result->shared[result->shared_count++];
		memset(into, 0, sizeof *into);
		into->address = line->address;
		into->bytes = sim_configuration(sharing)->cache[SIM_L1D].line;
		into->true_sharing = line->coherence_true;
		into->false_sharing = line->coherence_false;
		into->invalidations = line->invalidations;
	}
}

static int make_sim_of(sim_config config, sim **plain, plumb_status *status)
{
	config.classify = false;
	config.check = false;
	if (sim_config_validate(&config, status) != 0)
		return -1;
	return sim_new(plain, &config, status);
}

/* The feed's second half, on a thread of its own: the executed code (the
 * block model's counts and strides) takes each batch while this thread's
 * simulators take it too, so that the simulator and the code watch run
 * side by side instead of one after another.  Each sees the same batches
 * in the same order as without the thread: the counts are the same.  The
 * batch is the reader's, lent until the feed
 * asks for the next, so this thread waits for the helper before it
 * returns it (helper_wait).  Without a thread (pthread_create failed) the
 * job is done in place. */
typedef struct helper {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, finished;
	bool started, has_job, quit;
	explain_code *code;
	/* the job: a batch of records, or plumbgrind's entries */
	const trace_record *records;
	size_t n;
	trace_compact compact;
	bool is_compact;
} helper;

/* One batch into one simulator (as sim_feed_reader gives it); walked (if
 * not NULL) gets the run as the simulator left it: settled, when it was
 * handed out unchecked. */
static int feed_one(sim *s, const trace_record *records, size_t n, const trace_compact *compact, trace_compact *walked,
                    plumb_status *status)
{
	if (!compact)
		return sim_access_batch(s, records, n, status);
	trace_compact copy = *compact;   /* each walks its own copy of the run (a walk may settle it) */
	int rc = copy.filtered ? sim_access_filtered(s, &copy, status) : sim_access_compact(s, &copy, status);
	if (walked)
		*walked = copy;
	return rc;
}

static void helper_job(helper *h)
{
	const trace_compact *compact = h->is_compact ? &h->compact : NULL;
	if (compact)
		explain_code_compact(h->code, compact);
	else
		explain_code_batch(h->code, h->records, h->n);
}

static void *helper_loop(void *arg)
{
	helper *h = arg;
	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->has_job && !h->quit)
			pthread_cond_wait(&h->wake, &h->lock);
		if (h->has_job) {
			pthread_mutex_unlock(&h->lock);
			helper_job(h);
			pthread_mutex_lock(&h->lock);
			h->has_job = false;
			pthread_cond_signal(&h->finished);
			continue;
		}
		break;   /* quit, nothing left */
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void helper_start(helper *h)
{
	h->started = false;
	if (pthread_mutex_init(&h->lock, NULL) != 0)
		return;
	if (pthread_cond_init(&h->wake, NULL) != 0) {
		pthread_mutex_destroy(&h->lock);
		return;
	}
	if (pthread_cond_init(&h->finished, NULL) != 0) {
		pthread_cond_destroy(&h->wake);
		pthread_mutex_destroy(&h->lock);
		return;
	}
	if (pthread_create(&h->thread, NULL, helper_loop, h) != 0) {
		pthread_cond_destroy(&h->finished);
		pthread_cond_destroy(&h->wake);
		pthread_mutex_destroy(&h->lock);
		return;
	}
	h->started = true;
}

static void helper_post(helper *h, const trace_record *records, size_t n, const trace_compact *compact)
{
	h->records = records;
	h->n = n;
	h->is_compact = compact != NULL;
	if (compact)
		h->compact = *compact;
	if (!h->started) {
		h->has_job = true;
		return;
	}
	pthread_mutex_lock(&h->lock);
	h->has_job = true;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->lock);
}

/* A batch too small to be worth waking the helper for: two context
 * switches cost more than the code watch's work on it (md5sum of 60 MB:
 * 3600 of 4800 runs of uses under 256 words, cut short by a guarded load's
 * single entry; the handoffs were 0.09 s of the kernel's CPU).  Done in
 * place instead, in the same order: the same counts. */
#define HELPER_MIN_WORDS 2048

static bool helper_worth(const trace_compact *compact, size_t n)
{
	if (!compact)
		return n >= HELPER_MIN_WORDS;
	if (!compact->unchecked)
		return compact->end - compact->words >= HELPER_MIN_WORDS;
	/* a run handed out unchecked ends at its first entry that is not a
	 * good use (trace_compact_settle's checks), somewhere before end: its
	 * first HELPER_MIN_WORDS words tell */
	const uint64_t *w = compact->words, *end = compact->end;
	while (w < end && w - compact->words < HELPER_MIN_WORDS) {
		uint64_t head = w[0];
		uint32_t id = (uint32_t)head;
		size_t data = (size_t)(head >> 32) & 0xff;
		if ((head >> 40) != TRACE_COMPACT_USE_HIGH || id >= compact->definitions || compact->data[id] != data ||
		    (size_t)(end - w) <= data)
			return false;
		w += 1 + data;
	}
	return w - compact->words >= HELPER_MIN_WORDS;
}

/* The job posted, done. */
static void helper_wait(helper *h)
{
	if (!h->started) {
		if (h->has_job)
			helper_job(h);
		h->has_job = false;
	} else {
		pthread_mutex_lock(&h->lock);
		while (h->has_job)
			pthread_cond_wait(&h->finished, &h->lock);
		pthread_mutex_unlock(&h->lock);
	}
}

static void helper_stop(helper *h)
{
	if (!h->started)
		return;
	pthread_mutex_lock(&h->lock);
	h->quit = true;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	pthread_cond_destroy(&h->finished);
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
	h->started = false;
}

/* What explain's feed watches in each batch before the feed's own
 * simulators take it (only the sharing simulator, once made): the first
 * reference of a second thread, which adds the sharing simulator and, with
 * --interleave, puts the threads in lockstep from the next batch on; then
 * the batch to the helper (the executed code) and to the plain simulators
 * here, both at once. */
typedef struct watch {
	const explain_result *result;
	trace_interleaver *interleaver;
	sim_curve *curve;              /* --curve: fed the records (the feed gives records only) */
	sim *own[2];                   /* the plain simulators (this machine's, the other's), walked here */
	size_t own_count;
	helper *helper;
	bool threads, seen, sharing;   /* sharing: the sharing simulator made (the feed's first) */
	uint32_t first_thread;
} watch;

static int watch_threads(sim_feed *feed, const trace_record *batch, size_t n, const trace_compact *compact,
                         plumb_status *status)
{
	watch *w = feed->context;
	if (!w->threads) {
		if (!w->seen) {
			w->first_thread = compact ? compact->thread : batch[0].thread;
			w->seen = true;
		}
		if (compact)
			w->threads = compact->thread != w->first_thread;
		for (size_t i = 0; !compact && !w->threads && i < n; i++)
			w->threads = batch[i].thread != w->first_thread;
		if (w->threads) {
			uint32_t core;
			if (make_sharing(w->result, &feed->sims[feed->count], status) != 0 ||
			    sim_thread_enter(feed->sims[feed->count], w->first_thread, &core, status) != 0)
				return -1;
			feed->count++;
			w->sharing = true;
			feed->interleaver = w->interleaver;
		}
	}
	bool handed = helper_worth(compact, n);
	if (handed)
		helper_post(w->helper, batch, n, compact);
	int rc = 0;
	/* the first simulator's walk settles a run handed out unchecked: the
	 * feed gives the reader that (observer_walks) */
	for (size_t i = 0; i < w->own_count && rc == 0; i++)
		rc = feed_one(w->own[i], batch, n, compact, i == 0 ? &feed->walked : NULL, status);
	if (rc == 0 && w->curve && !compact)
		rc = sim_curve_batch(w->curve, batch, n, status);
	if (handed)
		helper_wait(w->helper);
	else if (compact)
		explain_code_compact(w->helper->code, compact);
	else
		explain_code_batch(w->helper->code, batch, n);
	return rc;
}

static int make_sim(const explain_result *result, sim **plain, char *note, size_t length, plumb_status *status)
{
	sim_config config;
	if (explain_sim_config(result, &config, note, length, status) != 0)
		return -1;
	return make_sim_of(config, plain, status);
}

/* A region's simulated counts: this machine's, or the other machine's. */
static explain_simulated *counts_of(explain_region *region, bool other)
{
	return other ? &region->other_simulated : &region->simulated;
}

/* The simulator's counts per region and for the whole program. */
static int take_sims(const sim *plain, bool other, explain_result *result, plumb_status *status)
{
	bool have_l3 = sim_configuration(plain)->cache[SIM_L3].size > 0;
	const sim_stats *all = sim_statistics(plain);
	explain_simulated *program = counts_of(&result->regions[0], other);
	memset(program, 0, sizeof *program);
	for (uint32_t c = 0; c < all->cores; c++)
		take_core(program, &all->core[c], all->core[c].l3_misses, have_l3);
	for (size_t i = 0; i < sim_region_count(plain); i++) {
		const sim_region_stats *region = sim_region(plain, i);
		explain_region *into = explain_result_region(result, region->name);
		if (!into)
			return plumb_fail(status, ENOMEM, "out of memory (or a region name of %d bytes or more)",
			                  EXPLAIN_NAME_MAX);
		take_core(counts_of(into, other), &region->stats, sim_region_misses(region, SIM_L3), have_l3);
	}
	return 0;
}

int explain_simulate_trace(trace_reader *reader, const explain_options *options, explain_result *result,
                           trace_code_map **code_map, plumb_status *status)
{
	*code_map = NULL;
	sim *plain;
	char usable_note[200];
	if (make_sim(result, &plain, usable_note, sizeof usable_note, status) != 0)
		return -1;
	/* Threads in lockstep (plumb sim --interleave): under Valgrind they take
	 * turns of a scheduling quantum, and lines they share would move between
	 * cores a few times instead of as often as on hardware. */
	trace_interleaver *interleaver = NULL;
	if (options->interleave &&
	    trace_interleaver_new(&interleaver, options->interleave, TRACE_INTERLEAVE_WINDOW, status) != 0) {
		sim_free(plain);
		return -1;
	}
	/* the other machine's caches (--on) */
	sim *other_plain = NULL;
	if (result->have_other && make_sim_of(*result->other_config, &other_plain, status) != 0) {
		trace_interleaver_free(interleaver);
		sim_free(plain);
		return -1;
	}
	/* the executed code per region, for its in-core time (explain_code.c) */
	explain_code *code = NULL;
	if (explain_code_new(&code, sim_configuration(plain)->cache[SIM_L1D].line) != 0)
		snprintf(result->core_error, sizeof result->core_error, "out of memory");
	else if (options->ipc_base <= 0)
		explain_code_prepare(code);   /* LLVM's questions that are not the program's, while it runs */
	/* The miss-ratio curve asked for (--curve LEVEL) of the same references
	 * on the plain simulator's configuration; one that cannot be had is
	 * said in curve_error and the rest goes on. */
	sim_curve *curve = NULL;
	if (options->curve_level) {
		sim_level level;
		plumb_status why = { 0 };
		if (sim_curve_level_parse(options->curve_level, &level, &why) != 0 ||
		    sim_curve_new(&curve, sim_configuration(plain), level, 0, &why) != 0)
			snprintf(result->curve_error, sizeof result->curve_error, "%s", why.message);
	}
	/* While one thread runs there is nothing to interleave: plumbgrind's
	 * entries go to the simulators as they come through the ring, as under
	 * plumb sim; from the first reference of a second thread on, the
	 * interleaver's records, and a classifying simulator of the sharing
	 * (watch_threads).  The other machine's simulator (--on) takes the same. */
	helper help = { .code = code };
	helper_start(&help);
	watch watching = { .result = result, .interleaver = interleaver, .curve = curve,
	                   .own = { plain, other_plain }, .own_count = other_plain ? 2 : 1, .helper = &help };
	sim *sims[1] = { NULL };   /* the sharing simulator, once made (watch_threads) */
	sim_feed feed = { .sims = sims, .count = 0, .observe = watch_threads, .context = &watching,
	                  .records_only = curve != NULL, .observer_walks = true };
	int rc = sim_feed_reader(&feed, reader, status);
	helper_stop(&help);
	sim *sharing = watching.sharing ? sims[0] : NULL;
	for (int level = SIM_L1I; level <= SIM_L3; level++)
		result->cache_bytes[level] = sim_configuration(plain)->cache[level].size;
	if (rc == 0) {
		rc = take_sims(plain, false, result, status);
		if (rc == 0 && other_plain)
			rc = take_sims(other_plain, true, result, status);
		if (sharing)
			take_sharing(sharing, result);
		if (sim_region_mismatches(plain))
			explain_result_note(result, "simulated: %llu region end(s) did not match the innermost open region",
			                    (unsigned long long)sim_region_mismatches(plain));
		if (sim_region_folded(plain))
			explain_result_note(result, "simulated: more threads than simulated cores, so a region also counts the "
			                    "references of the threads that share its core");
		char threads_text[160] = "threads in Valgrind's order (--interleave none)";
		if (options->interleave)
			snprintf(threads_text, sizeof threads_text, "threads in lockstep, %llu reference(s) of each in turn "
			         "(--interleave)%s", (unsigned long long)options->interleave,
			         options->fair_sched ? ", Valgrind's --fair-sched=yes" : "");
		else if (options->fair_sched)
			snprintf(threads_text, sizeof threads_text, "threads in Valgrind's order (--interleave none, "
			         "--fair-sched=yes)");
		snprintf(result->simulate_source, sizeof result->simulate_source,
		         "the %s preset%s, %u core(s), from the region's references under plumbgrind, %s", result->preset,
		         usable_note, sim_configuration(plain)->cores, threads_text);
		if (sim_thread_count(plain) > 1) {
			if (options->interleave)
				explain_result_note(result, "simulated: the threads' references were interleaved %llu of each in "
				                    "turn (--interleave), as threads that run at once share lines; Valgrind ran "
				                    "them by turns", (unsigned long long)options->interleave);
			else
				explain_result_note(result, "simulated: the threads' references in Valgrind's order (--interleave "
				                    "none): each thread ran for a scheduling quantum at a time, so lines they "
				                    "share moved between cores less often than on hardware");
		}
	}
	if (rc == 0 && curve) {
		result->curve = curve;
		curve = NULL;
	}
	sim_curve_free(curve);
	if (rc == 0) {
		/* the files the code ran from: plumbgrind's code map, whole now
		 * that the trace has ended (a map that cannot be had, as after an
		 * exec, leaves the blocks unreadable, which in_core says) */
		trace_code_map *map = NULL;
		plumb_status ignored;
		if (trace_reader_code_map(reader, &map, &ignored) == 0 && map) {
			explain_code_add_segments(code, map);
			*code_map = map;   /* the caller's too: read once (a large program's map takes milliseconds) */
		}
		explain_code_finish(code, result, options->ipc_base <= 0);
	}
	explain_code_free(code);
	trace_interleaver_free(interleaver);
	sim_free(sharing);
	sim_free(plain);
	sim_free(other_plain);
	return rc;
}
