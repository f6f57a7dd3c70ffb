/* The agent that halts a program from inside it, as Watson's (2004) interrupt
 * service routine halted SPEC CPU2000 on a Pentium 4.
 *
 * The halt clock is the program's own running time: a task-clock sampler
 * (or hardware cycles where a PMU exists) overflows every f seconds of it
 * and its signal runs the halt handler in the program's thread.  The handler
 *  1. blocks every signal (the user-space stand-in for "interrupts
 *     disabled"; real interrupts cannot be masked from user space, so the
 *     runner records /proc/interrupts deltas instead);
 *  2. pauses the halt clock, so its own time does not count toward the next
 *     interval (f stays f), and pauses the "excluded" counter set (the
 *     thesis's second correction: counters disabled inside the handler);
 *  3. touches the footprint a real drain would (data lines, fresh pages,
 *     code), then spins a calibrated loop until t of the thread's CPU time
 *     has passed (t = 0: entry and exit only);
 *  4. counts the halt, its wall length and CPU time, the context switches
 *     in it and the signals that arrived meanwhile, and resumes.
 * A "raw" counter set runs throughout, handler included; the runner
 * subtracts a calibration of the handler from it (the first correction).
 *
 * Two ways in: a built-in workload calls begin/end in a forked child; a
 * command gets libplumb.so preloaded and the constructor below does the
 * same, driven by two environment variables, writing its message at exit.
 * The agent's pipe stays open across exec, so a command that is a wrapper
 * script exec'ing the real program reports from the real program.
 * Its state is process-wide by nature in that case (a constructor and an
 * exit handler share it): the one static pointer below, used only in a
 * process started with the agent's variables. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "perturb/perturb_internal.h"
#include "core/timer.h"

struct perturb_agent {
	perturb_agent_spec spec;
	uint64_t spin_chunk;
	counter_sampler *sampler;
	counter_set *raw, *excluded;
	size_t n;
	const char *names[PERTURB_MAX_EVENTS];
	char storage[sizeof ((perturb_agent_spec *)0)->events];
	volatile unsigned char *lines;
	size_t lines_bytes;
	unsigned char *pages;
	size_t pages_bytes;
	unsigned char *code;
	size_t code_bytes;
	void *signal_stack;
	bool signal_stack_set;
	stack_t previous_stack;
	volatile uint64_t halts, halted_ns, halted_cpu_ns, longest_ns, preemptions, waits, deferred;
	uint64_t begin_ns, begin_tsc, begin_cpu_ns;
	clockid_t halted_thread_clock;   /* the CPU clock of the thread begin ran in */
	bool have_thread_clock;
};

void perturb_spin(uint64_t iterations)
{
	for (uint64_t i = 0; i < iterations; i++)
		__asm__ volatile("" ::: "memory");
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time: what the program's running time is made
 * of, and what a halt is bounded by (a halt takes t of the program's CPU,
 * as on a CPU the program owns, however long the scheduler keeps it off). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return now_ns();
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Context switches of the calling thread so far: involuntary (the
 * scheduler took its CPU) and voluntary (it waited, e.g. in a page fault).
 * A hypervisor taking the virtual CPU is neither: it shows only as a halt
 * longer on the wall clock than these explain. */
static void context_switches(uint64_t *involuntary, uint64_t *voluntary)
{
	struct rusage usage;
	if (getrusage(RUSAGE_THREAD, &usage) != 0)
		memset(&usage, 0, sizeof usage);
	*involuntary = (uint64_t)usage.ru_nivcsw;
	*voluntary = (uint64_t)usage.ru_nvcsw;
}

static void touch_footprint(perturb_agent *a)
{
	for (size_t i = 0; i < a->lines_bytes; i += 64)
		a->lines[i] = (unsigned char)(a->lines[i] + 1);
	if (a->pages) {
		for (size_t i = 0; i < a->pages_bytes; i += 4096)
			a->pages[i] = 1;
		/* Given back, so the next halt faults on them again like a driver's fresh pages. */
		madvise(a->pages, a->pages_bytes, MADV_DONTNEED);
	}
	if (a->code) {
		void (*function)(void);
		memcpy(&function, &a->code, sizeof function);
		function();
	}
}

/* Async-signal-safe only: ioctl, sigprocmask, clock_gettime, madvise,
 * getrusage (a plain system call). */
static void halt_handler(const counter_sample *sample, void *context)
{
	(void)sample;
	perturb_agent *a = context;
	sigset_t all, previous, pending;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &previous);
	counter_pause(a->excluded);
	if (a->sampler)
		counter_sampler_pause(a->sampler);
	uint64_t start = now_ns(), start_cpu = thread_cpu_ns(), preempted, waited, preempted_end, waited_end;
	context_switches(&preempted, &waited);
	touch_footprint(a);
	/* Watson's nested loop: an inner loop calibrated to a fixed time (1 ms
	 * there; 1 us here, for scaled halts), run until t has passed.  His
	 * loop ran with interrupts disabled on a CPU nothing else could take;
	 * here the scheduler can take the CPU in the middle of a halt (a 5 ms
	 * halt bounded by the wall clock was measured at 14-21 ms on a shared
	 * machine: the thread was switched out mid-spin and came back long
	 * after t).  So the halt is bounded by the thread's own CPU clock: it
	 * takes exactly t of the program's CPU, as it would on a CPU the program
	 * owns; its wall length (t and the time the CPU was taken away) is
	 * measured and reported beside it. */
	if (a->spec.halt_ns > 0)
		while (thread_cpu_ns() - start_cpu < a->spec.halt_ns)
			perturb_spin(a->spin_chunk);
	uint64_t end = now_ns(), end_cpu = thread_cpu_ns();
	a->halts = a->halts + 1;
	a->halted_ns = a->halted_ns + (end - start);
	a->halted_cpu_ns = a->halted_cpu_ns + (end_cpu - start_cpu);
	if (end - start > a->longest_ns)
		a->longest_ns = end - start;
	context_switches(&preempted_end, &waited_end);
	a->preemptions = a->preemptions + (preempted_end - preempted);
	a->waits = a->waits + (waited_end - waited);
	if (sigpending(&pending) == 0)
		for (int s = 1; s < NSIG; s++)
			if (sigismember(&pending, s) == 1)
				a->deferred = a->deferred + 1;
	if (a->sampler)
		counter_sampler_resume(a->sampler);
	counter_resume(a->excluded);
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
}

void perturb_agent_spec_format(const perturb_agent_spec *spec, char *text, size_t length)
{
	snprintf(text, length, "%llu,%llu,%.17g,%llu,%llu,%llu,%d,%s;%s",
	         (unsigned long long)spec->interval, (unsigned long long)spec->halt_ns, spec->spin_per_ns,
	         (unsigned long long)spec->footprint.lines, (unsigned long long)spec->footprint.pages,
	         (unsigned long long)spec->footprint.code_bytes, spec->calibrate_halts, spec->clock,
	         spec->events);
}

int perturb_agent_spec_parse(const char *text, perturb_agent_spec *spec)
{
	memset(spec, 0, sizeof *spec);
	unsigned long long interval, halt, lines, pages, code;
	int used = 0;
	if (sscanf(text, "%llu,%llu,%lg,%llu,%llu,%llu,%d,%n", &interval, &halt, &spec->spin_per_ns, &lines,
	           &pages, &code, &spec->calibrate_halts, &used) != 7 || used == 0)
		return -1;
	const char *rest = text + used, *semicolon = strchr(rest, ';');
	if (!semicolon || (size_t)(semicolon - rest) >= sizeof spec->clock ||
	    strlen(semicolon + 1) >= sizeof spec->events)
		return -1;
	memcpy(spec->clock, rest, (size_t)(semicolon - rest));
	snprintf(spec->events, sizeof spec->events, "%s", semicolon + 1);
	spec->interval = interval;
	spec->halt_ns = halt;
	spec->footprint.lines = lines;
	spec->footprint.pages = pages;
	spec->footprint.code_bytes = code;
	return 0;
}

#define AGENT_SIGNAL_STACK (64 * 1024)

static void agent_free(perturb_agent *a)
{
	if (!a)
		return;
	counter_sampler_close(a->sampler);
	if (a->signal_stack_set)
		sigaltstack(&a->previous_stack, NULL);
	if (a->signal_stack)
		munmap(a->signal_stack, AGENT_SIGNAL_STACK);
	counter_close(a->raw);
	counter_close(a->excluded);
	if (a->lines)
		free((void *)a->lines);
	if (a->pages)
		munmap(a->pages, a->pages_bytes);
	if (a->code)
		munmap(a->code, a->code_bytes);
	free(a);
}

static int build_footprint(perturb_agent *a, plumb_status *status)
{
	const perturb_footprint *f = &a->spec.footprint;
	if (f->lines) {
		a->lines_bytes = (size_t)f->lines * 64;
		void *p = NULL;
		if (posix_memalign(&p, 4096, a->lines_bytes) != 0)
			return plumb_fail(status, ENOMEM, "out of memory for the footprint");
		memset(p, 0, a->lines_bytes);
		a->lines = p;
	}
	if (f->pages) {
		a->pages_bytes = (size_t)f->pages * 4096;
		void *p = mmap(NULL, a->pages_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return plumb_fail_errno(status, errno, "mapping the footprint's pages");
		a->pages = p;
	}
	if (f->code_bytes) {
		size_t page = 4096;
		a->code_bytes = ((size_t)f->code_bytes + 1 + page - 1) / page * page;
		void *p = mmap(NULL, a->code_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return plumb_fail_errno(status, errno, "mapping the footprint's code");
		/* CODE bytes of nop, then ret: every line and page of it is fetched. */
		memset(p, 0x90, (size_t)f->code_bytes);
		((unsigned char *)p)[f->code_bytes] = 0xc3;
		if (mprotect(p, a->code_bytes, PROT_READ | PROT_EXEC) != 0) {
			int err = errno;
			munmap(p, a->code_bytes);
			return plumb_fail_errno(status, err, "making the footprint's code executable");
		}
		a->code = p;
	}
	return 0;
}

int perturb_agent_begin(const perturb_agent_spec *spec, perturb_agent **out, plumb_status *status)
{
	*out = NULL;
	perturb_agent *a = calloc(1, sizeof *a);
	if (!a)
		return plumb_fail(status, ENOMEM, "out of memory");
	a->spec = *spec;
	a->spin_chunk = (uint64_t)llround(1000.0 * spec->spin_per_ns);
	if (a->spin_chunk == 0)
		a->spin_chunk = 1;
	if (counter_event_list_parse(spec->events, a->storage, sizeof a->storage, a->names, &a->n, status) != 0 ||
	    build_footprint(a, status) != 0) {
		agent_free(a);
		return -1;
	}
	if (a->n > PERTURB_MAX_EVENTS) {
		agent_free(a);
		return plumb_fail(status, E2BIG, "at most %d events", PERTURB_MAX_EVENTS);
	}
	if (counter_set_open(&a->raw, "perf", a->names, a->n, NULL, status) != 0 ||
	    counter_set_open(&a->excluded, "perf", a->names, a->n, NULL, status) != 0) {
		agent_free(a);
		return -1;
	}
	if (spec->interval > 0 && spec->calibrate_halts == 0) {
		/* The handler runs on a stack of its own, touched now, as an
		 * interrupt handler runs on the kernel's: otherwise the signal frame
		 * lands on stack pages the program never touched, and every halted
		 * run shows a page fault or two the program did not cause. */
		stack_t current;
		void *stack = mmap(NULL, AGENT_SIGNAL_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stack != MAP_FAILED && sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
			memset(stack, 0, AGENT_SIGNAL_STACK);
			stack_t ours = { .ss_sp = stack, .ss_size = AGENT_SIGNAL_STACK, .ss_flags = 0 };
			a->signal_stack = stack;
			if (sigaltstack(&ours, &a->previous_stack) == 0)
				a->signal_stack_set = true;
		} else if (stack != MAP_FAILED) {
			munmap(stack, AGENT_SIGNAL_STACK);
		}
		counter_sampler_options options;
		memset(&options, 0, sizeof options);
		options.event = spec->clock;
		options.period = spec->interval;
		options.callback = halt_handler;
		options.context = a;
		/* The program's running time in the kernel (its system calls) counts
		 * toward f where perf allows it (root, or perf_event_paranoid <= 1):
		 * a user-only clock skips overflows that land in the kernel. */
		options.domain = COUNTER_DOMAIN_ALL;
		if (counter_sampler_open(&a->sampler, &options, status) != 0)
			options.domain = COUNTER_DOMAIN_USER;
		if (!a->sampler && counter_sampler_open(&a->sampler, &options, status) != 0) {
			agent_free(a);
			return -1;
		}
	}
	/* One halt before counting, undone: the handler's first calls resolve
	 * their library symbols (lazy binding writes the GOT, a page fault in a
	 * forked child) and would charge that to the first halted run only. */
	halt_handler(NULL, a);
	a->halts = a->halted_ns = a->halted_cpu_ns = a->longest_ns = a->preemptions = a->waits = a->deferred = 0;
	if (counter_start(a->raw, status) != 0 || counter_start(a->excluded, status) != 0 ||
	    (a->sampler && counter_sampler_start(a->sampler, status) != 0)) {
		agent_free(a);
		return -1;
	}
	a->begin_ns = now_ns();
	/* The halted thread's own clock, read at the end even where another
	 * thread calls exit (a command's exit handler runs in the caller). */
	a->have_thread_clock = pthread_getcpuclockid(pthread_self(), &a->halted_thread_clock) == 0;
	a->begin_cpu_ns = thread_cpu_ns();
	a->begin_tsc = timer_tsc_begin();
	if (spec->calibrate_halts > 0)
		for (int i = 0; i < spec->calibrate_halts; i++)
			halt_handler(NULL, a);
	*out = a;
	return 0;
}

void perturb_agent_fail_message(perturb_agent_message *message, const char *text)
{
	memset(message, 0, sizeof *message);
	message->magic = PERTURB_AGENT_MAGIC;
	message->failed = 1;
	snprintf(message->message, sizeof message->message, "%s", text);
}

void perturb_agent_end(perturb_agent *a, perturb_agent_message *message)
{
	memset(message, 0, sizeof *message);
	message->magic = PERTURB_AGENT_MAGIC;
	plumb_status status;
	uint64_t end_tsc = timer_tsc_end();
	uint64_t end = now_ns(), end_cpu = thread_cpu_ns();
	struct timespec ts;
	if (a->have_thread_clock && clock_gettime(a->halted_thread_clock, &ts) == 0)
		end_cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* The counters first: stopping the sampler drains its ring, which is
	 * the agent's work, not the program's. */
	counter_stop(a->raw, &status);
	counter_stop(a->excluded, &status);
	if (a->sampler)
		counter_sampler_stop(a->sampler, &status);
	if (counter_read(a->raw, message->raw, &status) != 0 ||
	    counter_read(a->excluded, message->excluded, &status) != 0) {
		perturb_agent_fail_message(message, status.message);
		agent_free(a);
		return;
	}
	message->count = (uint32_t)a->n;
	message->halts = a->halts;
	message->halted_ns = a->halted_ns;
	message->halted_cpu_ns = a->halted_cpu_ns;
	message->longest_halt_ns = a->longest_ns;
	message->halt_preemptions = a->preemptions;
	message->halt_waits = a->waits;
	message->running_ns = end_cpu > a->begin_cpu_ns ? end_cpu - a->begin_cpu_ns : 0;
	message->deferred_signals = a->deferred;
	message->wall_ns = end - a->begin_ns;
	message->tsc_cycles = end_tsc - a->begin_tsc;
	agent_free(a);
}

void perturb_agent_send(int fd, const perturb_agent_message *message)
{
	const char *p = (const char *)message;
	size_t length = sizeof *message;
	while (length > 0) {
		ssize_t written = write(fd, p, length);
		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0)
			return;
		p += written;
		length -= (size_t)written;
	}
}

/* ------------------------------------------------- preloaded into a command */

static struct {
	int fd;
	pid_t pid;
	perturb_agent *agent;
} preloaded = { .fd = -1 };

static void preloaded_finish(void)
{
	/* A child forked without exec (a shell's subshell) inherits this exit
	 * handler: only the agent's own process reports. */
	if (preloaded.fd < 0 || !preloaded.agent || getpid() != preloaded.pid)
		return;
	perturb_agent_message message;
	perturb_agent_end(preloaded.agent, &message);
	preloaded.agent = NULL;
	perturb_agent_send(preloaded.fd, &message);
	close(preloaded.fd);
	preloaded.fd = -1;
}

__attribute__((constructor))
static void preloaded_start(void)
{
	const char *fd_text = secure_getenv(PERTURB_AGENT_FD_ENV), *spec_text = secure_getenv(PERTURB_AGENT_SPEC_ENV),
	           *pid_text = secure_getenv(PERTURB_AGENT_PID_ENV);
	if (!fd_text || !spec_text || !pid_text)
		return;
	/* The agent is the process the runner started, whatever it execs into
	 * (a wrapper script's exec keeps the pid and the variables); processes
	 * it starts inherit the variables but have another pid, and stay out. */
	char *end;
	long pid = strtol(pid_text, &end, 10);
	if (*end || pid != (long)getpid())
		return;
	long fd = strtol(fd_text, &end, 10);
	if (*end || fd < 0 || fd > 65535 || fcntl((int)fd, F_GETFD) < 0)
		return;
	preloaded.fd = (int)fd;
	preloaded.pid = getpid();
	perturb_agent_spec spec;
	int parsed = perturb_agent_spec_parse(spec_text, &spec);
	perturb_agent_message message;
	if (parsed != 0) {
		perturb_agent_fail_message(&message, "the perturbation agent was started with a malformed spec");
		perturb_agent_send(preloaded.fd, &message);
		close(preloaded.fd);
		preloaded.fd = -1;
		return;
	}
	plumb_status status;
	if (perturb_agent_begin(&spec, &preloaded.agent, &status) != 0) {
		perturb_agent_fail_message(&message, status.message);
		perturb_agent_send(preloaded.fd, &message);
		close(preloaded.fd);
		preloaded.fd = -1;
		return;
	}
	atexit(preloaded_finish);
}
