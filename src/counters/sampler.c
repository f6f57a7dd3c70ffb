/* Sampling: an overflow every `period` events stops the counted thread and
 * runs a callback there.  This is how a perturbation experiment (seed 004)
 * halts a program every N events or N ns of its own run time.
 *
 * Delivery: the kernel writes a sample record into the event's mmap ring
 * buffer and, because wakeup_events is 1, signals the owner at each record.
 * The owner is this very thread (F_SETOWN_EX, F_OWNER_TID) and the signal is
 * a real-time one (F_SETSIG), so signals queue instead of merging and the
 * handler runs in the counted thread, right after the overflowing event.
 * The handler drains the ring and calls the callback once per record. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "counters/perf_events.h"
#include "counters/counters.h"

struct counter_sampler {
	int fd;
	int signal_number;
	counter_sample_fn callback;
	void *context;
	struct perf_event_mmap_page *page;   /* header page; data follows */
	size_t data_size;                    /* bytes, a power of two */
	size_t map_size;
	uint64_t sample_type;
	uint64_t period;
	atomic_uint_fast64_t callbacks;
	atomic_uint_fast64_t lost;
	int registry_slot;
};

/* The signal handler finds its sampler from the fd the signal names
 * (si_fd).  This registry is the one piece of process-wide mutable state the
 * sampler needs: a signal handler cannot be handed a pointer.  Slots are
 * claimed and released with atomic exchanges; a handler that finds no
 * sampler for its fd ignores the signal. */
#define SAMPLER_REGISTRY_SIZE 64
static _Atomic(counter_sampler *) sampler_registry[SAMPLER_REGISTRY_SIZE];

static counter_sampler *registry_find(int fd)
{
	for (size_t i = 0; i < SAMPLER_REGISTRY_SIZE; i++) {
		counter_sampler *s = atomic_load(&sampler_registry[i]);
		if (s && s->fd == fd)
			return s;
	}
	return NULL;
}

/* Copies len bytes at ring offset `offset`, which may wrap around the end. */
static void ring_copy(const counter_sampler *s, uint64_t offset, void *out, size_t len)
{
	const unsigned char *data = (const unsigned char *)s->page + s->page->data_offset;
	size_t start = offset & (s->data_size - 1);
	size_t first = len < s->data_size - start ? len : s->data_size - start;
	memcpy(out, data + start, first);
	memcpy((unsigned char *)out + first, data, len - first);
}

static void sampler_drain(counter_sampler *s)
{
	uint64_t head = atomic_load_explicit((_Atomic uint64_t *)&s->page->data_head, memory_order_acquire);
	uint64_t tail = s->page->data_tail;
	while (tail < head) {
		struct perf_event_header header;
		ring_copy(s, tail, &header, sizeof header);
		if (header.size < sizeof header)
			break;
		unsigned char record[512];
		size_t body = header.size - sizeof header;
		if (body > sizeof record)
			body = sizeof record;
		ring_copy(s, tail + sizeof header, record, body);
		if (header.type == PERF_RECORD_SAMPLE) {
			/* Fields come in PERF_SAMPLE_* bit order: IP, TID, TIME, PERIOD. */
			counter_sample sample;
			memset(&sample, 0, sizeof sample);
			const unsigned char *p = record;
			if (s->sample_type & PERF_SAMPLE_IP) { memcpy(&sample.ip, p, 8); p += 8; }
			if (s->sample_type & PERF_SAMPLE_TID) { memcpy(&sample.pid, p, 4); memcpy(&sample.tid, p + 4, 4); p += 8; }
			if (s->sample_type & PERF_SAMPLE_TIME) { memcpy(&sample.time_ns, p, 8); p += 8; }
			if (s->sample_type & PERF_SAMPLE_PERIOD) { memcpy(&sample.period, p, 8); p += 8; }
			if (!(s->sample_type & PERF_SAMPLE_PERIOD))
				sample.period = s->period;
			sample.index = atomic_fetch_add(&s->callbacks, 1) + 1;
			if (s->callback)
				s->callback(&sample, s->context);
		} else if (header.type == PERF_RECORD_LOST && body >= 16) {
			uint64_t lost;
			memcpy(&lost, record + 8, 8);
			atomic_fetch_add(&s->lost, lost);
		}
		tail += header.size;
	}
	atomic_store_explicit((_Atomic uint64_t *)&s->page->data_tail, tail, memory_order_release);
}

static void sampler_signal_handler(int signal_number, siginfo_t *info, void *unused)
{
	(void)signal_number;
	(void)unused;
	int saved_errno = errno;
	counter_sampler *s = registry_find(info->si_fd);
	if (s)
		sampler_drain(s);
	errno = saved_errno;
}

static int install_handler(int signal_number, plumb_status *status)
{
	struct sigaction current;
	if (sigaction(signal_number, NULL, &current) != 0)
		return plumb_fail_errno(status, errno, "sigaction(%d)", signal_number);
	if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == sampler_signal_handler)
		return 0;
	if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN)
		return plumb_fail(status, EBUSY, "signal %d already has a handler; choose another signal_number",
		                  signal_number);
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_sigaction = sampler_signal_handler;
	/* SA_ONSTACK: a thread that set up an alternate signal stack (a halt
	 * handler's agent does, as an interrupt has its own stack) runs the
	 * callback there; other threads run it on their own stack as before. */
	action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&action.sa_mask);
	if (sigaction(signal_number, &action, NULL) != 0)
		return plumb_fail_errno(status, errno, "sigaction(%d)", signal_number);
	return 0;
}

int counter_sampler_open(counter_sampler **out, const counter_sampler_options *options,
                         plumb_status *status)
{
	*out = NULL;
	if (!options || !options->event || !options->callback)
		return plumb_fail(status, EINVAL, "a sampler needs an event and a callback");
	if (options->period == 0)
		return plumb_fail(status, EINVAL, "a sampling period must be at least 1");
	size_t ring_pages = options->ring_pages ? options->ring_pages : 8;
	if (ring_pages & (ring_pages - 1))
		return plumb_fail(status, EINVAL, "ring_pages must be a power of two, not %zu", ring_pages);
	int signal_number = options->signal_number ? options->signal_number : COUNTER_SAMPLER_SIGNAL_DEFAULT;
	if (signal_number < 1 || signal_number > SIGRTMAX)
		return plumb_fail(status, EINVAL, "bad signal number %d", signal_number);
	perf_event_spec spec;
	char reason[COUNTER_REASON_MAX];
	if (perf_event_resolve(options->event, &spec, reason, sizeof reason) != 0)
		return plumb_fail(status, EINVAL, "unsupported: %s", reason);

	counter_sampler *s = calloc(1, sizeof *s);
	if (!s)
		return plumb_fail(status, ENOMEM, "out of memory");
	s->fd = -1;
	s->registry_slot = -1;
	s->signal_number = signal_number;
	s->callback = options->callback;
	s->context = options->context;
	/* No PERF_SAMPLE_PERIOD: with it, the kernel makes a software event
	 * (page-faults) write a record at every single event instead of every
	 * period events (perf_swevent_event, measured on Linux 6.18).  The period
	 * is fixed, so the callback gets the configured one. */
	s->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	s->period = options->period;

	struct perf_event_attr attr = spec.attr;
	attr.size = sizeof attr;
	attr.sample_period = options->period;
	attr.sample_type = s->sample_type;
	attr.wakeup_events = 1;
	attr.disabled = 1;
	attr.exclude_kernel = options->domain == COUNTER_DOMAIN_USER;
	attr.exclude_hv = options->domain == COUNTER_DOMAIN_USER;
	long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		counter_environment env;
		counter_environment_read(&env);
		counter_explain_errno(err, &env, reason, sizeof reason);
		free(s);
		return plumb_fail(status, err, "unsupported: %s: %s", options->event, reason);
	}
	s->fd = (int)fd;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	s->data_size = ring_pages * page;
	s->map_size = (ring_pages + 1) * page;
	void *map = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (map == MAP_FAILED) {
		int err = errno;
		close(s->fd);
		free(s);
		return plumb_fail_errno(status, err, "mapping the sample ring buffer");
	}
	s->page = map;
	/* Read every page now, so that the first overflows' handlers take no
	 * page faults of their own inside the program being measured. */
	for (size_t offset = 0; offset < s->map_size; offset += page)
		(void)*(volatile const unsigned char *)((const unsigned char *)map + offset);
	/* The handler writes data_tail: write it once now (with its own value)
	 * so that the header page is mapped writable before counting starts. */
	atomic_store_explicit((_Atomic uint64_t *)&s->page->data_tail,
	                      atomic_load((_Atomic uint64_t *)&s->page->data_tail), memory_order_release);
	for (int i = 0; i < SAMPLER_REGISTRY_SIZE && s->registry_slot < 0; i++) {
		counter_sampler *expected = NULL;
		if (atomic_compare_exchange_strong(&sampler_registry[i], &expected, s))
			s->registry_slot = i;
	}
	if (s->registry_slot < 0) {
		counter_sampler_close(s);
		return plumb_fail(status, EMFILE, "more than %d samplers open at once", SAMPLER_REGISTRY_SIZE);
	}
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = (pid_t)syscall(SYS_gettid) };
	if (install_handler(signal_number, status) != 0 ||
	    fcntl(s->fd, F_SETSIG, signal_number) != 0 || fcntl(s->fd, F_SETOWN_EX, &owner) != 0 ||
	    fcntl(s->fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0) {
		int err = errno;
		counter_sampler_close(s);
		if (status && status->message[0] == '\0')
			plumb_fail_errno(status, err, "arming overflow signals");
		return -1;
	}
	/* The signal may arrive blocked: plumb perturb's exec guard blocks it
	 * across an exec (preload/exec_guard.c), and a program may have blocked
	 * it.  Its handler is in place now, so this thread takes it. */
	sigset_t halt;
	sigemptyset(&halt);
	sigaddset(&halt, signal_number);
	pthread_sigmask(SIG_UNBLOCK, &halt, NULL);
	*out = s;
	return 0;
}

int counter_sampler_start(counter_sampler *s, plumb_status *status)
{
	if (ioctl(s->fd, PERF_EVENT_IOC_RESET, 0) != 0 || ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
		return plumb_fail_errno(status, errno, "starting the sampler");
	return 0;
}

int counter_sampler_stop(counter_sampler *s, plumb_status *status)
{
	if (ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0) != 0)
		return plumb_fail_errno(status, errno, "stopping the sampler");
	/* Records written after the last signal (none should be, but a signal
	 * can be pending) are drained here with the signal blocked. */
	sigset_t block, previous;
	sigemptyset(&block);
	sigaddset(&block, s->signal_number);
	pthread_sigmask(SIG_BLOCK, &block, &previous);
	sampler_drain(s);
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
	return 0;
}

int counter_sampler_pause(counter_sampler *s)
{
	return ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
}

int counter_sampler_resume(counter_sampler *s)
{
	return ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0);
}

uint64_t counter_sampler_callbacks(const counter_sampler *s) { return atomic_load(&((counter_sampler *)s)->callbacks); }
uint64_t counter_sampler_lost(const counter_sampler *s) { return atomic_load(&((counter_sampler *)s)->lost); }

void counter_sampler_close(counter_sampler *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
	/* Unregister before unmapping so a late signal finds nothing. */
	sigset_t block, previous;
	sigemptyset(&block);
	sigaddset(&block, s->signal_number);
	pthread_sigmask(SIG_BLOCK, &block, &previous);
	if (s->registry_slot >= 0)
		atomic_store(&sampler_registry[s->registry_slot], NULL);
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
	if (s->page)
		munmap(s->page, s->map_size);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}
