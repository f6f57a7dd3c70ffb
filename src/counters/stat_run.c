/* plumb stat's runs: the command counted from its exec to its exit, N
 * times, each a fresh process, and each event summarized over the runs the
 * way perf stat prints it (src/counters/counter_stat.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "counters/counter_stat.h"
#include "core/interrupt.h"
#include "core/stats.h"
#include "counters/stat_agent.h"

static uint64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Runs the command once, counted from its exec to its exit.  The child waits
 * on a pipe until the counters are attached, so nothing it does is missed;
 * a second pipe (closed by a successful exec) carries an exec failure back. */
static int run_once(const char *backend, const char *const *events, size_t n, const counter_options *base,
                    char **command, counter_stat_run *run, plumb_status *status)
{
	int go[2], failed[2];
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(failed, O_CLOEXEC) != 0)
		return plumb_fail_errno(status, errno, "pipe");
	fflush(NULL);
	pid_t child = interrupt_fork_command();
	if (child < 0)
		return plumb_fail_errno(status, errno, "fork");
	if (child == 0) {
		char byte;
		close(go[1]);
		close(failed[0]);
		if (read(go[0], &byte, 1) != 1)
			_exit(126);
		execvp(command[0], command);
		int err = errno;
		if (write(failed[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(failed[1]);
	counter_options options = *base;
	options.pid = child;
	options.inherit = true;
	options.enable_on_exec = !strcmp(backend, "perf");
	counter_set *set = NULL;
	int rc = counter_set_open(&set, backend, events, n, &options, status);
	if (rc != 0 && status->code == ENOTSUP) {
		/* The backend cannot work at all here (built without PAPI): the
		 * command still runs, and every event says why it was not counted. */
		for (size_t i = 0; i < n; i++)
			counter_value_unsupported(&run->values[i], "%s", status->message);
		set = NULL;
		rc = 0;
	}
	if (rc == 0 && set)
		rc = counter_start(set, status);
	uint64_t begin = monotonic_ns();
	/* Releasing the child; if opening failed, closing the pipe ends it. */
	if (rc == 0 && write(go[1], "g", 1) != 1)
		rc = plumb_fail_errno(status, errno, "starting the command");
	close(go[1]);
	int exec_errno = 0;
	ssize_t got = read(failed[0], &exec_errno, sizeof exec_errno);
	close(failed[0]);
	int wstatus = 0;
	interrupt_waitpid(child, &wstatus);
	run->elapsed_ns = (double)(monotonic_ns() - begin);
	run->exit_status = wstatus;
	if (rc == 0 && got == (ssize_t)sizeof exec_errno)
		rc = plumb_fail(status, exec_errno, "cannot run '%s': %s", command[0], strerror(exec_errno));
	if (rc == 0 && set)
		rc = counter_stop(set, status);
	if (rc == 0 && set)
		rc = counter_read(set, run->values, status);
	counter_close(set);
	return rc;
}

/* PAPI counts from inside the command: libplumb.so is preloaded into it and
 * its agent (stat_agent.c) starts the events in a constructor
 * and sends the values back over an inherited pipe at exit.  It counts the
 * command's main thread after the dynamic loader; docs/counters.md. */
static int run_once_agent(const char *backend, const char *const *events, size_t n, char **command,
                          counter_stat_run *run, plumb_status *status)
{
	char library[4096];
	if (!stat_agent_library(library, sizeof library, status)) {
		/* Without the library nothing can be counted, but the command still runs. */
		for (size_t i = 0; i < n; i++)
			counter_value_unsupported(&run->values[i], "%s", status->message);
		library[0] = '\0';
	}
	char list[4096] = "";
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", events[i]);
	}
	int data[2], failed[2];
	if (pipe2(data, O_CLOEXEC) != 0 || pipe2(failed, O_CLOEXEC) != 0)
		return plumb_fail_errno(status, errno, "pipe");
	fflush(NULL);
	uint64_t begin = monotonic_ns();
	pid_t child = interrupt_fork_command();
	if (child < 0)
		return plumb_fail_errno(status, errno, "fork");
	if (child == 0) {
		close(data[0]);
		close(failed[0]);
		if (library[0]) {
			/* The agent's pipe must survive exec; the agent closes it on exec of
			 * anything the command starts. */
			char fd_text[16], preload[8192];
			fcntl(data[1], F_SETFD, 0);
			snprintf(fd_text, sizeof fd_text, "%d", data[1]);
			const char *previous = secure_getenv("LD_PRELOAD");
			snprintf(preload, sizeof preload, "%s%s%s", library, previous && previous[0] ? ":" : "",
			         previous ? previous : "");
			setenv(STAT_AGENT_FD_ENV, fd_text, 1);
			setenv(STAT_AGENT_EVENTS_ENV, list, 1);
			setenv(STAT_AGENT_BACKEND_ENV, backend, 1);
			setenv("LD_PRELOAD", preload, 1);
		}
		execvp(command[0], command);
		int err = errno;
		if (write(failed[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(data[1]);
	close(failed[1]);
	int exec_errno = 0;
	ssize_t got = read(failed[0], &exec_errno, sizeof exec_errno);
	close(failed[0]);
	int wstatus = 0;
	interrupt_waitpid(child, &wstatus);
	run->elapsed_ns = (double)(monotonic_ns() - begin);
	run->exit_status = wstatus;
	int rc = 0;
	if (got == (ssize_t)sizeof exec_errno)
		rc = plumb_fail(status, exec_errno, "cannot run '%s': %s", command[0], strerror(exec_errno));
	else if (library[0])
		rc = stat_agent_collect(data[0], n, run->values, status);
	close(data[0]);
	return rc;
}

/* Whether the kernel lets this process count kernel events of others: what
 * perf stat then counts by default.  CapEff bits 21 (CAP_SYS_ADMIN) and 38
 * (CAP_PERFMON). */
counter_domain counter_stat_default_domain(void)
{
	if (geteuid() == 0)
		return COUNTER_DOMAIN_ALL;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 2;
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (paranoid <= 1)
		return COUNTER_DOMAIN_ALL;
	f = fopen("/proc/self/status", "r");
	if (!f)
		return COUNTER_DOMAIN_USER;
	char line[256];
	unsigned long long effective = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %llx", &effective) == 1)
			break;
	fclose(f);
	return effective & ((1ull << 21) | (1ull << 38)) ? COUNTER_DOMAIN_ALL : COUNTER_DOMAIN_USER;
}

bool counter_stat_kernel_side(const char *event)
{
	static const char *const names[] = {
		"context-switches", "cs", "cpu-migrations", "migrations",
		"perf::CONTEXT-SWITCHES", "perf::CS", "perf::CPU-MIGRATIONS", "perf::MIGRATIONS",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(event, names[i]))
			return true;
	return false;
}

static bool is_clock(const char *event)
{
	return !strcmp(event, "task-clock") || !strcmp(event, "cpu-clock") ||
	       !strcmp(event, "perf::TASK-CLOCK") || !strcmp(event, "perf::CPU-CLOCK");
}

static bool is_named(const char *event, const char *a, const char *b)
{
	return !strcmp(event, a) || !strcmp(event, b);
}

/* perf's "+- x%": the standard error of the mean in percent of the mean. */
static double mean_error_percent(const stats_summary *s)
{
	if (s->n < 2 || s->mean == 0)
		return NAN;
	return 100.0 * s->stddev / sqrt((double)s->n) / fabs(s->mean);
}

static void summarize(const counter_stat_request *request, counter_stat_result *result)
{
	size_t runs = result->runs, n = request->event_count;
	double *samples = malloc((runs ? runs : 1) * sizeof *samples);
	if (!samples)
		return;
	for (size_t r = 0; r < runs; r++)
		samples[r] = result->run[r].elapsed_ns;
	stats_summary elapsed;
	stats_summarize(samples, runs, &elapsed);
	result->elapsed_mean_ns = elapsed.mean;
	result->elapsed_median_ns = elapsed.median;
	result->elapsed_stddev_ns = runs > 1 ? elapsed.stddev / sqrt((double)runs) : 0;
	result->elapsed_error_percent = mean_error_percent(&elapsed);
	bool user_only = strcmp(request->backend, "perf") || request->options.domain == COUNTER_DOMAIN_USER;
	double task_clock_ns = NAN, cycles = NAN;
	for (size_t e = 0; e < n; e++) {
		counter_stat_event *ev = &result->events[e];
		memset(ev, 0, sizeof *ev);
		ev->rate = NAN;
		ev->mean_error_percent = NAN;
		ev->clock = is_clock(request->events[e]);
		for (size_t r = 0; r < runs; r++) {
			const counter_value *v = &result->run[r].values[e];
			if (counter_value_usable(v)) {
				samples[ev->counted++] = v->value;
				ev->multiplexed |= v->state == COUNTER_MULTIPLEXED;
			} else if (!ev->worst || v->state == COUNTER_UNSUPPORTED) {
				ev->worst = v;
			}
		}
		if (ev->counted == 0) {
			ev->mean = ev->stddev = ev->min = ev->max = ev->cv = NAN;
			result->unsupported++;
			continue;
		}
		stats_summary s;
		stats_summarize(samples, ev->counted, &s);
		ev->mean = s.mean;
		ev->stddev = s.stddev;
		ev->min = s.min;
		ev->max = s.max;
		ev->cv = s.mean != 0 ? s.cv : NAN;
		ev->mean_error_percent = mean_error_percent(&s);
		ev->kernel_side_user_only = user_only && counter_stat_kernel_side(request->events[e]);
		if (ev->clock && isnan(task_clock_ns))
			task_clock_ns = s.mean;
		if ((is_named(request->events[e], "cycles", "cpu-cycles") || !strcmp(request->events[e], "perf::CYCLES")) && isnan(cycles))
			cycles = s.mean;
	}
	/* The rates perf prints: a clock over the elapsed time (CPUs utilized),
	 * instructions per cycle, and any other count per second of task-clock
	 * (of elapsed time when task-clock is not counted). */
	double seconds = !isnan(task_clock_ns) ? task_clock_ns / 1e9 : elapsed.mean / 1e9;
	for (size_t e = 0; e < n; e++) {
		counter_stat_event *ev = &result->events[e];
		if (ev->counted == 0 || !strcmp(request->events[e], "duration_time"))
			continue;   /* wall time needs no rate, as in perf */
		if (ev->clock) {
			if (elapsed.mean > 0) {
				ev->rate = ev->mean / elapsed.mean;
				ev->rate_unit = "CPUs utilized";
			}
		} else if (is_named(request->events[e], "instructions", "perf::INSTRUCTIONS") && !isnan(cycles) && cycles > 0) {
			ev->rate = ev->mean / cycles;
			ev->rate_unit = "insn per cycle";
		} else if (seconds > 0) {
			ev->rate = ev->mean / seconds;
			ev->rate_unit = "/sec";
		}
	}
	free(samples);
}

int counter_stat_run_command(const counter_stat_request *request, counter_stat_result *result,
                             plumb_status *status)
{
	memset(result, 0, sizeof *result);
	result->run = calloc(request->runs ? request->runs : 1, sizeof *result->run);
	if (!result->run)
		return plumb_fail(status, ENOMEM, "out of memory");
	bool agent = !strcmp(request->backend, "papi");
	for (size_t r = 0; r < request->runs; r++) {
		counter_stat_run *run = &result->run[r];
		int rc = agent ? run_once_agent(request->backend, request->events, request->event_count,
		                                request->command, run, status)
		               : run_once(request->backend, request->events, request->event_count, &request->options,
		                          request->command, run, status);
		result->runs = r + 1;
		if (rc != 0)
			return -1;
		int w = run->exit_status;
		if (!WIFEXITED(w) || WEXITSTATUS(w) != 0) {
			result->failed_runs++;
			result->last_bad_status = w;
		}
	}
	summarize(request, result);
	return 0;
}

void counter_stat_result_free(counter_stat_result *result)
{
	free(result->run);
	result->run = NULL;
}
