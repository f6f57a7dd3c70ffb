/* Preloaded beside libplumb.so into a command that plumb perturb halts, so
 * that the command can exec another program without being killed.
 *
 * Why: the halt clock's overflow signal is a real-time signal, whose default
 * action ends the process.  The clock counts the program's time in the
 * kernel too, so it can overflow while the program is inside execve, and the
 * signal then waits for the return to user space, which is in the new
 * program: its handlers were reset to the default by the exec, and it is
 * killed before its first instruction (a shell script that execs its real
 * program, 40 execs at 0.2 ms intervals: killed 5 times in 5 runs).
 *
 * So every exec function is wrapped: the signal is blocked across the call
 * (a blocked signal stays pending, and blocked, in the new program), and the
 * agent in the new program unblocks it once its handler is in place
 * (counter_sampler_open); a failed exec unblocks it again.  Only the process
 * plumb perturb started is concerned (its pid is in the agent's variable);
 * elsewhere the wrappers only call through.  No state of its own: the real
 * functions are looked up at each call (an exec is rare). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include "perturb/perturb_internal.h"   /* the agent's variables; the sampler's signal */

#define VISIBLE __attribute__((visibility("default")))

/* Blocks the halt signal if this is the halted process; returns whether it
 * did, with the mask to restore in *previous. */
static int block_halts(sigset_t *previous)
{
	const char *pid_text = secure_getenv(PERTURB_AGENT_PID_ENV);
	char *end;
	if (!pid_text || strtol(pid_text, &end, 10) != (long)getpid() || *end)
		return 0;
	sigset_t halt;
	sigemptyset(&halt);
	sigaddset(&halt, COUNTER_SAMPLER_SIGNAL_DEFAULT);
	return pthread_sigmask(SIG_BLOCK, &halt, previous) == 0;
}

static void restore(int blocked, const sigset_t *previous)
{
	int saved = errno;
	if (blocked)
		pthread_sigmask(SIG_SETMASK, previous, NULL);
	errno = saved;
}

static void *real(const char *name)
{
	void *function = dlsym(RTLD_NEXT, name);
	if (!function)
		errno = ENOSYS;
	return function;
}

#define CALL_THROUGH(type, name, ...)                              \
	do {                                                       \
		type function = (type)real(name);                  \
		if (!function)                                     \
			return -1;                                 \
		sigset_t previous;                                 \
		int blocked = block_halts(&previous);              \
		int rc = function(__VA_ARGS__);                    \
		restore(blocked, &previous);                       \
		return rc;                                         \
	} while (0)

typedef int (*exec_env_fn)(const char *, char *const[], char *const[]);
typedef int (*exec_fn)(const char *, char *const[]);
typedef int (*fexec_fn)(int, char *const[], char *const[]);

VISIBLE int execve(const char *path, char *const argv[], char *const envp[])
{
	CALL_THROUGH(exec_env_fn, "execve", path, argv, envp);
}

VISIBLE int execv(const char *path, char *const argv[])
{
	CALL_THROUGH(exec_fn, "execv", path, argv);
}

VISIBLE int execvp(const char *file, char *const argv[])
{
	CALL_THROUGH(exec_fn, "execvp", file, argv);
}

VISIBLE int execvpe(const char *file, char *const argv[], char *const envp[])
{
	CALL_THROUGH(exec_env_fn, "execvpe", file, argv, envp);
}

VISIBLE int fexecve(int fd, char *const argv[], char *const envp[])
{
	CALL_THROUGH(fexec_fn, "fexecve", fd, argv, envp);
}

/* The list forms, as glibc makes them: the arguments into an array, then the
 * array form (wrapped above).  ARG_MAX bounds what an exec can take anyway. */
#define LIST_ARGUMENTS_MAX 4096

static int collect(const char *first, va_list list, char **argv)
{
	int n = 0;
	argv[n++] = (char *)first;
	while (argv[n - 1]) {
		if (n == LIST_ARGUMENTS_MAX) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = va_arg(list, char *);
	}
	return n;
}

VISIBLE int execl(const char *path, const char *arg, ...)
{
	char *argv[LIST_ARGUMENTS_MAX];
	va_list list;
	va_start(list, arg);
	int n = collect(arg, list, argv);
	va_end(list);
	return n < 0 ? -1 : execv(path, argv);
}

VISIBLE int execlp(const char *file, const char *arg, ...)
{
	char *argv[LIST_ARGUMENTS_MAX];
	va_list list;
	va_start(list, arg);
	int n = collect(arg, list, argv);
	va_end(list);
	return n < 0 ? -1 : execvp(file, argv);
}

VISIBLE int execle(const char *path, const char *arg, ...)
{
	char *argv[LIST_ARGUMENTS_MAX];
	va_list list;
	va_start(list, arg);
	int n = collect(arg, list, argv);
	char *const *envp = n < 0 ? NULL : va_arg(list, char *const *);
	va_end(list);
	return n < 0 ? -1 : execve(path, argv, envp);
}
