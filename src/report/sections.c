/* Running the report's sections one after another: each section's command
 * as its own process with the report's arguments, the model fed loaded's
 * measurements.  plumb report and plumb cluster (on every node) both run
 * their sections here, so a node's figures come from the same runs as a
 * report's. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/progress.h"
#include "report/report.h"

const char *const *report_section_arguments_for(const char *command, bool quick)
{
	const report_section *section = report_section_find(command);
	if (quick && section && section->quick_arguments)
		return section->quick_arguments;
	return report_section_arguments(command);
}

double report_section_expected_seconds(const char *command, bool quick)
{
	const report_section *section = report_section_find(command);
	if (!section || section->seconds <= 0)
		return 5;   /* a section the table gives no cost yet */
	return quick ? section->quick_seconds : section->seconds;
}

/* The report of an earlier section that ran (NULL if none did). */
static const output_report *section_before(const char *const *names, output_report *const *reports, size_t i,
                                           const char *command)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(names[k], command) && reports[k])
			return reports[k];
	return NULL;
}

/* The progress line redrawn every second while a section runs: drawn only
 * when a section began, it said "about 6:57 left" through validate's four
 * minutes while the time left fell (progress_format takes the time spent in
 * the running step off).  The thread only redraws; the main thread steps
 * under the same lock, and signals stay with the main thread, whose
 * handlers end the section's process. */
typedef struct ticker {
	progress *p;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop, running;
	pthread_t thread;
} ticker;

static void *ticker_loop(void *argument)
{
	ticker *t = argument;
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec at;
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_sec += 1;
		pthread_cond_timedwait(&t->wake, &t->lock, &at);
		if (!t->stop)
			progress_step(t->p, t->p->done);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static void ticker_start(ticker *t, progress *p)
{
	t->p = p;
	t->stop = t->running = false;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	if (!p->enabled)
		return;
	sigset_t all, before;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	t->running = pthread_create(&t->thread, NULL, ticker_loop, t) == 0;
	pthread_sigmask(SIG_SETMASK, &before, NULL);
}

static void ticker_stop(ticker *t)
{
	if (t->running) {
		pthread_mutex_lock(&t->lock);
		t->stop = true;
		pthread_cond_signal(&t->wake);
		pthread_mutex_unlock(&t->lock);
		pthread_join(t->thread, NULL);
	}
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
}

size_t report_run_sections(const char *program, const char *who, const char *const *names, size_t count, bool quick,
                           const char *save_dir, output_report **reports, char (*failures)[PLUMB_MESSAGE_MAX])
{
	size_t failed = 0;
	char label[128];
	snprintf(label, sizeof label, "plumb %s", who);
	progress p;
	progress_begin(&p, label, count);
	/* Weighted by each section's expected cost: counted by sections, the
	 * line said "0:19 left" with validate's 4:55 still to go. */
	double *weights = calloc(count ? count : 1, sizeof *weights);
	for (size_t i = 0; weights && i < count; i++)
		weights[i] = report_section_expected_seconds(names[i], quick);
	if (weights)
		progress_set_weights(&p, weights);
	ticker tick;
	ticker_start(&tick, &p);
	for (size_t i = 0; i < count; i++) {
		reports[i] = NULL;
		failures[i][0] = 0;
		pthread_mutex_lock(&tick.lock);
		progress_step(&p, i);
		if (p.enabled)
			fprintf(stderr, "\r%s: section %zu/%zu: plumb %s\033[K\n", label, i + 1, count, names[i]);
		pthread_mutex_unlock(&tick.lock);
		char save_path[PATH_MAX], *save = NULL;
		if (save_dir) {
			snprintf(save_path, sizeof save_path, "%s/%s.json", save_dir, names[i]);
			save = save_path;
		}
		plumb_status status = { 0 };
		int rc;
		const report_section *section = report_section_find(names[i]);
		const output_report *input = section && section->input ? section_before(names, reports, i, section->input)
		                                                       : NULL;
		if (section && section->input && (input || section->input_required)) {
			/* fed an earlier section's report on stdin (the model fitted
			 * to loaded's; geometry taking lat's capacities and level
			 * latencies, so the two sections and the summary give one
			 * figure) */
			char *text = NULL;
			size_t text_length = 0;
			FILE *m = input ? open_memstream(&text, &text_length) : NULL;
			if (m) {
				output_write(input, OUTPUT_JSON, m, &status);
				fclose(m);
			}
			if (text)
				rc = report_run_section_input(program, names[i], section->input_arguments, text, save, &reports[i],
				                              &status);
			else if (section->input_required)
				rc = plumb_fail(&status, EINVAL, "%s", section->input_missing ? section->input_missing
				                                                              : "an earlier section did not run");
			else
				rc = report_run_section(program, names[i], report_section_arguments_for(names[i], quick), save,
				                        &reports[i], &status);
			free(text);
		} else if (section && section->recorded) {
			/* recorded once for its reference rate, then halted */
			rc = report_run_perturb_section(program, save, &reports[i], &status);
		} else {
			rc = report_run_section(program, names[i], report_section_arguments_for(names[i], quick), save, &reports[i], &status);
		}
		if (rc != 0) {
			snprintf(failures[i], PLUMB_MESSAGE_MAX, "%s", status.message[0] ? status.message : "the section failed");
			pthread_mutex_lock(&tick.lock);
			fprintf(stderr, "%splumb %s: section %s: %s\n", p.enabled ? "\r\033[K" : "", who, names[i], failures[i]);
			pthread_mutex_unlock(&tick.lock);
			failed++;
		}
	}
	ticker_stop(&tick);
	progress_step(&p, count);
	progress_end(&p);
	free(weights);
	return failed;
}
