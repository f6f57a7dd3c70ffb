/* Streaming: stdin and pipes work, and memory stays flat however long the
 * trace is. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "trace/trace.h"
#include "trace_test_util.h"

/* Forks a child that writes `records` generated records in `format` to a
 * pipe; returns the read end. */
static int spawn_writer(trace_format format, uint64_t records, pid_t *pid)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	*pid = fork();
	cr_assert_geq(*pid, 0);
	if (*pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDOUT_FILENO);
		close(fds[1]);
		plumb_status status;
		trace_writer *writer;
		if (trace_writer_open(&writer, "-", format, &status) < 0)
			_exit(3);
		trace_record batch[4096];
		for (uint64_t done = 0; done < records; done += 4096) {
			size_t n = records - done < 4096 ? (size_t)(records - done) : 4096;
			for (size_t i = 0; i < n; i++) {
				uint64_t k = done + i;
				batch[i] = (trace_record){ .address = 0x10000000 + (k * 8) % (1u << 30), .size = 8,
				                           .kind = (uint8_t)(k % 3), .thread = (uint32_t)(k >> 20) % 4 };
				if (format == TRACE_FORMAT_DIN)
					batch[i].thread = 0;
			}
			if (trace_writer_write(writer, batch, n, &status) < 0)
				_exit(4);
		}
		_exit(trace_writer_close(writer, &status) < 0 ? 5 : 0);
	}
	close(fds[1]);
	return fds[0];
}

static long max_rss_kib(void)
{
	struct rusage usage;
	getrusage(RUSAGE_SELF, &usage);
	return usage.ru_maxrss;
}

/* Reads the whole stream; the RSS high-water mark after the first million
 * records must not grow by more than 4 MiB by the end. */
static void read_flat(const char *path, trace_format format, uint64_t expect)
{
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, path, format, &status), 0, "%s", status.message);
	static trace_record batch[4096];
	uint64_t total = 0;
	long n, early = 0;
	while ((n = trace_reader_read(reader, batch, 4096, &status)) > 0) {
		for (long i = 0; i < n; i++)
			cr_assert_eq(batch[i].address, 0x10000000 + ((total + (uint64_t)i) * 8) % (1u << 30));
		total += (uint64_t)n;
		if (!early && total >= 1000000)
			early = max_rss_kib();
	}
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(total, expect);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	long late = max_rss_kib();
	cr_assert_lt(late - early, 4096, "max RSS grew from %ld KiB to %ld KiB while streaming", early, late);
	cr_assert_lt(late, 64 * 1024, "max RSS %ld KiB", late);
}

Test(trace_stream, native_through_a_pipe_stays_flat, .timeout = 60)
{
	pid_t pid;
	int fd = spawn_writer(TRACE_FORMAT_NATIVE, 20000000, &pid);
	char path[64];
	snprintf(path, sizeof path, "/dev/fd/%d", fd);
	read_flat(path, TRACE_FORMAT_AUTO, 20000000);
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
}

Test(trace_stream, lackey_on_stdin_stays_flat, .timeout = 60)
{
	pid_t pid;
	int fd = spawn_writer(TRACE_FORMAT_LACKEY, 4000000, &pid);
	dup2(fd, STDIN_FILENO);
	close(fd);
	read_flat("-", TRACE_FORMAT_AUTO, 4000000);
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

Test(trace_stream, din_through_a_pipe, .timeout = 60)
{
	pid_t pid;
	int fd = spawn_writer(TRACE_FORMAT_DIN, 2000000, &pid);
	char path[64];
	snprintf(path, sizeof path, "/dev/fd/%d", fd);
	read_flat(path, TRACE_FORMAT_DIN, 2000000);
	waitpid(pid, NULL, 0);
	close(fd);
}
