/* Recording verdicts: what a validation run proves about a counter mapping
 * on this CPU goes into the counters layer's verification records, so that
 * `plumb events` can say "verified on this CPU" instead of "unverified".
 *
 * Only counter readings are evidence about a mapping (the simulator and the
 * instrumented counts do not read a PMU), and only a classification from
 * enough cases and runs is worth keeping: one case cannot tell a bias from
 * a slope, and one run cannot show a random spread. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "validate/validate.h"
#include "native.h"

static bool reject(char *why, size_t length, const char *text)
{
	if (why && length) snprintf(why, length, "%s", text);
	return false;
}

bool validate_record_rule(const validate_series *s, const validate_thresholds *t, counter_verdict *verdict,
                          char *why, size_t length)
{
	*verdict = COUNTER_UNVERIFIED;
	if (s->source != VALIDATE_SOURCE_PERF && s->source != VALIDATE_SOURCE_PAPI)
		return reject(why, length, "not a counter source");
	if (!s->supported) return reject(why, length, "unsupported");
	if (s->failed) return reject(why, length, "a run failed");
	const validate_event *event = &s->benchmark->events[s->event_index];
	if (event->companion) return reject(why, length, "companion event (no prediction)");
	size_t min_cases = t && t->min_cases > VALIDATE_RECORD_MIN_CASES ? t->min_cases : VALIDATE_RECORD_MIN_CASES;
	size_t usable = 0;
	for (size_t i = 0; i < s->case_count; i++) {
		const validate_case *c = &s->cases[i];
		if (c->in_domain && isfinite(c->predicted) && c->runs >= VALIDATE_RECORD_MIN_RUNS) usable++;
	}
	if (usable < min_cases || s->verdict.cases_used < min_cases) {
		if (why && length)
			snprintf(why, length, "%zu in-domain cases with %d or more runs, fewer than %zu", usable,
			         VALIDATE_RECORD_MIN_RUNS, min_cases);
		return false;
	}
	switch (s->verdict.cls) {
	case VALIDATE_CLASS_EXACT:
	case VALIDATE_CLASS_ACCURATE:
		*verdict = COUNTER_VERIFIED;
		break;
	case VALIDATE_CLASS_BIAS:
	case VALIDATE_CLASS_MULTIPLICATIVE:
	case VALIDATE_CLASS_RANDOM:
	case VALIDATE_CLASS_UNKNOWN:
		*verdict = COUNTER_CHECKED;
		break;
	}
	if (why && length) why[0] = '\0';
	return true;
}

/* Replaces tabs and newlines, which the record format reserves. */
static void sanitize(char *text)
{
	for (; *text; text++)
		if (*text == '\t' || *text == '\n' || *text == '\r') *text = ' ';
}

void validate_record_fill(const validate_series *s, counter_verdict verdict, const char *cpu_identity,
                          time_t when, counter_verification *record)
{
	memset(record, 0, sizeof *record);
	const validate_event *event = &s->benchmark->events[s->event_index];
	int backend_index = s->source == VALIDATE_SOURCE_PAPI ? 1 : 0;
	const char *backend = backend_index ? "papi" : "perf";
	const char *name = validate_native_event_name(event, backend_index);
	snprintf(record->event, sizeof record->event, "%s", event->name);
	snprintf(record->cpu_identity, sizeof record->cpu_identity, "%s", cpu_identity);
	snprintf(record->native, sizeof record->native, "%s", name ? name : "");
	record->verdict = verdict;
	snprintf(record->backend, sizeof record->backend, "%s", backend);
	snprintf(record->encoding, sizeof record->encoding, "%s", counter_event_encoding(backend, name));
	snprintf(record->cls, sizeof record->cls, "%s", validate_class_name(s->verdict.cls));
	struct tm utc;
	if (gmtime_r(&when, &utc))
		strftime(record->date, sizeof record->date, "%Y-%m-%dT%H:%M:%SZ", &utc);
	uint64_t smallest = 0, largest = 0;
	size_t runs = 0;
	for (size_t i = 0; i < s->case_count; i++) {
		const validate_case *c = &s->cases[i];
		if (!c->in_domain || c->runs == 0) continue;
		if (!smallest || c->size < smallest) smallest = c->size;
		if (c->size > largest) largest = c->size;
		if (!runs || c->runs < runs) runs = c->runs;
	}
	const validate_verdict *v = &s->verdict;
	snprintf(record->evidence, sizeof record->evidence,
	         "plumb validate %s: %zu cases, sizes %llu..%llu, >=%zu runs each, max |diff| %.3g%%, "
	         "a=%.4g b=%.6g R2=%.6g%s", s->benchmark->name, v->cases_used, (unsigned long long)smallest,
	         (unsigned long long)largest, runs, v->max_abs_difference * 100, v->a, v->b, v->r2,
	         s->multiplexed_runs ? ", some runs multiplexed (scaled)" : "");
	sanitize(record->evidence);
}

int validate_record_results(const validate_results *results, const validate_thresholds *t, const char *path,
                            const char *cpu_identity, time_t when, size_t *recorded, plumb_status *status)
{
	*recorded = 0;
	/* The last record for a mapping decides its state.  One event can be
	 * validated by several benchmarks in a run (minor-faults by four); the
	 * "checked" ones are written after the "verified" ones, so a mapping is
	 * trusted only when no benchmark of the run found it wanting. */
	const counter_verdict passes[2] = { COUNTER_VERIFIED, COUNTER_CHECKED };
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < results->series_count; i++) {
			const validate_series *s = &results->series[i];
			counter_verdict verdict;
			if (!validate_record_rule(s, t, &verdict, NULL, 0) || verdict != passes[pass]) continue;
			counter_verification record;
			validate_record_fill(s, verdict, cpu_identity, when, &record);
			if (!record.native[0]) continue;
			if (counter_verification_append(path, &record, status) != 0) return -1;
			(*recorded)++;
		}
	}
	return 0;
}
