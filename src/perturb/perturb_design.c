/* Experiment designs: Watson's (2004) Table 2.1 (vary the halt time t at two
 * intervals f) and Table 2.2 (vary f at two halt times), scaled so that
 * seconds become, e.g., milliseconds with every ratio kept; or any lists of
 * intervals and halt times. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/parse.h"
#include "perturb/perturb.h"

int perturb_parse_seconds(const char *text, double *out, plumb_status *status)
{
	if (!text || !*text)
		return plumb_fail(status, EINVAL, "an empty duration");
	char *end;
	errno = 0;
	double value = strtod(text, &end);
	if (end == text || errno)
		return plumb_fail(status, EINVAL, "'%s' is not a duration (seconds, a/b, or with s/ms/us)", text);
	if (*end == '/') {
		const char *denominator_text = end + 1;
		double denominator = strtod(denominator_text, &end);
		if (end == denominator_text || !(denominator > 0))
			return plumb_fail(status, EINVAL, "'%s' is not a duration (seconds, a/b, or with s/ms/us)", text);
		value /= denominator;
	}
	double unit = 1;
	if (!strcmp(end, "ms"))
		unit = 1e-3;
	else if (!strcmp(end, "us"))
		unit = 1e-6;
	else if (!strcmp(end, "ns"))
		unit = 1e-9;
	else if (*end && strcmp(end, "s"))
		return plumb_fail(status, EINVAL, "'%s' is not a duration (seconds, a/b, or with s/ms/us)", text);
	value *= unit;
	if (!isfinite(value) || value < 0 || value > 1e6)
		return plumb_fail(status, EINVAL, "duration '%s' out of range (0 to 10^6 s)", text);
	*out = value;
	return 0;
}

static void config_name(perturb_config *c)
{
	if (c->baseline)
		snprintf(c->name, sizeof c->name, "baseline");
	else
		snprintf(c->name, sizeof c->name, "f=%gs t=%gs", c->interval, c->halt);
}

static void add_baseline(perturb_design *d)
{
	memset(&d->configs[0], 0, sizeof d->configs[0]);
	d->configs[0].baseline = true;
	config_name(&d->configs[0]);
	d->n = 1;
}

static int add_config(perturb_design *d, double interval, double halt, plumb_status *status)
{
	for (size_t i = 1; i < d->n; i++)
		if (fabs(d->configs[i].interval - interval) <= 1e-12 * interval &&
		    fabs(d->configs[i].halt - halt) <= 1e-12 * (halt + 1e-300))
			return 0;
	if (d->n >= PERTURB_MAX_CONFIGS)
		return plumb_fail(status, E2BIG, "more than %d configurations", PERTURB_MAX_CONFIGS - 1);
	perturb_config *c = &d->configs[d->n++];
	memset(c, 0, sizeof *c);
	c->interval = interval;
	c->halt = halt;
	config_name(c);
	return 0;
}

static int check_scale(double scale, plumb_status *status)
{
	if (!(scale > 0) || !(scale <= 1000))
		return plumb_fail(status, EINVAL, "the scale must be above 0 and at most 1000");
	return 0;
}

int perturb_design_builtin(const char *name, double scale, perturb_design *out, plumb_status *status)
{
	if (check_scale(scale, status) != 0)
		return -1;
	memset(out, 0, sizeof *out);
	add_baseline(out);
	bool time = !strcmp(name, "halt-time"), frequency = !strcmp(name, "halt-frequency"),
	     full = !strcmp(name, "full");
	if (!time && !frequency && !full)
		return plumb_fail(status, EINVAL, "unknown design '%s' (halt-time, halt-frequency or full)", name);
	snprintf(out->name, sizeof out->name, "%s", name);
	if (time || full) {
		/* Table 2.1: every 1/8 s for 0, 1/2, 2 s; every 1/2 s for 0, 1/4, 1/2, 1, 2, 8 s. */
		static const double eighth[] = { 0, 0.5, 2 }, half[] = { 0, 0.25, 0.5, 1, 2, 8 };
		for (size_t i = 0; i < 3; i++)
			add_config(out, 0.125 * scale, eighth[i] * scale, status);
		for (size_t i = 0; i < 6; i++)
			add_config(out, 0.5 * scale, half[i] * scale, status);
	}
	if (frequency || full) {
		/* Table 2.2: for 1/2 s every 1/10, 1/2, 1, 2, 8 s; for 2 s every 1/2 and 2 s. */
		static const double at_half[] = { 0.1, 0.5, 1, 2, 8 }, at_two[] = { 0.5, 2 };
		for (size_t i = 0; i < 5; i++)
			add_config(out, at_half[i] * scale, 0.5 * scale, status);
		for (size_t i = 0; i < 2; i++)
			add_config(out, at_two[i] * scale, 2 * scale, status);
	}
	return 0;
}

static int parse_list(const char *text, double *values, size_t max, size_t *n, const char *what,
                      bool allow_zero, plumb_status *status)
{
	char copy[1024];
	if (!text || strlen(text) >= sizeof copy)
		return plumb_fail(status, EINVAL, "the %s list is empty or too long", what);
	plumb_status list_status;
	if (parse_list_check(text, 0, &list_status) != 0)
		return plumb_fail(status, EINVAL, "the %s list: %s", what, list_status.message);
	snprintf(copy, sizeof copy, "%s", text);
	*n = 0;
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (*n >= max)
			return plumb_fail(status, E2BIG, "too many %s (at most %zu)", what, max);
		if (perturb_parse_seconds(item, &values[*n], status) != 0)
			return -1;
		if (!allow_zero && values[*n] <= 0)
			return plumb_fail(status, EINVAL, "an interval must be above 0, not '%s'", item);
		(*n)++;
	}
	if (*n == 0)
		return plumb_fail(status, EINVAL, "the %s list is empty", what);
	return 0;
}

int perturb_design_from_lists(const char *intervals, const char *halts, double scale,
                              perturb_design *out, plumb_status *status)
{
	if (check_scale(scale, status) != 0)
		return -1;
	double f[PERTURB_MAX_CONFIGS], t[PERTURB_MAX_CONFIGS];
	size_t nf, nt;
	if (parse_list(intervals, f, PERTURB_MAX_CONFIGS, &nf, "intervals", false, status) != 0 ||
	    parse_list(halts, t, PERTURB_MAX_CONFIGS, &nt, "halt times", true, status) != 0)
		return -1;
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "lists");
	add_baseline(out);
	for (size_t i = 0; i < nf; i++)
		for (size_t j = 0; j < nt; j++)
			if (add_config(out, f[i] * scale, t[j] * scale, status) != 0)
				return -1;
	for (size_t i = 1; i < out->n; i++)
		if (out->configs[i].interval < 10e-6)
			return plumb_fail(status, EINVAL, "an interval of %g s is below the 10 us a task-clock "
			                  "timer can resolve", out->configs[i].interval);
	return 0;
}

int perturb_footprint_parse(const char *text, perturb_footprint *out, plumb_status *status)
{
	char copy[256];
	if (!text || strlen(text) >= sizeof copy)
		return plumb_fail(status, EINVAL, "a footprint is LINES,PAGES,CODE");
	snprintf(copy, sizeof copy, "%s", text);
	char *parts[3];
	char *save = NULL;
	size_t n = 0;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (n == 3)
			return plumb_fail(status, EINVAL, "a footprint is LINES,PAGES,CODE, not '%s'", text);
		parts[n++] = item;
	}
	if (n != 3 || strchr(text, ',') == text || strstr(text, ",,") || text[strlen(text) - 1] == ',')
		return plumb_fail(status, EINVAL, "a footprint is LINES,PAGES,CODE, not '%s'", text);
	if (parse_u64(parts[0], 0, 1u << 24, &out->lines, status) != 0 ||
	    parse_u64(parts[1], 0, 1u << 20, &out->pages, status) != 0 ||
	    parse_size(parts[2], &out->code_bytes, status) != 0)
		return -1;
	if (out->code_bytes > (64u << 20))
		return plumb_fail(status, EINVAL, "a code footprint of more than 64 MiB is refused");
	return 0;
}
