/* The experiment runner: every configuration N times, interleaved (run 1 of
 * each, then run 2, ... as Watson's a1_ ... a5_ program names ordered them),
 * each run a fresh process pinned to one CPU of the affinity mask, halted
 * by the agent (perturb_agent.c) inside it. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "counters/stat_agent.h"
#include "perturb/perturb_internal.h"
#include "core/cpu.h"
#include "core/interrupt.h"
#include "core/progress.h"
#include "core/timer.h"

static const char *const default_events[] = {
	"task-clock", "page-faults", "minor-faults", "major-faults", "context-switches", "cpu-migrations",
	"cycles", "instructions", "branches", "branch-misses", "L1-dcache-load-misses",
	"L1-icache-load-misses", "iTLB-load-misses", "dTLB-load-misses", "LLC-load-misses",
};

void perturb_options_default(perturb_options *options)
{
	memset(options, 0, sizeof *options);
	options->runs = 5;
	options->clock = "task-clock";
	options->cpu = -1;
	options->n_events = sizeof default_events / sizeof default_events[0];
	for (size_t i = 0; i < options->n_events; i++)
		options->events[i] = default_events[i];
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Interrupts serviced on cpu so far (the sum of its /proc/interrupts
 * column); NaN when unreadable. */
static double interrupts_on(int cpu)
{
	FILE *f = fopen("/proc/interrupts", "r");
	if (!f)
		return NAN;
	char line[4096];
	int column = -1, columns = 0;
	if (fgets(line, sizeof line, f)) {
		char *save = NULL;
		for (char *word = strtok_r(line, " \t\n", &save); word; word = strtok_r(NULL, " \t\n", &save)) {
			int number;
			if (sscanf(word, "CPU%d", &number) == 1 && number == cpu)
				column = columns;
			columns++;
		}
	}
	double total = 0;
	while (column >= 0 && fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *p = colon + 1;
		for (int c = 0; c <= column; c++) {
			char *end;
			unsigned long long value = strtoull(p, &end, 10);
			if (end == p)
				break;
			if (c == column)
				total += (double)value;
			p = end;
		}
	}
	fclose(f);
	return column >= 0 ? total : NAN;
}

static int read_message(int fd, perturb_agent_message *message)
{
	size_t got = 0;
	char *p = (char *)message;
	while (got < sizeof *message) {
		ssize_t n = read(fd, p + got, sizeof *message - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got == sizeof *message && message->magic == PERTURB_AGENT_MAGIC ? 0 : -1;
}

typedef struct run_context {
	const perturb_options *options;
	const perturb_workload *workload;
	char library[4096];
	char exec_guard[4096];
	int cpu;
} run_context;

/* The exec guard (preload/exec_guard.c) beside libplumb.so: in the build
 * tree next to it, installed in LIBDIR/plumb. */
static int find_exec_guard(const char *library, char *out, size_t length, plumb_status *status)
{
	const char *slash = strrchr(library, '/');
	int dir = slash ? (int)(slash - library) : 1;
	const char *base = slash ? library : ".";
	const char *candidates[] = { "/libplumb-exec-guard.so", "/plumb/libplumb-exec-guard.so" };
	for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
		int n = snprintf(out, length, "%.*s%s", dir, base, candidates[i]);
		struct stat info;
		if (n > 0 && (size_t)n < length && stat(out, &info) == 0 && S_ISREG(info.st_mode))
			return 0;
	}
	return plumb_fail(status, ENOENT, "libplumb-exec-guard.so not found beside %s (make builds it)", library);
}

/* One child: pinned, agent on, program run, message back.  0 or -1. */
static int run_child(const run_context *rc, const perturb_agent_spec *spec, perturb_agent_message *message,
                     int *exit_status, plumb_status *status)
{
	int pipe_fds[2], failed[2];
	if (pipe2(pipe_fds, O_CLOEXEC) != 0)
		return plumb_fail_errno(status, errno, "pipe");
	if (pipe2(failed, O_CLOEXEC) != 0) {
		close(pipe_fds[0]);
		close(pipe_fds[1]);
		return plumb_fail_errno(status, errno, "pipe");
	}
	fflush(NULL);
	pid_t child = interrupt_fork_command();
	if (child < 0) {
		int err = errno;
		close(pipe_fds[0]); close(pipe_fds[1]); close(failed[0]); close(failed[1]);
		return plumb_fail_errno(status, err, "fork");
	}
	if (child == 0) {
		close(pipe_fds[0]);
		close(failed[0]);
		plumb_status child_status;
		if (cpu_pin_self(rc->cpu, &child_status) != 0) {
			perturb_agent_message m;
			perturb_agent_fail_message(&m, child_status.message);
			perturb_agent_send(pipe_fds[1], &m);
			_exit(126);
		}
		if (!rc->options->show_output || spec->calibrate_halts > 0) {
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0) {
				dup2(null, STDOUT_FILENO);
				close(null);
			}
		}
		if (rc->workload || spec->calibrate_halts > 0) {
			perturb_agent *agent;
			perturb_agent_message m;
			if (perturb_agent_begin(spec, &agent, &child_status) != 0) {
				perturb_agent_fail_message(&m, child_status.message);
			} else {
				if (rc->workload && spec->calibrate_halts == 0) {
					uint64_t size = rc->options->workload_size ? rc->options->workload_size
					                                            : rc->workload->default_size;
					uint64_t sum = rc->workload->run(size, rc->options->workload_parameter, NULL, NULL);
					__asm__ volatile("" : : "r"(sum));
				}
				perturb_agent_end(agent, &m);
			}
			perturb_agent_send(pipe_fds[1], &m);
			_exit(0);
		}
		char fd_text[16], spec_text[2048], preload[16384];
		fcntl(pipe_fds[1], F_SETFD, 0);
		snprintf(fd_text, sizeof fd_text, "%d", pipe_fds[1]);
		perturb_agent_spec_format(spec, spec_text, sizeof spec_text);
		const char *previous = secure_getenv("LD_PRELOAD");
		/* the guard first: its exec functions are the ones the command calls */
		int length = snprintf(preload, sizeof preload, "%s:%s%s%s", rc->exec_guard, rc->library,
		                      previous && previous[0] ? ":" : "", previous ? previous : "");
		if (length < 0 || (size_t)length >= sizeof preload) {
			int err = E2BIG;
			if (write(failed[1], &err, sizeof err) < 0)
				_exit(127);
			_exit(127);
		}
		char pid_text[24];
		snprintf(pid_text, sizeof pid_text, "%ld", (long)getpid());
		setenv(PERTURB_AGENT_PID_ENV, pid_text, 1);
		setenv(PERTURB_AGENT_FD_ENV, fd_text, 1);
		setenv(PERTURB_AGENT_SPEC_ENV, spec_text, 1);
		setenv("LD_PRELOAD", preload, 1);
		execvp(rc->options->command[0], rc->options->command);
		int err = errno;
		if (write(failed[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipe_fds[1]);
	close(failed[1]);
	int exec_errno = 0;
	ssize_t got = read(failed[0], &exec_errno, sizeof exec_errno);
	close(failed[0]);
	int wstatus = 0;
	interrupt_waitpid(child, &wstatus);
	*exit_status = wstatus;
	int rc_read = read_message(pipe_fds[0], message);
	close(pipe_fds[0]);
	if (got == (ssize_t)sizeof exec_errno)
		return plumb_fail(status, exec_errno, "cannot run '%s': %s", rc->options->command[0],
		                  strerror(exec_errno));
	if (rc_read != 0) {
		if (WIFSIGNALED(wstatus))
			return plumb_fail(status, EIO, "the program was killed by signal %d before it reported",
			                  WTERMSIG(wstatus));
		return plumb_fail(status, EIO, "the program ended without the agent's report (exit status %d): "
		                  "a statically linked program, or one that leaves with _exit, cannot be halted",
		                  WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
	}
	if (message->failed)
		return plumb_fail(status, EIO, "%s", message->message);
	if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
		return plumb_fail(status, EIO, "the program failed (%s %d)",
		                  WIFEXITED(wstatus) ? "exit status" : "signal",
		                  WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus));
	return 0;
}

/* The spin loop's speed on the chosen CPU: iterations per ns, the fastest of
 * several tries (a preempted try is only slower). */
static int calibrate_spin(int cpu, double *per_ns, plumb_status *status)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return plumb_fail_errno(status, errno, "pipe");
	pid_t child = interrupt_fork(true);
	if (child < 0)
		return plumb_fail_errno(status, errno, "fork");
	if (child == 0) {
		plumb_status s;
		cpu_pin_self(cpu, &s);
		double best = 0;
		for (int i = 0; i < 7; i++) {
			uint64_t iterations = 4000000, start = now_ns();
			perturb_spin(iterations);
			double rate = (double)iterations / (double)(now_ns() - start + 1);
			if (rate > best)
				best = rate;
		}
		if (write(fds[1], &best, sizeof best) < 0)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	double rate = 0;
	ssize_t got = read(fds[0], &rate, sizeof rate);
	close(fds[0]);
	int wstatus;
	interrupt_waitpid(child, &wstatus);
	if (got != (ssize_t)sizeof rate || !(rate > 0))
		return plumb_fail(status, EIO, "calibrating the spin loop failed");
	*per_ns = rate;
	return 0;
}

static void dummy_callback(const counter_sample *sample, void *context) { (void)sample; (void)context; }

/* The halt clock, checked the way a run would open it, before any run. */
static int check_clock(const char *clock, plumb_status *status)
{
	counter_sampler_options o;
	memset(&o, 0, sizeof o);
	o.event = clock;
	o.period = 1000000000ull;
	o.callback = dummy_callback;
	counter_sampler *s;
	plumb_status inner;
	if (counter_sampler_open(&s, &o, &inner) != 0)
		return plumb_fail(status, inner.code ? inner.code : ENOENT, "the halt clock '%s' cannot "
		                  "interrupt the program here (%s)%s", clock, inner.message,
		                  strcmp(clock, "task-clock") ? "; --clock task-clock works without a PMU" : "");
	counter_sampler_close(s);
	return 0;
}

static void fill_spec(const perturb_result *r, const perturb_config *c, perturb_agent_spec *spec)
{
	memset(spec, 0, sizeof *spec);
	if (!c->baseline) {
		double units = c->interval * r->clock_period_scale;
		spec->interval = units < 1 ? 1 : (uint64_t)llround(units);
		spec->halt_ns = (uint64_t)llround(c->halt * 1e9);
	}
	spec->spin_per_ns = r->spin_iterations_per_second / 1e9;
	spec->footprint = r->options.footprint;
	snprintf(spec->clock, sizeof spec->clock, "%s", r->clock);
	size_t used = 0;
	for (size_t i = 0; i < r->n_events; i++)
		used += (size_t)snprintf(spec->events + used, sizeof spec->events - used, "%s%s", i ? "," : "",
		                         r->events[i]);
}

static int calibrate_config(const run_context *rc, perturb_result *r, size_t index, plumb_status *status)
{
	perturb_calibration *cal = &r->calibrations[index];
	const perturb_config *c = &r->design.configs[index];
	cal->halt = c->halt;
	for (size_t e = 0; e < PERTURB_MAX_EVENTS; e++)
		cal->per_halt[e] = c->baseline ? 0 : NAN;
	if (c->baseline)
		return 0;
	/* Enough halts for a stable mean, at most about 20 ms of spinning. */
	double k = c->halt > 0 ? 0.02 / c->halt : 200;
	int halts = k < 5 ? 5 : k > 200 ? 200 : (int)k;
	perturb_agent_spec spec;
	fill_spec(r, c, &spec);
	spec.interval = 0;
	spec.calibrate_halts = halts;
	perturb_agent_message m;
	int exit_status;
	if (run_child(rc, &spec, &m, &exit_status, status) != 0)
		return -1;
	for (size_t e = 0; e < r->n_events && e < m.count; e++)
		if (counter_value_usable(&m.raw[e]))
			cal->per_halt[e] = m.raw[e].value / halts;
	cal->seconds_per_halt = (double)m.halted_ns / 1e9 / halts;
	cal->cpu_seconds_per_halt = (double)m.halted_cpu_ns / 1e9 / halts;
	return 0;
}

int perturb_experiment_run(const perturb_options *options, const perturb_design *design,
                           perturb_result **out, plumb_status *status)
{
	*out = NULL;
	if ((options->command == NULL) == (options->workload == NULL))
		return plumb_fail(status, EINVAL, "give a command or a workload (not both)");
	if (options->command && !options->command[0])
		return plumb_fail(status, EINVAL, "an empty command");
	if (options->runs < 2 || options->runs > PERTURB_MAX_RUNS)
		return plumb_fail(status, EINVAL, "runs must be 2 to %d (a confidence interval needs 2)",
		                  PERTURB_MAX_RUNS);
	if (options->n_events == 0 || options->n_events > PERTURB_MAX_EVENTS)
		return plumb_fail(status, EINVAL, "1 to %d events", PERTURB_MAX_EVENTS);
	if (design->n < 2)
		return plumb_fail(status, EINVAL, "a design needs a configuration beside the baseline");
	run_context rc;
	memset(&rc, 0, sizeof rc);
	rc.options = options;
	if (options->workload) {
		rc.workload = perturb_workload_find(options->workload);
		if (!rc.workload)
			return plumb_fail(status, EINVAL, "unknown workload '%s' (plumb perturb --list-workloads)",
			                  options->workload);
	} else if (!stat_agent_library(rc.library, sizeof rc.library, status) ||
	           find_exec_guard(rc.library, rc.exec_guard, sizeof rc.exec_guard, status) != 0) {
		return -1;
	}
	int cpus[1024];
	int n_cpus = cpu_allowed(cpus, 1024, status);
	if (n_cpus <= 0)
		return n_cpus < 0 ? -1 : plumb_fail(status, EINVAL, "no CPU in the affinity mask");
	rc.cpu = cpus[n_cpus - 1];
	if (options->cpu >= 0) {
		if (cpu_check_allowed(&options->cpu, 1, status) != 0)
			return -1;
		rc.cpu = options->cpu;
	}
	const char *clock = options->clock ? options->clock : "task-clock";
	if (check_clock(clock, status) != 0)
		return -1;

	perturb_result *r = calloc(1, sizeof *r);
	if (!r)
		return plumb_fail(status, ENOMEM, "out of memory");
	r->design = *design;
	r->options = *options;
	r->cpu = rc.cpu;
	snprintf(r->clock, sizeof r->clock, "%s", clock);
	r->n_events = options->n_events;
	for (size_t e = 0; e < r->n_events; e++)
		snprintf(r->events[e], sizeof r->events[e], "%s", options->events[e]);
	if (options->command) {
		size_t used = 0;
		for (size_t i = 0; options->command[i] && used < sizeof r->command_text; i++)
			used += (size_t)snprintf(r->command_text + used, sizeof r->command_text - used, "%s%s",
			                         i ? " " : "", options->command[i]);
	} else {
		snprintf(r->command_text, sizeof r->command_text, "workload %s", options->workload);
	}
	if (!strcmp(clock, "task-clock") || !strcmp(clock, "cpu-clock")) {
		r->clock_period_scale = 1e9;
	} else if (options->cycles_per_second > 0) {
		r->clock_period_scale = options->cycles_per_second;
	} else {
		timer_calibration calibration;
		if (timer_calibrate(&calibration, 50, status) != 0) {
			perturb_result_free(r);
			return -1;
		}
		r->clock_period_scale = calibration.ticks_per_ns * 1e9;
	}
	uint64_t start = now_ns();
	if (calibrate_spin(rc.cpu, &r->spin_iterations_per_second, status) != 0) {
		perturb_result_free(r);
		return -1;
	}
	r->spin_iterations_per_second *= 1e9;
	for (size_t c = 0; c < design->n; c++)
		if (calibrate_config(&rc, r, c, status) != 0) {
			perturb_result_free(r);
			return -1;
		}
	size_t total = design->n * options->runs;
	r->runs = calloc(total, sizeof *r->runs);
	if (!r->runs) {
		perturb_result_free(r);
		return plumb_fail(status, ENOMEM, "out of memory");
	}
	progress bar;
	if (options->progress)
		progress_begin(&bar, "plumb perturb", total);
	for (size_t repetition = 0; repetition < options->runs; repetition++) {
		for (size_t c = 0; c < design->n; c++) {
			perturb_run *run = &r->runs[r->n_runs];
			run->config = c;
			run->repetition = repetition;
			run->order = r->n_runs;
			run->cpu = rc.cpu;
			perturb_agent_spec spec;
			fill_spec(r, &design->configs[c], &spec);
			perturb_agent_message m;
			int exit_status;
			double before = interrupts_on(rc.cpu);
			if (run_child(&rc, &spec, &m, &exit_status, status) != 0) {
				char message[PLUMB_MESSAGE_MAX];
				snprintf(message, sizeof message, "%s", status->message);
				plumb_fail(status, status->code, "run %zu of %s: %s", repetition + 1,
				           design->configs[c].name, message);
				if (options->progress)
					progress_end(&bar);
				perturb_result_free(r);
				return -1;
			}
			run->interrupts = interrupts_on(rc.cpu) - before;
			run->halts = m.halts;
			run->halted_seconds = (double)m.halted_ns / 1e9;
			run->halted_cpu_seconds = (double)m.halted_cpu_ns / 1e9;
			run->longest_halt_seconds = (double)m.longest_halt_ns / 1e9;
			run->halt_preemptions = m.halt_preemptions;
			run->halt_waits = m.halt_waits;
			run->running_seconds = (double)m.running_ns / 1e9;
			run->wall_seconds = (double)m.wall_ns / 1e9;
			run->tsc_cycles = (double)m.tsc_cycles;
			run->deferred_signals = m.deferred_signals;
			for (size_t e = 0; e < r->n_events && e < m.count; e++) {
				run->raw[e] = m.raw[e];
				run->excluded[e] = m.excluded[e];
			}
			if (r->n_runs == 0)
				for (size_t e = 0; e < r->n_events; e++)
					r->opened[e] = m.raw[e];
			r->n_runs++;
			if (options->progress)
				progress_step(&bar, r->n_runs);
		}
	}
	if (options->progress)
		progress_end(&bar);
	r->elapsed_seconds = (double)(now_ns() - start) / 1e9;
	*out = r;
	return 0;
}

void perturb_result_free(perturb_result *result)
{
	if (!result)
		return;
	free(result->runs);
	free(result);
}
