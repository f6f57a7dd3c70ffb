#include <stdio.h>
#include <unistd.h>
#include "plumb/progress.h"
#include "plumb/timer.h"

void progress_begin(progress *p, const char *label, size_t total)
{
	p->enabled = isatty(STDERR_FILENO);
	p->label = label;
	p->total = total;
	p->done = 0;
	p->last_ns = 0;
}

void progress_step(progress *p, size_t done)
{
	p->done = done;
	if (!p->enabled)
		return;
	unsigned long long now = timer_monotonic_ns();
	if (p->last_ns && now - p->last_ns < 100000000ull && done < p->total)
		return;
	p->last_ns = now;
	if (p->total)
		fprintf(stderr, "\r%s: %zu/%zu (%3.0f%%)", p->label, done, p->total, 100.0 * (double)done / (double)p->total);
	else
		fprintf(stderr, "\r%s: %zu", p->label, done);
	fflush(stderr);
}

void progress_end(progress *p)
{
	if (p->enabled)
		fprintf(stderr, "\r\033[K");
	p->enabled = false;
}
