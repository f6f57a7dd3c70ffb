#include <stdio.h>
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
	costs(p, done, &finished, &current, &all);
	double fraction = all > 0 ? finished / all : 0;
	int used = snprintf(buffer, length, "%s: %zu/%zu (%.0f%%), %s elapsed", p->label, done, p->total,
	                    100.0 * fraction, spent);
	/* The time left at the rate so far (in expected cost, when steps are
	 * weighted), less what the current step has run: shown once a step is
	 * done. */
	if (done > 0 && done < p->total && finished > 0 && used > 0 && (size_t)used < length) {
		unsigned long long step = p->step_ns > p->started_ns && p->step_ns <= now_ns ? p->step_ns : now_ns;
		double before = step > p->started_ns ? (double)(step - p->started_ns) / 1e9 : elapsed;
		double into = (double)(now_ns - step) / 1e9, rate = before / finished;
		double after = all - finished - current, seconds = rate * (current + after) - into;
		if (seconds < rate * after)
			seconds = rate * after;   /* the current step overran its share: the rest still lies ahead */
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

void progress_step(progress *p, size_t done)
{
	if (done != p->done)
		p->step_ns = timer_monotonic_ns();
	p->done = done;
	draw(p, p->total && done >= p->total);
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
}

void progress_end(progress *p)
{
	if (p->enabled)
		fprintf(stderr, "\r\033[K");
	p->enabled = false;
}
