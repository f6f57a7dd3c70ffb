/* trace_reader_open_command: a real program under valgrind's lackey, with
 * its threads told apart by the SCHED lines. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "trace/trace.h"
#include "core/interrupt.h"
#include "trace/trace_internal.h"
#include "trace_test_util.h"
#include "../temp_folder.h"

/* Two threads alive at once (a barrier holds the first until the second
 * exists, else Valgrind could give the second the first's freed thread
 * slot); each increments only its own variable 1000 times and the program
 * writes the variables' addresses to argv[1]. */
static const char program_source[] =
	"#include <pthread.h>\n#include <stdio.h>\n"
	"volatile int first, second;\n"
	"static pthread_barrier_t both;\n"
	"static void *work(void *p) { volatile int *v = p; pthread_barrier_wait(&both);\n"
	"  for (int i = 0; i < 1000; i++) *v = *v + 1; return 0; }\n"
	"int main(int argc, char **argv) {\n"
	"  FILE *f = fopen(argv[1], \"w\"); fprintf(f, \"%lx %lx\\n\", (unsigned long)&first, (unsigned long)&second); fclose(f);\n"
	"  pthread_barrier_init(&both, 0, 2);\n"
	"  pthread_t a, b; pthread_create(&a, 0, work, (void *)&first); pthread_create(&b, 0, work, (void *)&second);\n"
	"  pthread_join(a, 0); pthread_join(b, 0); return argc > 2 ? 3 : 0; }\n";

static const char *build_program(void)
{
	static char binary[256];
	char source[256], command[1024];
	snprintf(source, sizeof source, "%s", trace_test_path("threads.c"));
	snprintf(binary, sizeof binary, "%s", trace_test_path("threads"));
	trace_test_spit(source, program_source, strlen(program_source));
	snprintf(command, sizeof command, "cc -O1 -pthread -o %s %s", binary, source);
	cr_assert_eq(system(command), 0, "cannot build the test program");
	return binary;
}

Test(trace_valgrind, lackey_attributes_threads, .timeout = 120)
{
	const char *binary = build_program();
	char program[256], addresses[256];
	snprintf(program, sizeof program, "%s", binary);
	snprintf(addresses, sizeof addresses, "%s", trace_test_path("addresses"));
	char *argv[] = { program, addresses, NULL };
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open_command(&reader, argv, &status), 0, "%s", status.message);
	/* lackey's text, or plumbgrind's binary records when the tool is built */
	cr_assert(trace_reader_format(reader) == TRACE_FORMAT_LACKEY || trace_reader_format(reader) == TRACE_FORMAT_NATIVE);
	static trace_record batch[4096];
	uint64_t total = 0, reads[2] = { 0 }, writes[2] = { 0 }, fetches = 0;
	long thread_of[2] = { -1, -1 };
	uint64_t address[2] = { 0, 0 };
	bool have_addresses = false;
	long n;
	while ((n = trace_reader_read(reader, batch, 4096, &status)) > 0) {
		if (!have_addresses) {
			/* The program wrote the file before starting its threads, long before
			 * the first batch ends; read it lazily. */
			FILE *f = fopen(addresses, "r");
			if (f) {
				have_addresses = fscanf(f, "%lx %lx", (unsigned long *)&address[0], (unsigned long *)&address[1]) == 2;
				fclose(f);
			}
		}
		for (long i = 0; i < n; i++) {
			trace_record *r = &batch[i];
			fetches += r->kind == TRACE_INSTRUCTION;
			for (int v = 0; v < 2; v++) {
				if (!have_addresses || r->address != address[v] || r->kind == TRACE_INSTRUCTION)
					continue;
				if (thread_of[v] < 0)
					thread_of[v] = r->thread;
				cr_assert_eq(r->thread, (uint32_t)thread_of[v], "variable %d touched by two threads", v);
				cr_assert_eq(r->size, 4);
				cr_assert(r->flags & TRACE_HAS_INSTRUCTION_ADDRESS);
				if (r->kind == TRACE_READ || r->kind == TRACE_MODIFY)
					reads[v]++;
				if (r->kind == TRACE_WRITE || r->kind == TRACE_MODIFY)
					writes[v]++;
			}
		}
		total += (uint64_t)n;
	}
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	cr_assert(have_addresses);
	cr_assert_gt(fetches, 10000);
	cr_assert_gt(total, fetches);
	for (int v = 0; v < 2; v++) {
		cr_assert_eq(reads[v], 1000, "variable %d: %llu reads", v, (unsigned long long)reads[v]);
		cr_assert_eq(writes[v], 1000, "variable %d: %llu writes", v, (unsigned long long)writes[v]);
		cr_assert_gt(thread_of[v], 0, "a worker, not the main thread");
	}
	cr_assert_neq(thread_of[0], thread_of[1]);
}

Test(trace_valgrind, failures_are_clear, .timeout = 120)
{
	plumb_status status;
	trace_reader *reader;
	char *missing[] = { "/nonexistent/program", NULL };
	cr_assert_eq(trace_reader_open_command(&reader, missing, &status), -1);
	cr_assert_str_eq(status.message, "cannot run '/nonexistent/program': No such file or directory");
	setenv("PLUMB_VALGRIND", "/nonexistent/valgrind", 1);
	char *true_program[] = { "true", NULL };
	cr_assert_eq(trace_reader_open_command(&reader, true_program, &status), -1);
	cr_assert_str_eq(status.message, "valgrind is not installed ('/nonexistent/valgrind' not found): tracing a "
	                 "program needs Valgrind's lackey tool (Debian package valgrind)");
	unsetenv("PLUMB_VALGRIND");
	char *false_program[] = { "false", NULL };
	cr_assert_eq(trace_reader_open_command(&reader, false_program, &status), 0, "%s", status.message);
	static trace_record batch[4096];
	long n;
	while ((n = trace_reader_read(reader, batch, 4096, &status)) > 0)
		;
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), -1);
	cr_assert_str_eq(status.message, "the traced program 'false' exited with status 1");
}

/* A caller that stops reading (enough references, or a bad trace) must not
 * wait for the program: here it would never end. */
Test(trace_valgrind, closing_early_stops_the_program, .timeout = 60)
{
	char *forever[] = { "sh", "-c", "while :; do :; done", NULL };
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open_command(&reader, forever, &status), 0, "%s", status.message);
	static trace_record batch[4096];
	cr_assert_eq(trace_reader_read(reader, batch, 4096, &status), 4096, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
}

/* The one launcher (trace_valgrind_start) every Valgrind run goes through:
 * its command line and environment reach the program, the program's stdout
 * goes where asked, and a valgrind that cannot be run is one clear error. */
Test(trace_valgrind, the_one_launcher_runs_a_stock_tool, .timeout = 120)
{
	char *bad_argv[] = { "/bin/true", NULL };
	trace_valgrind bad = { .valgrind = "/nonexistent/valgrind", .tool = "none", .argv = bad_argv, .program_stdout = -1 };
	pid_t pid;
	plumb_status status;
	cr_assert_eq(trace_valgrind_start(&bad, &pid, &status), -1);
	cr_assert_str_eq(status.message, "cannot run /nonexistent/valgrind: No such file or directory");
	cr_assert_eq(pid, -1);
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		cr_skip_test("valgrind is not installed");
	char out_path[TEMP_PATH_SIZE];
	temp_template(out_path, sizeof out_path, "plumb-launcher-XXXXXX");
	int fd = mkstemp(out_path);
	cr_assert_geq(fd, 0);
	char *argv[] = { "/bin/sh", "-c", "echo \"$PLUMB_LAUNCH_TEST:${PLUMB_TRACE_TEXT-unset}\"", NULL };
	static const char *const environment[] = { "PLUMB_LAUNCH_TEST=seen", NULL };
	static const char *const options[] = { "-q", NULL };
	setenv("PLUMB_TRACE_TEXT", "1", 1);
	trace_valgrind run = { .tool = "none", .options = options, .argv = argv, .environment = environment,
	                       .program_stdout = fd };
	cr_assert_eq(trace_valgrind_start(&run, &pid, &status), 0, "%s", status.message);
	unsetenv("PLUMB_TRACE_TEXT");
	close(fd);
	int wait_status;
	cr_assert_eq(interrupt_waitpid(pid, &wait_status), pid);
	cr_assert(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
	FILE *f = fopen(out_path, "r");
	char line[64] = "";
	cr_assert(f && fgets(line, sizeof line, f));
	fclose(f);
	unlink(out_path);
	cr_assert_str_eq(line, "seen:unset\n");
}
