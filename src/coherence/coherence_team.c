/* Helper threads that put lines into a coherence state before each timed
 * pass.  A (the caller) sends each helper its step through a mailbox on a
 * cache line of its own and waits for the acknowledgement, so steps run in
 * the plan's order and never overlap.  Every wait is bounded: on a busy or
 * oversubscribed machine a helper may not run for a while, and the probe
 * must report that rather than hang. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "coherence/coherence.h"
#include "core/cpu.h"

#define MAILBOX_IDLE 0
#define MAILBOX_READY 1
#define MAILBOX_FAILED 2

typedef struct helper {
	_Alignas(128) _Atomic uint64_t request;   /* A increments to post a step */
	_Alignas(128) _Atomic uint64_t done;      /* helper copies request when finished */
	_Atomic int state;
	_Atomic int stop;
	uint8_t op;
	coherence_lines lines;
	coherence_counts counts;
	int cpu;
	char error[PLUMB_MESSAGE_MAX];
	pthread_t thread;
	bool started;
	uint64_t timeout_ns;
	cpu_features features;
} helper;

struct coherence_team {
	int roles;
	uint64_t timeout_ns;
	helper *helpers;             /* roles - 1 of them, for roles 1.. */
	coherence_counts own_counts; /* role 0, run by the caller */
	cpu_features features;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spins briefly (the fast path when the partner is running), then yields,
 * then sleeps, until *word != value or the deadline passes.  Returns 0 on
 * change, -1 on timeout. */
static int wait_while_equal(_Atomic uint64_t *word, uint64_t value, uint64_t timeout_ns, _Atomic int *stop)
{
	uint64_t start = 0;
	for (unsigned spins = 0;; spins++) {
		if (atomic_load_explicit(word, memory_order_acquire) != value)
			return 0;
		if (stop && atomic_load_explicit(stop, memory_order_relaxed))
			return -1;
		if (spins < 4096) {
			cpu_relax();
			continue;
		}
		uint64_t t = now_ns();
		if (!start)
			start = t;
		if (t - start > timeout_ns)
			return -1;
		if (t - start < 2000000)
			sched_yield();
		else
			nanosleep(&(struct timespec){ 0, 50000 }, NULL);
	}
}

static void run_op(uint8_t op, const coherence_lines *lines, coherence_counts *counts,
                   const cpu_features *features)
{
	uint64_t sink = 0;
	for (size_t i = 0; i < lines->count; i++) {
		volatile uint64_t *line = (volatile uint64_t *)(uintptr_t)(lines->base + (uint64_t)i * lines->spacing);
		switch (op) {
		case COHERENCE_OP_WRITE:
			line[1] = i;   /* second word: the chain pointer in the first stays */
			counts->writes++;
			break;
		case COHERENCE_OP_READ:
			sink += line[0];
			counts->reads++;
			break;
		case COHERENCE_OP_FLUSH:
			cpu_flush_range((const void *)line, 8, features);
			counts->flushes++;
			break;
		default:
			break;
		}
	}
	cpu_keep(sink);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void *helper_main(void *argument)
{
	helper *h = argument;
	plumb_status status;
	if (cpu_pin_self(h->cpu, &status) != 0) {
		snprintf(h->error, sizeof h->error, "%s", status.message);
		atomic_store_explicit(&h->state, MAILBOX_FAILED, memory_order_release);
		return NULL;
	}
	atomic_store_explicit(&h->state, MAILBOX_READY, memory_order_release);
	uint64_t seen = 0;
	for (;;) {
		/* Idle helpers wait without a deadline (A may be timing a long
		 * pass); stop ends the wait. */
		while (wait_while_equal(&h->request, seen, UINT64_MAX / 2, &h->stop) != 0)
			if (atomic_load_explicit(&h->stop, memory_order_relaxed))
				return NULL;
		seen = atomic_load_explicit(&h->request, memory_order_acquire);
		run_op(h->op, &h->lines, &h->counts, &h->features);
		atomic_store_explicit(&h->done, seen, memory_order_release);
	}
}

int coherence_team_start(coherence_team **out, const int *cpus, int roles, uint64_t timeout_ns,
                         plumb_status *status)
{
	*out = NULL;
	if (roles < 1 || roles > COHERENCE_MAX_ROLES)
		return plumb_fail(status, EINVAL, "coherence team: roles must be 1..%d", COHERENCE_MAX_ROLES);
	for (int i = 0; i < roles; i++)
		for (int j = 0; j < i; j++)
			if (cpus[i] == cpus[j])
				return plumb_fail(status, EINVAL, "coherence team: CPU %d is given twice", cpus[i]);
	coherence_team *team = calloc(1, sizeof *team);
	helper *helpers = roles > 1 ? aligned_alloc(128, sizeof(helper) * (size_t)(roles - 1)) : NULL;
	if (!team || (roles > 1 && !helpers)) {
		free(team);
		free(helpers);
		return plumb_fail(status, ENOMEM, "coherence team: out of memory");
	}
	if (helpers)
		memset(helpers, 0, sizeof(helper) * (size_t)(roles - 1));
	team->roles = roles;
	team->timeout_ns = timeout_ns;
	team->helpers = helpers;
	cpu_features_detect(&team->features);
	*out = team;
	for (int r = 1; r < roles; r++) {
		helper *h = &helpers[r - 1];
		h->cpu = cpus[r];
		h->timeout_ns = timeout_ns;
		h->features = team->features;
		int rc = pthread_create(&h->thread, NULL, helper_main, h);
		if (rc != 0) {
			coherence_team_stop(team);
			*out = NULL;
			return plumb_fail_errno(status, rc, "coherence team: cannot start a helper thread");
		}
		h->started = true;
	}
	for (int r = 1; r < roles; r++) {
		helper *h = &helpers[r - 1];
		uint64_t start = now_ns();
		while (atomic_load_explicit(&h->state, memory_order_acquire) == MAILBOX_IDLE) {
			if (now_ns() - start > timeout_ns) {
				coherence_team_stop(team);
				*out = NULL;
				return plumb_fail(status, ETIMEDOUT, "coherence team: the helper for CPU %d did not start "
				                  "within %.0f ms", cpus[r], timeout_ns / 1e6);
			}
			sched_yield();
		}
		if (atomic_load_explicit(&h->state, memory_order_acquire) == MAILBOX_FAILED) {
			plumb_fail(status, EINVAL, "coherence team: %s", h->error);
			coherence_team_stop(team);
			*out = NULL;
			return -1;
		}
	}
	return 0;
}

int coherence_team_prepare(coherence_team *team, const coherence_plan *plan, const coherence_lines *lines,
                           plumb_status *status)
{
	if (plan->roles > team->roles)
		return plumb_fail(status, EINVAL, "coherence team: the plan needs %d CPUs, the team has %d",
		                  plan->roles, team->roles);
	for (int s = 0; s < plan->count; s++) {
		const coherence_step *step = &plan->steps[s];
		if (step->role == 0) {
			run_op(step->op, lines, &team->own_counts, &team->features);
			continue;
		}
		helper *h = &team->helpers[step->role - 1];
		h->op = step->op;
		h->lines = *lines;
		uint64_t request = atomic_load_explicit(&h->request, memory_order_relaxed) + 1;
		atomic_store_explicit(&h->request, request, memory_order_release);
		if (wait_while_equal(&h->done, request - 1, team->timeout_ns, NULL) != 0)
			return plumb_fail(status, ETIMEDOUT, "the helper on CPU %d did not finish its step within %.0f ms "
			                  "(machine too busy?)", h->cpu, team->timeout_ns / 1e6);
	}
	return 0;
}

void coherence_team_counts(const coherence_team *team, int role, coherence_counts *out)
{
	if (role == 0)
		*out = team->own_counts;
	else if (role > 0 && role < team->roles)
		*out = team->helpers[role - 1].counts;
	else
		*out = (coherence_counts){ 0 };
}

void coherence_team_stop(coherence_team *team)
{
	if (!team)
		return;
	for (int r = 1; r < team->roles; r++) {
		helper *h = &team->helpers[r - 1];
		if (!h->started)
			continue;
		atomic_store_explicit(&h->stop, 1, memory_order_release);
		pthread_join(h->thread, NULL);
	}
	free(team->helpers);
	free(team);
}
