/* The synthetic source (src/validate/validate.h): counts made from the
 * prediction with one injected error, so the classifier can be checked on
 * the errors hardware makes even where no counter works.  Deterministic:
 * splitmix64 seeded from the seed, the suite's stream and the case size,
 * so a case's values do not depend on which other cases were run. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/parse.h"
#include "validate/validate.h"

const char *validate_synthetic_kind_name(validate_synthetic_kind kind)
{
	switch (kind) {
	case VALIDATE_SYNTHETIC_EXACT: return "exact";
	case VALIDATE_SYNTHETIC_BIAS: return "bias";
	case VALIDATE_SYNTHETIC_MULTIPLICATIVE: return "multiplicative";
	case VALIDATE_SYNTHETIC_RANDOM: return "random";
	case VALIDATE_SYNTHETIC_UNKNOWN: return "unknown";
	}
	return "?";
}

validate_class validate_synthetic_expected_class(validate_synthetic_kind kind)
{
	switch (kind) {
	case VALIDATE_SYNTHETIC_EXACT: return VALIDATE_CLASS_EXACT;
	case VALIDATE_SYNTHETIC_BIAS: return VALIDATE_CLASS_BIAS;
	case VALIDATE_SYNTHETIC_MULTIPLICATIVE: return VALIDATE_CLASS_MULTIPLICATIVE;
	case VALIDATE_SYNTHETIC_RANDOM: return VALIDATE_CLASS_RANDOM;
	case VALIDATE_SYNTHETIC_UNKNOWN: return VALIDATE_CLASS_UNKNOWN;
	}
	return VALIDATE_CLASS_UNKNOWN;
}

int validate_synthetic_parse(const char *text, validate_synthetic *out, plumb_status *status)
{
	memset(out, 0, sizeof *out);
	out->magnitude = NAN;
	out->seed = 1;
	const char *equals = strchr(text, '=');
	size_t length = equals ? (size_t)(equals - text) : strlen(text);
	static const validate_synthetic_kind kinds[] = { VALIDATE_SYNTHETIC_EXACT, VALIDATE_SYNTHETIC_BIAS,
	                                                 VALIDATE_SYNTHETIC_MULTIPLICATIVE, VALIDATE_SYNTHETIC_RANDOM,
	                                                 VALIDATE_SYNTHETIC_UNKNOWN };
	bool found = false;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		const char *name = validate_synthetic_kind_name(kinds[i]);
		if (strlen(name) == length && !strncasecmp(text, name, length)) {
			out->kind = kinds[i];
			found = true;
		}
	}
	if (!found)
		return plumb_fail(status, EINVAL, "synthetic error '%.*s' is not exact, bias, multiplicative, random or "
		                  "unknown", (int)length, text);
	if (!equals) return 0;
	if (out->kind == VALIDATE_SYNTHETIC_EXACT)
		return plumb_fail(status, EINVAL, "synthetic:exact takes no magnitude");
	/* Bounds that keep every kind what it says it is. */
	double lo = 0, hi = 1e12;
	const char *what = "events";
	if (out->kind == VALIDATE_SYNTHETIC_MULTIPLICATIVE) {
		lo = 0;
		hi = 1000;
		what = "a factor";
	} else if (out->kind == VALIDATE_SYNTHETIC_RANDOM) {
		lo = 0.01;
		hi = 0.5;
		what = "a fraction of the count";
	}
	plumb_status why;
	if (parse_double(equals + 1, lo, hi, &out->magnitude, &why) != 0)
		return plumb_fail(status, EINVAL, "synthetic:%s=VALUE (%s): %s", validate_synthetic_kind_name(out->kind), what,
		                  why.message);
	return 0;
}

static uint64_t splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *state)
{
	return ((double)(splitmix(state) >> 11) + 0.5) / 9007199254740992.0;
}

/* Box-Muller: one standard normal deviate. */
static double normal(uint64_t *state)
{
	double u = uniform(state), v = uniform(state);
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void validate_synthetic_fill(const validate_synthetic *synthetic, uint64_t stream, validate_case *cases,
                             size_t count, size_t runs, char *detail, size_t detail_length)
{
	/* The defaults depend on the suite: its smallest and median prediction. */
	double smallest = INFINITY, median = NAN;
	double *sorted = calloc(count ? count : 1, sizeof *sorted);
	size_t finite = 0;
	for (size_t i = 0; i < count; i++)
		if (isfinite(cases[i].predicted) && cases[i].predicted > 0) {
			if (cases[i].predicted < smallest) smallest = cases[i].predicted;
			if (sorted) sorted[finite] = cases[i].predicted;
			finite++;
		}
	if (sorted && finite) {
		qsort(sorted, finite, sizeof *sorted, compare_double);
		median = sorted[finite / 2];
	}
	free(sorted);
	double magnitude = synthetic->magnitude;
	switch (synthetic->kind) {
	case VALIDATE_SYNTHETIC_EXACT: break;
	case VALIDATE_SYNTHETIC_BIAS:
		if (isnan(magnitude)) magnitude = isfinite(smallest) && smallest / 4 > 3 ? smallest / 4 : 3;
		break;
	case VALIDATE_SYNTHETIC_MULTIPLICATIVE:
		if (isnan(magnitude)) magnitude = 1.25;
		break;
	case VALIDATE_SYNTHETIC_RANDOM:
		if (isnan(magnitude)) magnitude = 0.3;
		break;
	case VALIDATE_SYNTHETIC_UNKNOWN:
		if (isnan(magnitude)) magnitude = isfinite(median) ? median : 1000;
		break;
	}
	if (detail && detail_length) {
		switch (synthetic->kind) {
		case VALIDATE_SYNTHETIC_EXACT:
			snprintf(detail, detail_length, "exact, seed %llu", (unsigned long long)synthetic->seed);
			break;
		case VALIDATE_SYNTHETIC_BIAS:
			snprintf(detail, detail_length, "bias +%g events, seed %llu", magnitude,
			         (unsigned long long)synthetic->seed);
			break;
		case VALIDATE_SYNTHETIC_MULTIPLICATIVE:
			snprintf(detail, detail_length, "multiplicative x%g, seed %llu", magnitude,
			         (unsigned long long)synthetic->seed);
			break;
		case VALIDATE_SYNTHETIC_RANDOM:
			snprintf(detail, detail_length, "random, half the runs off by %g-%g, seed %llu", magnitude,
			         2 * magnitude, (unsigned long long)synthetic->seed);
			break;
		case VALIDATE_SYNTHETIC_UNKNOWN:
			snprintf(detail, detail_length, "unknown, flat at %g events, seed %llu", magnitude,
			         (unsigned long long)synthetic->seed);
			break;
		}
	}
	for (size_t i = 0; i < count; i++) {
		validate_case *c = &cases[i];
		c->runs = 0;
		if (!c->values || !isfinite(c->predicted)) continue;
		uint64_t state = synthetic->seed * 0x9e3779b97f4a7c15ull ^ stream * 0xc2b2ae3d27d4eb4full ^ c->size;
		(void)splitmix(&state);
		for (size_t r = 0; r < runs; r++) {
			double p = c->predicted, value = p;
			switch (synthetic->kind) {
			case VALIDATE_SYNTHETIC_EXACT: break;
			case VALIDATE_SYNTHETIC_BIAS: value = p + magnitude; break;
			case VALIDATE_SYNTHETIC_MULTIPLICATIVE: value = p * magnitude; break;
			case VALIDATE_SYNTHETIC_RANDOM:
				/* Every other run (1, 3, 5, ...) far off, alternately up and down. */
				if (r % 2 == 1) {
					double off = magnitude * (1 + uniform(&state));
					value = p * (1 + (r % 4 == 1 ? off : -off));
				}
				break;
			case VALIDATE_SYNTHETIC_UNKNOWN: value = magnitude; break;
			}
			if (synthetic->kind != VALIDATE_SYNTHETIC_EXACT) value += normal(&state) * sqrt(value > 0 ? value : 0) / 2;
			value = round(value);
			c->values[c->runs++] = value < 0 ? 0 : value;
		}
	}
}
