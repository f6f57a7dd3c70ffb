/* Signals: SIGINT, SIGTERM, SIGHUP and every other signal whose default
 * action would end plumb (SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM,
 * SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ) stop plumb cleanly.  SIGXFSZ that
 * the kernel sends plumb for its own write past `ulimit -f` is not a stop:
 * the write fails with EFBIG and is reported as an error.
 *
 * The program's entry point owns one interrupt_state and installs it for the
 * whole run.  The library then registers, as it goes, the children it starts
 * and the temporary files and folders it creates; on a signal the handler
 *   - records the signal (interrupt_signal() reports it),
 *   - forwards it to every registered child (to its process group when the
 *     child has its own); SIGINT, SIGTERM, SIGHUP and SIGQUIT as they are,
 *     the others as SIGTERM,
 *   - and, unless a loop has declared that it polls (interrupt_poll_begin),
 *     cleans up at once: waits up to a second for the children, kills what
 *     is left with SIGKILL, reaps it, removes the temporary files and
 *     folders, and exits with 128 + the signal number.
 * A loop that can stop at a safe point (trace record and convert finish the
 * trace they are writing) brackets itself with interrupt_poll_begin/end and
 * checks interrupt_pending(); the entry point then calls interrupt_cleanup()
 * and exits with interrupt_exit_code().  A second signal always exits at once.
 *
 * Without an installed state every function is a harmless no-op, so library
 * users who handle signals themselves are unaffected. */
#ifndef PLUMB_INTERRUPT_H
#define PLUMB_INTERRUPT_H

#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#define INTERRUPT_MAX_CHILDREN 64
#define INTERRUPT_MAX_PATHS 32
#define INTERRUPT_SIGNALS 12

typedef struct interrupt_path {
	atomic_int state;              /* 0 free, 1 being filled, 2 registered */
	bool directory;                /* rmdir rather than unlink */
	char path[PATH_MAX];
} interrupt_path;

typedef struct interrupt_state {
	volatile sig_atomic_t signal;  /* the first signal received, 0 if none */
	volatile sig_atomic_t from_terminal;  /* it came from the terminal (^C): plumb's group has it */
	atomic_int polling;            /* > 0: a loop polls, the handler returns */
	pid_t owner;                   /* the process that installed the state */
	atomic_int children[INTERRUPT_MAX_CHILDREN];      /* 0 = free slot */
	atomic_bool child_group[INTERRUPT_MAX_CHILDREN];  /* child leads its own process group */
	interrupt_path paths[INTERRUPT_MAX_PATHS];
	struct sigaction previous[INTERRUPT_SIGNALS];
} interrupt_state;

/* Installs handlers for the signals above (sigaction, no SA_RESTART,
 * so a blocking read in a polling loop returns EINTR).  -1 if already installed. */
int interrupt_install(interrupt_state *state);
/* Restores the previous handlers. */
void interrupt_uninstall(void);

/* The signal received (0 if none), and 128 + it (0 if none). */
int interrupt_signal(void);
bool interrupt_pending(void);
int interrupt_exit_code(void);

/* A loop that polls interrupt_pending() and stops at a safe point. */
void interrupt_poll_begin(void);
void interrupt_poll_end(void);

/* Kills (the signal received, then SIGKILL after a second) and reaps every
 * registered child, and removes every registered path.  Async-signal-safe. */
void interrupt_cleanup(void);

/* fork() for a child plumb starts: signals are blocked across the fork so
 * the child is registered before any handler can run.  In the child the
 * handled signals are back to their defaults, it dies with plumb
 * (PR_SET_PDEATHSIG) and, with own_group, leads a new process group, so that
 * a forwarded signal reaches everything it starts. */
pid_t interrupt_fork(bool own_group);
/* interrupt_fork for a program the user named (plumb stat's command, the
 * program explain, instrument, perturb or trace record runs): in a process
 * group of its own, so that a signal reaches whatever it starts in turn and
 * its grandchildren die with the run; except while plumb is the terminal's
 * foreground job (interrupt_shares_terminal), where the child stays in
 * plumb's group, as under perf stat, so that a program reading the terminal
 * is not stopped for reading from the background and ^C or ^Z reach its
 * whole family from the terminal itself. */
pid_t interrupt_fork_command(void);
/* Standard input is a terminal whose foreground process group is plumb's. */
bool interrupt_shares_terminal(void);
/* waitpid(pid, wait_status, 0) retried on EINTR; forgets the child. */
pid_t interrupt_waitpid(pid_t pid, int *wait_status);
/* Registers and forgets a child started some other way. */
void interrupt_add_child(pid_t pid, bool own_group);
void interrupt_remove_child(pid_t pid);

/* Registers a temporary file (directory false) or folder (true) to remove on
 * a signal: 0, or -1 when no state is installed or the table is full (the
 * path is then not cleaned).  Files are removed before folders.
 * interrupt_remove_path forgets it again (once it is renamed or removed). */
int interrupt_add_path(const char *path, bool directory);
void interrupt_remove_path(const char *path);

#endif
