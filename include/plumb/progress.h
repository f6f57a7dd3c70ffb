/* Progress on stderr, only when stderr is a terminal, so logs and pipes stay clean. */
#ifndef PLUMB_PROGRESS_H
#define PLUMB_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct progress {
	bool enabled;
	const char *label;
	size_t total, done;
	unsigned long long last_ns;
} progress;

void progress_begin(progress *p, const char *label, size_t total);
void progress_step(progress *p, size_t done);   /* redraws at most 10 times a second */
void progress_end(progress *p);

#endif
