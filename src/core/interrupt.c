/* Signals stop plumb cleanly: children are stopped and reaped, temporary
 * files removed, and the exit status is 128 + the signal (src/core/interrupt.h).
 *
 * Everything the handler touches is async-signal-safe: lock-free atomics in
 * fixed tables (a registration is complete before its slot is published),
 * kill, waitpid, nanosleep, unlink, rmdir and _exit. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/interrupt.h"

/* Every signal whose default action ends plumb (apart from SIGKILL, and the
 * synchronous faults SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS
 * that mean plumb itself is broken): the terminal's, a job controller's, a
 * resource limit's (SIGXCPU, SIGXFSZ), a closed pipe's, and those only
 * another program sends. */
static const int handled_signals[INTERRUPT_SIGNALS] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE,
	SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ,
};

/* The signal children get: the one received when it means "stop" to every
 * program; SIGTERM for the others (a program's own SIGUSR1 or SIGALRM
 * handler would otherwise go on running, or print, and wait for SIGKILL). */
static int signal_for_children(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT ? sig : SIGTERM;
}

/* The library's one static: the state the program's entry point installed,
 * the only way a signal handler can reach it.  Set by interrupt_install,
 * cleared by interrupt_uninstall; NULL makes every call here a no-op. */
static interrupt_state *_Atomic interrupt_active;

static interrupt_state *active_state(void)
{
	return atomic_load(&interrupt_active);
}

/* Sends sig to every registered child: a slot holds the kill target, the
 * pid, or minus the pid for a child that leads its own process group.  A
 * signal the terminal sent (^C) already reached the children in plumb's own
 * group; a program that counts its ^C must not get two. */
static void forward(interrupt_state *state, int sig)
{
	sig = signal_for_children(sig);
	for (int i = 0; i < INTERRUPT_MAX_CHILDREN; i++) {
		int target = atomic_load(&state->children[i]);
		if (target < 0 || (target > 0 && !state->from_terminal))
			kill(target, sig);
	}
}

static void sleep_milliseconds(long milliseconds)
{
	struct timespec t = { 0, milliseconds * 1000000L };
	nanosleep(&t, NULL);
}

/* How long children get to stop on the forwarded signal before SIGKILL. */
#define GRACE_MILLISECONDS 1000
#define GRACE_STEP_MILLISECONDS 5

static void stop_children(interrupt_state *state)
{
	int sig = state->signal ? state->signal : SIGTERM;
	forward(state, sig);
	for (int waited = 0;; waited += GRACE_STEP_MILLISECONDS) {
		bool left = false;
		for (int i = 0; i < INTERRUPT_MAX_CHILDREN; i++) {
			int target = atomic_load(&state->children[i]);
			if (!target)
				continue;
			pid_t pid = target < 0 ? -target : target;
			pid_t r = waitpid(pid, NULL, WNOHANG);
			if (r == pid || (r < 0 && errno == ECHILD)) {
				/* Whatever the leader left in its group goes too. */
				if (target < 0)
					kill(target, SIGKILL);
				atomic_store(&state->children[i], 0);
			} else {
				left = true;
			}
		}
		if (!left)
			return;
		if (waited >= GRACE_MILLISECONDS)
			break;
		sleep_milliseconds(GRACE_STEP_MILLISECONDS);
	}
	for (int i = 0; i < INTERRUPT_MAX_CHILDREN; i++) {
		int target = atomic_load(&state->children[i]);
		if (!target)
			continue;
		kill(target, SIGKILL);
		pid_t pid = target < 0 ? -target : target;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		atomic_store(&state->children[i], 0);
	}
}

static void remove_paths(interrupt_state *state)
{
	/* Files first, then the folders that held them. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = INTERRUPT_MAX_PATHS - 1; i >= 0; i--) {
			interrupt_path *p = &state->paths[i];
			if (atomic_load(&p->state) != 2 || p->directory != (pass == 1))
				continue;
			if (pass == 0)
				unlink(p->path);
			else
				rmdir(p->path);
			atomic_store(&p->state, 0);
		}
}

void interrupt_cleanup(void)
{
	interrupt_state *state = active_state();
	if (!state || getpid() != state->owner)
		return;
	int saved = errno;
	stop_children(state);
	remove_paths(state);
	errno = saved;
}

static void handle_signal(int sig, siginfo_t *info, void *context)
{
	(void)context;
	/* SIGXFSZ the kernel sends plumb itself when a write passes the file
	 * size limit (ulimit -f): returning lets that write fail with EFBIG,
	 * which the writer reports, removing its temporary file.  Sent by
	 * another process, SIGXFSZ stops plumb like the others. */
	if (sig == SIGXFSZ && info && info->si_code == SI_USER && info->si_pid == getpid())
		return;
	interrupt_state *state = active_state();
	/* A child between fork and the reset of its handlers (interrupt_fork
	 * blocks the signals there, so only a child forked some other way)
	 * must not clean up its parent's files. */
	if (!state || getpid() != state->owner)
		_exit(128 + sig);
	int saved = errno;
	bool first = state->signal == 0;
	if (first) {
		state->from_terminal = info && info->si_code == SI_KERNEL;
		state->signal = sig;
	}
	forward(state, sig);
	if (!first || atomic_load(&state->polling) == 0) {
		interrupt_cleanup();
		_exit(128 + state->signal);
	}
	errno = saved;
}

int interrupt_install(interrupt_state *state)
{
	interrupt_state *expected = NULL;
	memset(state, 0, sizeof *state);
	state->owner = getpid();
	if (!atomic_compare_exchange_strong(&interrupt_active, &expected, state))
		return -1;
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_sigaction = handle_signal;
	sigemptyset(&action.sa_mask);
	for (int i = 0; i < INTERRUPT_SIGNALS; i++)
		sigaddset(&action.sa_mask, handled_signals[i]);
	/* No SA_RESTART: a polling loop blocked in read() must see EINTR. */
	action.sa_flags = SA_SIGINFO;
	for (int i = 0; i < INTERRUPT_SIGNALS; i++) {
		sigaction(handled_signals[i], NULL, &state->previous[i]);
		/* A signal ignored by whoever started plumb (nohup, a background
		 * job of a non-interactive shell) stays ignored. */
		if (state->previous[i].sa_handler != SIG_IGN)
			sigaction(handled_signals[i], &action, NULL);
	}
	return 0;
}

void interrupt_uninstall(void)
{
	interrupt_state *state = active_state();
	if (!state)
		return;
	for (int i = 0; i < INTERRUPT_SIGNALS; i++)
		sigaction(handled_signals[i], &state->previous[i], NULL);
	atomic_store(&interrupt_active, NULL);
}

int interrupt_signal(void)
{
	interrupt_state *state = active_state();
	return state ? state->signal : 0;
}

bool interrupt_pending(void)
{
	return interrupt_signal() != 0;
}

int interrupt_exit_code(void)
{
	int sig = interrupt_signal();
	return sig ? 128 + sig : 0;
}

void interrupt_poll_begin(void)
{
	interrupt_state *state = active_state();
	if (state)
		atomic_fetch_add(&state->polling, 1);
}

void interrupt_poll_end(void)
{
	interrupt_state *state = active_state();
	if (state)
		atomic_fetch_sub(&state->polling, 1);
}

void interrupt_add_child(pid_t pid, bool own_group)
{
	interrupt_state *state = active_state();
	if (!state || pid <= 0)
		return;
	int target = own_group ? -(int)pid : (int)pid;
	for (int i = 0; i < INTERRUPT_MAX_CHILDREN; i++) {
		int expected = 0;
		if (atomic_compare_exchange_strong(&state->children[i], &expected, target))
			return;
	}
}

/* Takes pid off the list; true if it led a process group of its own. */
static bool remove_child(interrupt_state *state, pid_t pid)
{
	for (int i = 0; i < INTERRUPT_MAX_CHILDREN; i++) {
		int expected = (int)pid;
		if (atomic_compare_exchange_strong(&state->children[i], &expected, 0))
			return false;
		expected = -(int)pid;
		if (atomic_compare_exchange_strong(&state->children[i], &expected, 0))
			return true;
	}
	return false;
}

void interrupt_remove_child(pid_t pid)
{
	interrupt_state *state = active_state();
	if (state && pid > 0)
		remove_child(state, pid);
}

static void block_signals(sigset_t *old)
{
	sigset_t block;
	sigemptyset(&block);
	for (int i = 0; i < INTERRUPT_SIGNALS; i++)
		sigaddset(&block, handled_signals[i]);
	pthread_sigmask(SIG_BLOCK, &block, old);
}

pid_t interrupt_fork(bool own_group)
{
	interrupt_state *state = active_state();
	sigset_t old;
	block_signals(&old);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		if (state)
			for (int i = 0; i < INTERRUPT_SIGNALS; i++)
				sigaction(handled_signals[i], &state->previous[i], NULL);
		if (own_group)
			setpgid(0, 0);
		/* The death signal is tied to the thread that forked: plumb forks
		 * its children from the main thread. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(128 + SIGKILL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 0;
	}
	int error = errno;
	if (pid > 0) {
		/* Also here, so the group exists before anyone signals it. */
		if (own_group)
			setpgid(pid, pid);
		interrupt_add_child(pid, own_group);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = error;
	return pid;
}

bool interrupt_shares_terminal(void)
{
	pid_t foreground = tcgetpgrp(STDIN_FILENO);
	return foreground > 0 && foreground == getpgrp();
}

pid_t interrupt_fork_command(void)
{
	return interrupt_fork(!interrupt_shares_terminal());
}

pid_t interrupt_waitpid(pid_t pid, int *wait_status)
{
	pid_t r;
	while ((r = waitpid(pid, wait_status, 0)) < 0 && errno == EINTR)
		;
	int error = errno;
	interrupt_state *state = active_state();
	/* A run stopped by a signal takes with it what a reaped group leader
	 * left in its group (a shell's background job, which ignores SIGINT),
	 * as stop_children does for the children it reaps itself: the reader
	 * of a traced program reaps valgrind before the cleanup runs. */
	if (state && pid > 0 && remove_child(state, pid) && r == pid && state->signal)
		kill(-pid, SIGKILL);
	errno = error;
	return r;
}

int interrupt_add_path(const char *path, bool directory)
{
	interrupt_state *state = active_state();
	if (!state || !path || strlen(path) >= PATH_MAX)
		return -1;
	for (int i = 0; i < INTERRUPT_MAX_PATHS; i++) {
		interrupt_path *p = &state->paths[i];
		int expected = 0;
		if (!atomic_compare_exchange_strong(&p->state, &expected, 1))
			continue;
		strcpy(p->path, path);
		p->directory = directory;
		atomic_store(&p->state, 2);
		return 0;
	}
	return -1;
}

void interrupt_remove_path(const char *path)
{
	interrupt_state *state = active_state();
	if (!state || !path)
		return;
	for (int i = 0; i < INTERRUPT_MAX_PATHS; i++) {
		interrupt_path *p = &state->paths[i];
		if (atomic_load(&p->state) == 2 && strcmp(p->path, path) == 0) {
			atomic_store(&p->state, 0);
			return;
		}
	}
}
