#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/progress.h"
#include "core/timer.h"

void progress_begin(progress *p, const char *label, size_t total)
{
	p->enabled = isatty(STDERR_FILENO);
	p->label = label;
	p->total = total;
	p->done = 0;
	p->started_ns = timer_monotonic_ns();
	p->last_ns = 0;
	p->step_ns = p->started_ns;
	p->weights = NULL;
	p->step_fraction = 0;
	p->cost_done = p->cost_total = 0;
	p->channel = -1;
	p->share_from = 0;
	p->share_to = 1;
	p->shared_ns = 0;
	memset(p->kinds, 0, sizeof p->kinds);
	p->kind_count = 0;
	p->kind_mark_ns = p->started_ns;
	p->recent_ns = 0;
	p->next_kind = -1;
	p->next_cost = 0;
	p->told_left = 0;
	p->told_ns = 0;
}

void progress_set_weights(progress *p, const double *weights)
{
	p->weights = weights;
}

/* The expected cost of the done steps, of step done itself (the current
 * one) and of all the steps; unweighted, each step costs 1. */
static void costs(const progress *p, size_t done, double *finished, double *current, double *all)
{
	*finished = *current = *all = 0;
	for (size_t i = 0; i < p->total; i++) {
		double w = p->weights ? (p->weights[i] > 0 ? p->weights[i] : 0) : 1;
		*all += w;
		if (i < done)
			*finished += w;
		else if (i == done)
			*current = w;
	}
	if (p->weights && *all <= 0) {   /* no usable weights: count steps */
		*finished = (double)done;
		*current = done < p->total ? 1 : 0;
		*all = (double)p->total;
	}
}

/* H:MM:SS, or M:SS under an hour. */
static void duration_text(double seconds, char *buffer, size_t length)
{
	if (seconds < 0)
		seconds = 0;
	unsigned long long s = (unsigned long long)(seconds + 0.5);
	if (s >= 3600)
		snprintf(buffer, length, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buffer, length, "%llu:%02llu", s / 60, s % 60);
}

/* The running step's own fraction done, when it said one. */
static double step_part(const progress *p, double current)
{
	if (!(p->step_fraction > 0) || current <= 0 || p->cost_total > 0)
		return 0;
	return p->step_fraction < 1 ? p->step_fraction : 1;
}

double progress_fraction(const progress *p)
{
	if (p->cost_total > 0) {
		double f = p->cost_done / p->cost_total;
		return f < 0 ? 0 : f > 1 ? 1 : f;
	}
	if (!p->total)
		return 0;
	size_t done = p->done < p->total ? p->done : p->total;
	double finished, current, all;
	costs(p, done, &finished, &current, &all);
	return all > 0 ? (finished + step_part(p, current) * current) / all : 0;
}

/* Below this fraction of its own, a step's own rate is blended with the
 * rate of the steps before it: a step's first percent says little. */
#define OWN_RATE_TRUSTED 0.1

void progress_format(const progress *p, unsigned long long now_ns, char *buffer, size_t length)
{
	double elapsed = now_ns > p->started_ns ? (double)(now_ns - p->started_ns) / 1e9 : 0;
	char spent[32];
	duration_text(elapsed, spent, sizeof spent);
	if (!p->total) {
		snprintf(buffer, length, "%s: %zu done, %s elapsed", p->label, p->done, spent);
		return;
	}
	size_t done = p->done < p->total ? p->done : p->total;
	double finished, current, all;
	if (p->cost_total > 0) {   /* the steps' own expected costs */
		finished = p->cost_done < p->cost_total ? p->cost_done : p->cost_total;
		current = 0;
		all = p->cost_total;
	} else {
		costs(p, done, &finished, &current, &all);
	}
	double part = step_part(p, current);
	double fraction = all > 0 ? (finished + part * current) / all : 0;
	int used = snprintf(buffer, length, "%s: %zu/%zu (%.0f%%), %s elapsed", p->label, done, p->total,
	                    100.0 * fraction, spent);
	/* The time left at the rate so far (in expected cost, when steps are
	 * weighted), less what the current step has run: shown once a step is
	 * done, or the current one said how far it is. */
	if (done < p->total && (finished > 0 || part > 0 || progress_kind_left(p, now_ns) >= 0) && used > 0 && (size_t)used < length) {
		unsigned long long step = p->step_ns > p->started_ns && p->step_ns <= now_ns ? p->step_ns : now_ns;
		double before = step > p->started_ns ? (double)(step - p->started_ns) / 1e9 : elapsed;
		double into = (double)(now_ns - step) / 1e9, rate = finished > 0 ? before / finished : 0;
		double after = all - finished - current, seconds = rate * (current + after) - into;
		if (seconds < rate * after)
			seconds = rate * after;   /* the current step overran its share: the rest still lies ahead */
		double learned = progress_kind_left(p, now_ns);
		if (learned >= 0)
			seconds = learned;   /* each kind of step at its own learned rate */
		double told = -1;
		if (p->told_ns && current > 0 && p->told_ns <= now_ns) {
			told = p->told_left - (double)(now_ns - p->told_ns) / 1e9;
			if (told < 0)
				told = 0;
		}
		if (told >= 0) {
			/* The running step (validate) said what it has left, each
			 * of its kinds of work at its own learned rate: that, and
			 * the steps after it at the rate of the steps done (their
			 * expected cost scaled by how the finished ones compared
			 * with theirs), or at the running step's own pace when
			 * none is done.  Blended with the estimate by expected cost
			 * until the step is a tenth done, as below. */
			double own_rate = into + told > 0 ? (into + told) / current : 0;
			double own = told + (finished > 0 ? rate : own_rate) * after;
			double trust = finished > 0 ? part / OWN_RATE_TRUSTED : 1;
			seconds = trust >= 1 ? own : trust * own + (1 - trust) * seconds;
		} else if (part > 0) {
			/* The step said how far it is: the rest of it at its own rate
			 * (validate's runs under Valgrind go at a pace the sections
			 * before it cannot predict), the steps after it at the rate of
			 * the steps done, as before: one step's pace says little of
			 * another's (lat under load ran at seven times its expected
			 * cost, validate at once). */
			double own_rate = into / (part * current);
			double own = own_rate * (1 - part) * current + (finished > 0 ? rate : own_rate) * after;
			double trust = finished > 0 ? part / OWN_RATE_TRUSTED : 1;
			seconds = trust >= 1 ? own : trust * own + (1 - trust) * seconds;
		}
		char left[32];
		duration_text(seconds, left, sizeof left);
		snprintf(buffer + used, length - (size_t)used, ", about %s left", left);
	}
}

static void draw(progress *p, bool force)
{
	if (!p->enabled)
		return;
	unsigned long long now = timer_monotonic_ns();
	if (!force && p->last_ns && now - p->last_ns < 100000000ull)
		return;
	p->last_ns = now;
	char line[256];
	progress_format(p, now, line, sizeof line);
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
}

/* The fraction on the channel, at most four times a second unless forced. */
static void share(progress *p, bool force)
{
	if (p->channel <= STDERR_FILENO)
		return;
	unsigned long long now = timer_monotonic_ns();
	if (!force && p->shared_ns && now - p->shared_ns < 250000000ull)
		return;
	p->shared_ns = now;
	char record[2 * PROGRESS_RECORD_MAX];
	size_t n = progress_record_format(p->share_from + (p->share_to - p->share_from) * progress_fraction(p), record,
	                                  PROGRESS_RECORD_MAX);
	double left = progress_kind_left(p, now);
	if (left >= 0)   /* the kinds' learned time left, in the same write */
		n += progress_left_record_format(left, record + n, sizeof record - n);
	/* at most PIPE_BUF bytes: written whole or not at all (a full pipe) */
	ssize_t written = write(p->channel, record, n);
	(void)written;
}

void progress_step(progress *p, size_t done)
{
	if (done != p->done) {
		p->step_ns = timer_monotonic_ns();
		p->step_fraction = 0;
		p->told_ns = 0;
	}
	p->done = done;
	draw(p, p->total && done >= p->total);
	share(p, false);
}

void progress_step_part(progress *p, double fraction)
{
	if (fraction >= 0 && fraction <= 1)
		p->step_fraction = fraction;
}

void progress_set_cost(progress *p, double total)
{
	p->cost_total = total > 0 && isfinite(total) ? total : 0;
	p->cost_done = 0;
	memset(p->kinds, 0, sizeof p->kinds);
	p->kind_count = 0;
	p->kind_mark_ns = timer_monotonic_ns();
	p->recent_ns = 0;
	p->next_kind = -1;
}

static bool kind_ok(int kind, double cost)
{
	return kind >= 0 && kind < PROGRESS_KINDS && isfinite(cost);
}

void progress_kind_plan(progress *p, int kind, double cost)
{
	if (!kind_ok(kind, cost) || !(cost > 0))
		return;
	p->kinds[kind].planned += cost;
	p->cost_total += cost;
	if (kind >= p->kind_count)
		p->kind_count = kind + 1;
}

void progress_kind_drop(progress *p, int kind, double cost)
{
	if (!kind_ok(kind, cost) || !(cost > 0) || kind >= p->kind_count)
		return;
	progress_kind *k = &p->kinds[kind];
	double dropped = k->planned - k->done < cost ? k->planned - k->done : cost;
	if (dropped <= 0)
		return;
	k->planned -= dropped;
	progress_drop_cost(p, dropped);
}

void progress_kind_next(progress *p, int kind, double cost)
{
	if (!kind_ok(kind, cost))
		return;
	p->next_kind = kind;
	p->next_cost = cost > 0 ? cost : 0;
}

void progress_kind_done_at(progress *p, int kind, double cost, unsigned long long now_ns)
{
	if (!kind_ok(kind, cost))
		return;
	if (cost < 0)
		cost = 0;
	progress_kind *k = &p->kinds[kind];
	if (kind >= p->kind_count)
		p->kind_count = kind + 1;
	if (k->done + cost > k->planned)   /* more than planned: the plan grows */
		progress_kind_plan(p, kind, k->done + cost - k->planned);
	double seconds = now_ns > p->kind_mark_ns ? (double)(now_ns - p->kind_mark_ns) / 1e9 : 0;
	if (now_ns > p->recent_ns) {   /* the recent sums fade with time */
		double fade = p->recent_ns ? exp(-(double)(now_ns - p->recent_ns) / 1e9 / PROGRESS_RECENT_SECONDS) : 1;
		for (int i = 0; i < p->kind_count; i++) {
			p->kinds[i].recent_seconds *= fade;
			p->kinds[i].recent_done *= fade;
		}
		p->recent_ns = now_ns;
	}
	k->done += cost;
	k->seconds += seconds;
	k->recent_done += cost;
	k->recent_seconds += seconds;
	k->steps++;
	p->kind_mark_ns = now_ns > p->kind_mark_ns ? now_ns : p->kind_mark_ns;
	p->next_kind = -1;
	progress_add_cost(p, cost);
}

void progress_kind_done(progress *p, int kind, double cost)
{
	progress_kind_done_at(p, kind, cost, timer_monotonic_ns());
	share(p, false);
}

/* Seconds per unit of cost over every step of every kind done; 0 before any. */
static double pooled_rate(const progress *p)
{
	double seconds = 0, done = 0;
	for (int k = 0; k < p->kind_count; k++) {
		seconds += p->kinds[k].seconds;
		done += p->kinds[k].done;
	}
	return done > 0 ? seconds / done : 0;
}

/* A kind's pace against all the kinds' over the run (1: as the table
 * says), blended with 1 by PROGRESS_PRIOR_STEPS of its own steps. */
static double kind_ratio(const progress *p, int kind, double pooled)
{
	const progress_kind *k = &p->kinds[kind];
	if (!k->steps || !(k->done > 0) || !(pooled > 0))
		return 1;   /* not seen: the table's ratio to the kinds seen */
	double prior = PROGRESS_PRIOR_STEPS * k->done / (double)k->steps;
	return (k->seconds + prior * pooled) / (k->done + prior) / pooled;
}

/* The machine's pace now, in the pooled rate's unit: the recent steps'
 * seconds against what each kind's own rate over the run says they should
 * have taken (a step's weight falls by a factor e every
 * PROGRESS_RECENT_SECONDS).  Load that changes during the run changes
 * every kind's seconds at once; a kind's own pace against the others is
 * its ratio's to learn, so a new kind's first steps do not move it. */
static double recent_pace(const progress *p, double pooled)
{
	double seconds = 0, expected = 0;
	for (int k = 0; k < p->kind_count; k++) {
		const progress_kind *kind = &p->kinds[k];
		if (!(kind->done > 0) || !(kind->recent_done > 0))
			continue;
		seconds += kind->recent_seconds;
		expected += kind->recent_done * kind->seconds / kind->done;
	}
	return expected > 0 ? pooled * seconds / expected : pooled;
}

double progress_kind_rate(const progress *p, int kind)
{
	double pooled = pooled_rate(p), pace = recent_pace(p, pooled);
	if (kind < 0 || kind >= p->kind_count)
		return pace;
	return kind_ratio(p, kind, pooled) * pace;
}

double progress_kind_left(const progress *p, unsigned long long now_ns)
{
	if (p->kind_count <= 0 || !(pooled_rate(p) > 0))
		return -1;
	double left = 0;
	for (int k = 0; k < p->kind_count; k++) {
		double ahead = p->kinds[k].planned - p->kinds[k].done;
		if (ahead > 0)
			left += ahead * progress_kind_rate(p, k);
	}
	if (p->next_kind >= 0 && p->next_kind < p->kind_count && now_ns > p->kind_mark_ns) {
		/* the step running counts against its own share, not past it */
		double share = p->next_cost * progress_kind_rate(p, p->next_kind);
		double into = (double)(now_ns - p->kind_mark_ns) / 1e9;
		left -= into < share ? into : share;
	}
	return left > 0 ? left : 0;
}

void progress_step_left(progress *p, double seconds, unsigned long long now_ns)
{
	if (!(seconds >= 0) || !isfinite(seconds))
		return;
	p->told_left = seconds;
	p->told_ns = now_ns ? now_ns : 1;
}

void progress_add_cost(progress *p, double cost)
{
	if (cost > 0 && isfinite(cost))
		p->cost_done += cost;
}

void progress_drop_cost(progress *p, double cost)
{
	if (!(cost > 0) || !isfinite(cost) || p->cost_total <= 0)
		return;
	p->cost_total -= cost;
	if (p->cost_total < p->cost_done)
		p->cost_total = p->cost_done > 0 ? p->cost_done : 0;
}

void progress_step_of(progress *p, size_t done, size_t total)
{
	p->total = total;
	progress_step(p, done);
}

void progress_skip(progress *p, size_t steps)
{
	if (!p->total)
		return;
	size_t floor = p->done;
	p->total = p->total > floor + steps ? p->total - steps : floor;
	draw(p, p->total && p->done >= p->total);
	share(p, false);
}

void progress_end(progress *p)
{
	share(p, true);
	p->channel = -1;
	if (p->enabled)
		fprintf(stderr, "\r\033[K");
	p->enabled = false;
}

int progress_channel_open(void)
{
	const char *value = secure_getenv(PROGRESS_CHANNEL_VARIABLE);
	if (!value)
		return -1;
	char *end;
	errno = 0;
	long fd = strtol(value, &end, 10);
	if (errno || end == value || *end != ':' || fd <= STDERR_FILENO || fd > INT_MAX)
		return -1;
	const char *pid_text = end + 1;
	long pid = strtol(pid_text, &end, 10);
	if (errno || end == pid_text || *end || pid <= 1 || (pid_t)pid != getppid())
		return -1;
	struct stat st;
	int flags = fcntl((int)fd, F_GETFL);
	if (fstat((int)fd, &st) != 0 || !S_ISFIFO(st.st_mode) || flags < 0 || (flags & O_ACCMODE) != O_WRONLY)
		return -1;
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	fcntl((int)fd, F_SETFL, flags | O_NONBLOCK);
	return (int)fd;
}

void progress_share(progress *p, double from, double to)
{
	p->channel = progress_channel_open();
	p->share_from = from >= 0 && from <= 1 ? from : 0;
	p->share_to = to >= p->share_from && to <= 1 ? to : 1;
	p->shared_ns = 0;
	share(p, true);
}

size_t progress_record_format(double fraction, char *buffer, size_t length)
{
	if (!(fraction >= 0))
		fraction = 0;
	if (fraction > 1)
		fraction = 1;
	int n = snprintf(buffer, length, "progress %.4f\n", fraction);
	return n < 0 ? 0 : (size_t)n < length ? (size_t)n : length - 1;
}

/* "HEAD N", N digits with at most one point inside, no more than MAX. */
static bool parse_decimal(const char *head, const char *line, size_t length, double max, double *out)
{
	size_t h = strlen(head);
	if (length <= h || length >= PROGRESS_RECORD_MAX || memcmp(line, head, h))
		return false;
	/* digits and one point only: no sign, exponent, "nan" or "inf" */
	char number[PROGRESS_RECORD_MAX];
	size_t points = 0, digits = 0;
	for (size_t i = h; i < length; i++) {
		char c = line[i];
		if (c == '.' && !points++ && i > h)
			continue;
		if (c < '0' || c > '9')
			return false;
		digits++;
	}
	if (!digits || line[length - 1] == '.')
		return false;
	memcpy(number, line + h, length - h);
	number[length - h] = 0;
	char *end;
	double value = strtod(number, &end);
	if (*end || !(value >= 0 && value <= max))
		return false;
	*out = value;
	return true;
}

bool progress_record_parse(const char *line, size_t length, double *fraction)
{
	return parse_decimal("progress ", line, length, 1, fraction);
}

bool progress_left_record_parse(const char *line, size_t length, double *seconds)
{
	return parse_decimal("left ", line, length, PROGRESS_LEFT_MAX, seconds);
}

size_t progress_left_record_format(double seconds, char *buffer, size_t length)
{
	if (!(seconds >= 0))
		seconds = 0;
	if (seconds > PROGRESS_LEFT_MAX)
		seconds = PROGRESS_LEFT_MAX;
	int n = snprintf(buffer, length, "left %.1f\n", seconds);
	return n < 0 || !length ? 0 : (size_t)n < length ? (size_t)n : length - 1;
}

bool progress_reader_feed(progress_reader *r, const char *data, size_t n, double *fraction)
{
	bool found = false;
	r->told_left = false;
	for (size_t i = 0; i < n; i++) {
		char c = data[i];
		if (c == '\n') {
			double value;
			if (!r->overlong && progress_record_parse(r->line, r->used, &value)) {
				*fraction = value;
				found = true;
			} else if (!r->overlong && progress_left_record_parse(r->line, r->used, &value)) {
				r->left = value;
				r->told_left = true;
			}
			r->used = 0;
			r->overlong = false;
		} else if (r->overlong || r->used + 1 >= sizeof r->line) {
			r->overlong = true;
		} else {
			r->line[r->used++] = c;
		}
	}
	return found;
}
