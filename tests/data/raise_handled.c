/* Raises a signal it handles, then exits 0: under Valgrind with
 * --trace-sched=yes the delivery prints a "SCHEDSETJMP(...)" line without
 * the --PID-- prefix, which the lackey reader must take as a message
 * (tests/e2e/test_explain_valgrind_cli.c). */
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t got;

static void handler(int signal_number)
{
	got = signal_number;
}

int main(void)
{
	signal(SIGUSR1, handler);
	raise(SIGUSR1);
	return got == SIGUSR1 ? 0 : 1;
}
