/* Counters: one interface to count events around a region of code, with
 * several backends underneath (perf_event, PAPI, a simulator, none).
 *
 * The contract every backend keeps: an event that cannot be counted is
 * COUNTER_UNSUPPORTED with a one-line reason (errno, perf_event_paranoid,
 * missing PMU, PAPI error text), never a 0.  A value that was counted only
 * part of the time (multiplexed) is scaled by time_enabled/time_running and
 * says so (COUNTER_MULTIPLEXED).  One unsupported event never stops the
 * others in the same set from being counted.
 *
 *   counter_set *set;
 *   const char *events[] = { "page-faults", "PAPI_L1_DCM" };
 *   counter_set_open(&set, "perf", events, 2, NULL, &status);
 *   counter_start(set, &status);
 *   ... region ...
 *   counter_stop(set, &status);
 *   counter_value values[2];
 *   counter_read(set, values, &status);   // values[1].state == COUNTER_UNSUPPORTED here
 *   counter_close(set);
 *
 * A set counts the thread that opened it (or options.pid), wherever it runs.
 * After fork() the child's copy of a set still counts the parent: open new
 * sets in the child.  (The region markers do this themselves.)
 *
 * Event names accepted (docs/counters.md has the full list):
 *   perf names      cycles, instructions, branch-misses, page-faults, minor-faults,
 *                   task-clock, context-switches, L1-dcache-load-misses, dTLB-store-misses, ...
 *   raw             r<hex config>, e.g. r0076 (PERF_TYPE_RAW)
 *   PAPI presets    PAPI_L1_DCM, PAPI_TLB_DM, ... (through the catalogue below on perf;
 *                   natively on PAPI)
 *   native          pmu::EVENT[:UMASK], e.g. amd64_fam19h_zen4::RETIRED_INSTRUCTIONS or
 *                   perf::PAGE-FAULTS (encoded by libpfm4 on perf; natively on PAPI)
 */
#ifndef PLUMB_COUNTERS_H
#define PLUMB_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include "core/status.h"

#define COUNTER_REASON_MAX 200
#define COUNTER_MAX_EVENTS 64

/* ---------------------------------------------------------------- values */

typedef enum counter_state {
	COUNTER_OK = 0,          /* counted the whole time the set was enabled */
	COUNTER_MULTIPLEXED,     /* counted part of the time; value = raw * enabled / running */
	COUNTER_UNSUPPORTED,     /* cannot be counted here; reason says why */
	COUNTER_NOT_COUNTED      /* opened, but never ran (time_running == 0, or never started) */
} counter_state;

typedef struct counter_value {
	counter_state state;
	uint64_t raw;            /* as the backend reported it */
	double value;            /* raw, scaled when multiplexed; NaN unless OK or MULTIPLEXED */
	uint64_t time_enabled;   /* ns the event was enabled (0 if the backend cannot tell) */
	uint64_t time_running;   /* ns it was really on a counter */
	char reason[COUNTER_REASON_MAX];  /* why unsupported / not counted / how scaled */
} counter_value;

/* "ok", "multiplexed", "unsupported", "not-counted". */
const char *counter_state_name(counter_state state);
/* Sets state and value from raw, time_enabled and time_running:
 * running == enabled -> OK; 0 < running < enabled -> MULTIPLEXED (scaled, reason
 * says the fraction); running == 0 with enabled > 0 -> NOT_COUNTED.
 * enabled == running == 0 means the backend cannot tell: OK, raw as is. */
void counter_value_scale(counter_value *value);
/* Marks a value unsupported with a formatted reason (value NaN, raw 0). */
void counter_value_unsupported(counter_value *value, const char *format, ...)
	__attribute__((format(printf, 2, 3)));
/* True when the value carries a number (OK or MULTIPLEXED). */
bool counter_value_usable(const counter_value *value);

/* --------------------------------------------------------------- options */

typedef enum counter_domain {
	COUNTER_DOMAIN_USER = 0, /* exclude_kernel + exclude_hv: works at perf_event_paranoid 2 */
	COUNTER_DOMAIN_ALL       /* user + kernel: needs paranoid <= 1 or CAP_PERFMON */
} counter_domain;

typedef struct counter_options {
	pid_t pid;               /* 0: the calling thread; > 0: that thread/process */
	bool inherit;            /* also count threads and children created later */
	bool enable_on_exec;     /* perf: stay disabled until pid's next exec (plumb stat) */
	counter_domain domain;
	bool no_group;           /* open each event alone instead of one group */
	bool no_rdpmc;           /* never read with rdpmc, always with read() */
	void *backend_context;   /* handed to the backend's open (sim: its simulator) */
} counter_options;

/* ------------------------------------------------------- the backend slot */

/* A backend is a table of functions.  The built-in ones are below; the
 * simulator supplies its own (answering the same event names by simulating a
 * region's address stream) and passes it to counter_set_open_backend with its
 * simulator instance in counter_options.backend_context.
 *
 * Rules for implementers:
 * - open() receives the event names exactly as the user typed them.  It must
 *   not fail because one event is unknown or uncountable: it marks opened[i]
 *   COUNTER_UNSUPPORTED with a reason and opens the rest.  It returns -1 only
 *   when the backend as a whole cannot work (e.g. "built without PAPI").
 *   PAPI preset names can be translated with counter_catalogue_find().
 * - start() zeroes the counts and enables counting; stop() disables; read()
 *   returns the counts since start() in values[0..n-1] (state, raw, value,
 *   times), and works both while running and after stop().  Unsupported
 *   events must come back COUNTER_UNSUPPORTED with the reason from open().
 * - list() names the events the backend knows, without opening them.
 * - read_method() (may be NULL) says how the last read was done ("read()",
 *   "rdpmc", "PAPI_read", "simulated"). */
typedef void (*counter_list_fn)(void *argument, const char *name, const char *kind,
                                const char *description);

typedef struct counter_backend {
	const char *name;
	const char *description;
	int (*open)(void **instance, const char *const *events, size_t n,
	            const counter_options *options, counter_value *opened, plumb_status *status);
	int (*start)(void *instance, plumb_status *status);
	int (*stop)(void *instance, plumb_status *status);
	int (*read)(void *instance, counter_value *values, plumb_status *status);
	void (*close)(void *instance);
	int (*list)(void *backend_context, counter_list_fn emit, void *argument, plumb_status *status);
	const char *(*read_method)(void *instance);
	/* Optional (NULL: cannot): stop and restart counting without zeroing,
	 * from a signal handler, so async-signal-safe; 0 or -1, no status. */
	int (*pause)(void *instance);
	int (*resume)(void *instance);
} counter_backend;

extern const counter_backend counter_backend_perf;   /* perf_event_open(2) */
extern const counter_backend counter_backend_papi;   /* PAPI (unsupported when built without it) */
extern const counter_backend counter_backend_none;   /* every event unsupported: a dry run */

/* "perf", "papi" or "none"; NULL (and status) for anything else.  The sim
 * backend lives in the simulator and is passed by pointer. */
const counter_backend *counter_backend_find(const char *name, plumb_status *status);

/* Whether a backend can count at all here, found out the way a user's run
 * would: it opens a software page-fault counter on the backend (a real
 * perf_event_open; for PAPI, PAPI's own component status).  0 when it can;
 * -1 and the reason (one line) when it cannot. */
int counter_backend_usable(const char *name, plumb_status *status);

/* ------------------------------------------------------------- event sets */

typedef struct counter_set counter_set;

/* Opens n (1..COUNTER_MAX_EVENTS) events on the named backend.  options may
 * be NULL (the calling thread, user domain, grouped, rdpmc when possible).
 * Fails only for bad input or a backend that cannot work at all. */
int counter_set_open(counter_set **out, const char *backend, const char *const *events, size_t n,
                     const counter_options *options, plumb_status *status);
int counter_set_open_backend(counter_set **out, const counter_backend *backend,
                             const char *const *events, size_t n,
                             const counter_options *options, plumb_status *status);
/* Splits "a,b,c" into names (no empty names, at most COUNTER_MAX_EVENTS).
 * The names point into storage, which the caller provides (at least
 * strlen(list) + 1 bytes). */
int counter_event_list_parse(const char *list, char *storage, size_t storage_size,
                             const char **names, size_t *n, plumb_status *status);

int counter_start(counter_set *set, plumb_status *status);
int counter_stop(counter_set *set, plumb_status *status);
/* values has counter_set_size() entries. */
int counter_read(counter_set *set, counter_value *values, plumb_status *status);
void counter_close(counter_set *set);
/* Stops counting and starts it again without zeroing the counts, from a
 * signal handler (async-signal-safe: ioctl only, no status).  A perturbation
 * experiment keeps its halt handler out of the counts this way.  -1 when the
 * backend cannot (PAPI, none, sim) or the set is NULL; 0 otherwise. */
int counter_pause(counter_set *set);
int counter_resume(counter_set *set);

size_t counter_set_size(const counter_set *set);
const char *counter_set_event(const counter_set *set, size_t index);
const char *counter_set_backend_name(const counter_set *set);
/* The state each event got at open (unsupported with its reason, or OK). */
const counter_value *counter_set_opened(const counter_set *set, size_t index);
/* How the last counter_read() read the counters ("read()", "rdpmc", ...). */
const char *counter_set_read_method(const counter_set *set);
/* The backend's instance, for backend-specific calls (e.g. the simulator feeding accesses). */
void *counter_set_backend_instance(const counter_set *set);

/* ------------------------------------------------------------ the machine */

/* What this machine allows, for reasons and reports. */
typedef struct counter_environment {
	int perf_event_paranoid;     /* -100 when unreadable */
	bool cpu_pmu_present;        /* /sys/bus/event_source/devices/cpu* exists */
	bool privileged;             /* CAP_PERFMON or CAP_SYS_ADMIN (root) */
	char cpu_identity[64];       /* "AuthenticAMD:25:17" (vendor:family:model) */
} counter_environment;
void counter_environment_read(counter_environment *out);
/* A reason for errno err from perf_event_open of an event, in this environment. */
void counter_explain_errno(int err, const counter_environment *environment,
                           char *reason, size_t length);

/* -------------------------------------------------------------- catalogue */

/* The event tables the catalogue has candidates from: one per core
 * microarchitecture, named as libpfm4 4.13 names its PMU.  A CPU maps to
 * one of them by vendor, family and model (counter_cpu_native_table); a CPU
 * that maps to none gets no native suggestion, only "no catalogue for this
 * CPU", never another vendor's events. */
typedef enum counter_vendor {
	COUNTER_VENDOR_AMD_ZEN4 = 0,          /* amd64_fam19h_zen4 */
	COUNTER_VENDOR_INTEL_ICELAKE,         /* icl (Sunny Cove cores; Ice Lake servers as icx) */
	COUNTER_VENDOR_INTEL_SAPPHIRERAPIDS,  /* spr (Golden Cove cores: Sapphire and Emerald Rapids) */
	COUNTER_VENDOR_COUNT
} counter_vendor;

/* One event of the seeds (a PAPI preset) and how to reach it elsewhere.
 * perf_generic is the perf event with the same meaning, NULL when perf has
 * none; papi_native is the name to give PAPI when its preset is not
 * available; native[] are candidate raw events per event table, in libpfm4
 * syntax without the PMU prefix ("L1D:REPLACEMENT"): the prefix is the PMU
 * of the CPU asked about (counter_catalogue_native), since one table serves
 * several PMUs of the same cores (icl and icx).  NULL with a native_reason
 * when that table has no matching event.  Every native mapping is
 * "unverified" until a validation run on that CPU has checked it: see
 * counter_verification below. */
typedef struct counter_catalogue_entry {
	const char *preset;
	const char *description;
	const char *perf_generic;
	const char *relation;            /* how perf_generic relates: "same", "loads only", ... */
	const char *papi_native;
	const char *native[COUNTER_VENDOR_COUNT];
	const char *native_reason;       /* why a table has no candidate, or NULL */
} counter_catalogue_entry;

const counter_catalogue_entry *counter_catalogue(size_t *n);
/* Case-sensitive lookup of "PAPI_L1_DCM"; NULL when not catalogued. */
const counter_catalogue_entry *counter_catalogue_find(const char *preset);
const char *counter_vendor_name(counter_vendor vendor);   /* the table's libpfm4 PMU name */
/* The table for a cpu_identity string ("GenuineIntel:6:207"); COUNTER_VENDOR_COUNT when none matches. */
counter_vendor counter_vendor_of(const char *cpu_identity);

/* What the catalogue knows of one CPU: its event table, the libpfm4 PMU
 * that names it, the CPU in words, and a caveat (libpfm4 4.13 does not
 * detect Emerald Rapids by itself).  known is false for a CPU the
 * catalogue has no table for; description then says which CPU it is. */
typedef struct counter_cpu_table {
	bool known;
	counter_vendor table;
	const char *pmu;            /* "spr", "icx", ... */
	char description[96];       /* "Intel Emerald Rapids (family 6, model 207)" */
	const char *caveat;         /* NULL, or a sentence */
} counter_cpu_table;
void counter_cpu_native_table(const char *cpu_identity, counter_cpu_table *out);
/* This CPU's identity, vendor:family:model from CPUID ("unknown" off x86). */
void counter_cpu_identity(char *out, size_t length);
/* The candidate native for entry on the CPU cpu_identity names, as
 * "PMU::EVENT:UMASK" in buffer; NULL with reason filled ("no native-event
 * catalogue for this CPU (...)", or the table's own reason) when there is
 * none. */
const char *counter_catalogue_native(const counter_catalogue_entry *entry, const char *cpu_identity, char *buffer,
                                     size_t length, char *reason, size_t reason_length);

/* Software events (minor-faults, ...) the validation suite checks: the same
 * entry shape (preset holds the perf name), natives all NULL.  Kept apart from
 * counter_catalogue() because they are not PAPI presets.  Their counts come
 * from the kernel, so a validation run on any machine can verify them. */
const counter_catalogue_entry *counter_catalogue_software(size_t *n);

/* Verification records: a validation run appends one line per (event, CPU,
 * name) it checked, as tab-separated text:
 *   event<TAB>cpu_identity<TAB>native<TAB>verdict<TAB>evidence
 *        [<TAB>backend<TAB>encoding<TAB>class<TAB>date]
 * native is the name the event was counted by (a perf generic or software
 * name, r<hex>, a libpfm4 native, a PAPI preset or native).  verdict is
 * "verified" (the suite classified exact or accurate), "checked" (classified
 * from enough cases, but bias, multiplicative, random or unknown: not
 * trusted) or "rejected" (a person says the mapping is wrong); evidence is
 * free text.  The four last fields are optional (older files have five).
 * Lines starting with # are comments.  The last record for a triple wins.
 * No record means "unverified". */
typedef enum counter_verdict {
	COUNTER_UNVERIFIED = 0, COUNTER_VERIFIED, COUNTER_REJECTED, COUNTER_CHECKED
} counter_verdict;

typedef struct counter_verification {
	char event[64];
	char cpu_identity[64];
	char native[256];
	counter_verdict verdict;
	char evidence[256];
	char backend[16];              /* "perf", "papi"; empty in five-field records */
	char encoding[24];             /* counter_event_encoding(); empty if unknown */
	char cls[24];                  /* the validation class ("exact", "bias", ...) */
	char date[32];                 /* UTC, ISO 8601 ("2026-11-22T01:50:00Z") */
} counter_verification;

const char *counter_verdict_name(counter_verdict verdict);
/* Parses records from text (length bytes; origin names it in errors) into a
 * malloc'ed array (*records, *n).  A malformed line fails with its number. */
int counter_verification_parse(const char *text, size_t length, const char *origin,
                               counter_verification **records, size_t *n, plumb_status *status);
/* Loads path into a malloc'ed array (*records, *n).  A missing file is no records. */
int counter_verification_load(const char *path, counter_verification **records, size_t *n,
                              plumb_status *status);
counter_verdict counter_verification_lookup(const counter_verification *records, size_t n,
                                            const char *event, const char *cpu_identity,
                                            const char *native);
/* The record that decides a triple (the last one), or NULL: unverified. */
const counter_verification *counter_verification_find(const counter_verification *records, size_t n,
                                                      const char *event, const char *cpu_identity,
                                                      const char *native);
/* Human text for a triple's state: "unverified", "verified on this CPU
 * (2026-11-22, exact)", "checked: bias (2026-11-22), not trusted",
 * "rejected (...)".  record may be NULL. */
void counter_verification_describe(const counter_verification *record, char *out, size_t length);
/* Checks that path is missing, empty, or a verification file (every line a
 * record or a comment): text is never appended to anything else.  One line
 * of error naming the file otherwise. */
int counter_verification_check(const char *path, plumb_status *status);
/* Appends one line with a single write(2) on an O_APPEND descriptor under
 * flock, so concurrent runs never interleave or tear lines.  Creates the
 * file (with a comment header) and its parent directory if missing; refuses
 * (touching nothing) a file that is not a verification file. */
int counter_verification_append(const char *path, const counter_verification *record,
                                plumb_status *status);
/* The records file the user asked for through the environment:
 * $PLUMB_VERIFICATION if set and not empty.  Fails (ENOENT) when it is not
 * set: records are kept only where the user said (this or --verification),
 * never in a file of plumb's choosing. */
int counter_verification_default_path(char *out, size_t length, plumb_status *status);
/* How a name is encoded for a backend: "perf-generic" (hardware or cache
 * generic event), "perf-software", "raw" (r<hex>), "native" (libpfm4 or
 * PAPI native), "papi-preset", or "unknown" when the name does not resolve. */
const char *counter_event_encoding(const char *backend, const char *name);
/* Fails (EINVAL, one line naming it) for a name no backend knows: not a
 * perf generic, software or raw name, not a PAPI preset, not a libpfm4
 * native.  A known event that cannot be counted here passes: opening it
 * gives unsupported with the reason, as under plumb stat. */
int counter_event_check_known(const char *name, plumb_status *status);

/* ------------------------------------------------------------ calibration */

/* Counts an empty region `iterations` times per event: the interface's bias
 * in events (what start/stop/read themselves add) and its cost in time. */
typedef struct counter_bias {
	counter_state state;           /* UNSUPPORTED: reason says why, statistics NaN */
	char reason[COUNTER_REASON_MAX];
	double mean, stddev, min, max; /* events counted in an empty region */
} counter_bias;

typedef struct counter_calibration {
	size_t iterations;
	size_t n;                      /* events */
	counter_bias bias[COUNTER_MAX_EVENTS];
	/* Median cost of one call, the timer's own cost subtracted.  NaN when it
	 * cannot be known: cost_state is then UNSUPPORTED and cost_reason says why
	 * (no event of the set opened, so the calls did nothing worth timing), or
	 * the one value is NaN because the call cost no more than the timer. */
	double start_ns, stop_ns, read_ns;
	counter_state cost_state;
	char cost_reason[COUNTER_REASON_MAX];
	char read_method[16];          /* how the reads were done */
} counter_calibration;

int counter_calibrate(const char *backend, const char *const *events, size_t n,
                      const counter_options *options, size_t iterations,
                      counter_calibration *out, plumb_status *status);

/* --------------------------------------------------------------- sampling */

/* One overflow of a sampled event.  Fields the backend could not fill are 0. */
typedef struct counter_sample {
	uint64_t ip;         /* user instruction pointer at the overflow */
	uint32_t pid, tid;
	uint64_t time_ns;    /* perf clock */
	uint64_t period;     /* events since the previous sample */
	uint64_t index;      /* 1, 2, 3, ... per sampler */
} counter_sample;

/* Runs in a signal handler in the counted thread: async-signal-safe work only
 * (no malloc, no stdio).  This is where a perturbation experiment halts the
 * program every `period` events. */
typedef void (*counter_sample_fn)(const counter_sample *sample, void *context);

/* The sampler's overflow signal when options give none (a real-time one:
 * they queue).  plumb perturb's exec guard blocks this one across an exec. */
#define COUNTER_SAMPLER_SIGNAL_DEFAULT (SIGRTMIN + 3)

typedef struct counter_sampler_options {
	const char *event;       /* any perf event name: task-clock, page-faults, cycles, ... */
	uint64_t period;         /* events (ns for task-clock/cpu-clock) between callbacks */
	counter_sample_fn callback;
	void *context;
	int signal_number;       /* 0: COUNTER_SAMPLER_SIGNAL_DEFAULT */
	counter_domain domain;
	size_t ring_pages;       /* data pages of the ring buffer, a power of two; 0: 8 */
} counter_sampler_options;

typedef struct counter_sampler counter_sampler;

/* Opens a sampler on the calling thread.  Overflows are delivered as a signal
 * to this very thread (F_SETOWN_EX F_OWNER_TID, F_SETSIG), whose handler
 * drains the mmap ring buffer's sample records and calls the callback once
 * per record. */
int counter_sampler_open(counter_sampler **out, const counter_sampler_options *options,
                         plumb_status *status);
int counter_sampler_start(counter_sampler *sampler, plumb_status *status);
int counter_sampler_stop(counter_sampler *sampler, plumb_status *status);
/* Callbacks made so far, and records the kernel reported lost. */
uint64_t counter_sampler_callbacks(const counter_sampler *sampler);
uint64_t counter_sampler_lost(const counter_sampler *sampler);
/* Stops and restarts the sampled event from a signal handler (the callback
 * included), async-signal-safe.  The kernel keeps what was left of the
 * period, so the time or events between pause and resume do not count
 * toward the next overflow: a halt handler keeps its own time out of the
 * sampling clock this way.  0, or -1 with errno. */
int counter_sampler_pause(counter_sampler *sampler);
int counter_sampler_resume(counter_sampler *sampler);
void counter_sampler_close(counter_sampler *sampler);

/* ------------------------------------------------------- plumb events */

/* Opens one event alone, starts, stops and reads it: true when it counts
 * here ("works" in state); else state is the counter_state word
 * ("unsupported", ...) and reason says why. */
bool counter_event_probe(const char *backend, const char *name, char *state, size_t state_length, char *reason,
                         size_t reason_length);

typedef struct counter_events_request {
	const char *backend;            /* "perf" or "papi"; NULL: both */
	bool natives;                   /* perf: the PMU's native events too (libpfm4) */
	bool probe;                     /* open each event (counter_event_probe) */
	bool catalogue_only;            /* leave out the table of every event */
	const char *verification_path;  /* NULL: counter_verification_default_path */
} counter_events_request;

/* plumb events's report: meta (CPU, perf_event_paranoid, PMU), the table
 * "events" (each backend's events and whether each works here, with a note
 * per backend), "catalogue" (the presets, their perf, PAPI and native
 * names, and each mapping's verification on this CPU) and "verification"
 * (the records for this CPU).  A verification file that cannot be read
 * leaves every mapping unverified, with a note, and the reason in warning
 * ("" otherwise). */
struct output_report;
struct output_report *counter_events_report(const counter_events_request *request, char *warning,
                                            size_t warning_length);

#endif
