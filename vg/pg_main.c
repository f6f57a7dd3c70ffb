/* plumbgrind: registration, options, client requests and the summary.
 *
 * Summary file (docs/valgrind-tool.md), one record per line, fields
 * separated by one space, counts in the order of the "fields" line:
 *   plumbgrind 1
 *   command EXE ARGS...
 *   pid PID
 *   fields instructions loads stores modifies bytes_read bytes_written
 *   total C...
 *   thread SEQ LWP C...
 *   collected SEQ C...
 *   region SEQ ENTRIES C... NAME        (NAME is the rest of the line)
 *   trace records N | trace none | trace error TEXT
 *   warning TEXT
 *   end
 * The file is written to a temporary name and renamed, so a reader never
 * sees half of one; "end" proves it is whole. */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_xarray.h"
#include "plumb/valgrind.h"
#include "plumbgrind.h"

#define PG_NAME_MAX 255

static Int start_pid;
static Bool forked_child;

static Bool process_option(const HChar *argument)
{
	if VG_STR_CLO(argument, "--plumb-out", pg_clo_out) {}
	else if VG_STR_CLO(argument, "--plumb-trace", pg_clo_trace) {}
	else if VG_INT_CLO(argument, "--plumb-trace-fd", pg_clo_trace_fd) {}
	else if VG_BOOL_CLO(argument, "--plumb-collect", pg_clo_collect) {}
	else if VG_STR_CLO(argument, "--plumb-code", pg_clo_code) {}
	else if VG_STR_CLO(argument, "--plumb-ring", pg_clo_ring) {}
	else if VG_STR_CLO(argument, "--plumb-filter", pg_clo_filter) {}
	else if VG_BOOL_CLO(argument, "--plumb-calls", pg_clo_calls) {}
	else if VG_BOOL_CLO(argument, "--plumb-vector", pg_clo_vector) {}
	else if VG_BOOL_CLO(argument, "--plumb-count-records", pg_clo_count_records) {}
	else
		return False;
	return True;
}

static void print_usage(void)
{
	VG_(printf)(
"    --plumb-out=FILE|none     summary file (%%p: the pid) [plumbgrind.out.%%p]\n"
"    --plumb-trace=FILE        write every reference, lackey's text format\n"
"    --plumb-trace-fd=N        write the trace to file descriptor N\n"
"    --plumb-collect=yes|no    collect from the start, or from PLUMB_VG_START [yes]\n"
"    --plumb-code=FILE         write function, file and line of every instruction run\n"

"    --plumb-ring=M,F,R,N,B    binary records into plumb's shared ring (plumb passes it)\n"
"    --plumb-calls=yes|no      calls and returns into the ring, for inclusive costs [no]\n"
"    --plumb-count-records=yes|no  count the references sent into the ring for the\n"
"                              summary's \"trace records\" (rereads every block) [yes]\n"
"    --plumb-filter=...        the ring carries what a one-core machine's L1s do not settle\n"
"                              (plumb sim passes it; vg/pg_filter.h)\n");
}

static void print_debug_usage(void)
{
	VG_(printf)("    --plumb-vector=yes|no     AVX-512 for the L1 filter's deeper hits, when the CPU has it [yes]\n"
	            "                              (no: the scalar path, which tests compare too)\n");
}

/* Copies a client string; NULL with a warning if it is unreadable, empty,
 * too long or holds control characters (it ends up in a line of text). */
static HChar *client_name(Addr address, const HChar *what, HChar buffer[PG_NAME_MAX + 1])
{
	if (address == 0) {
		pg_warn("%s with a null name (ignored)", what);
		return NULL;
	}
	for (UInt i = 0; i <= PG_NAME_MAX; i++) {
		Addr at = address + i;
		if ((i == 0 || (at & (VKI_PAGE_SIZE - 1)) == 0) && !VG_(am_is_valid_for_client)(at, 1, VKI_PROT_READ)) {
			pg_warn("%s with an unreadable name at %#lx (ignored)", what, address);
			return NULL;
		}
		HChar c = *(const HChar *)at;
		if (c == 0) {
			buffer[i] = 0;
			if (i == 0) {
				pg_warn("%s with an empty name (ignored)", what);
				return NULL;
			}
			return buffer;
		}
		if ((UChar)c < 0x20 || c == 0x7f) {
			pg_warn("%s with a control character in its name (ignored)", what);
			return NULL;
		}
		buffer[i] = c;
	}
	pg_warn("%s with a name longer than %d bytes (ignored)", what, PG_NAME_MAX);
	return NULL;
}

static Bool handle_request(ThreadId tid, UWord *arguments, UWord *result)
{
	if (!VG_IS_TOOL_USERREQ('P', 'G', arguments[0]))
		return False;
	HChar name[PG_NAME_MAX + 1];
	switch (arguments[0]) {
	case PLUMB_VG_REQ_REGION_BEGIN:
		if (client_name(arguments[1], "region begin", name))
			pg_region_begin(tid, name);
		break;
	case PLUMB_VG_REQ_REGION_END:
		if (client_name(arguments[1], "region end", name))
			pg_region_end(tid, name);
		break;
	case PLUMB_VG_REQ_START:
		pg_collect(tid, True);
		break;
	case PLUMB_VG_REQ_STOP:
		pg_collect(tid, False);
		break;
	case PLUMB_VG_REQ_RUNNING:
		break;
	default:
		pg_warn("unknown client request %#lx (ignored)", arguments[0]);
		return False;
	}
	*result = 1;
	return True;
}

static void fork_child(ThreadId tid)
{
	forked_child = True;
	pg_trace_forget();
}

static void post_option_init(void)
{
	if (pg_clo_trace && pg_clo_trace_fd >= 0)
		VG_(fmsg_bad_option)("--plumb-trace", "give --plumb-trace or --plumb-trace-fd, not both\n");
	pg_collecting = pg_clo_collect;
	/* The counts exist only for the summary: without one, the instrumented
	 * code does not keep them (sqlite3 under plumb sim: 0.07 s of 0.56). */
	pg_counting = VG_(strcmp)(pg_clo_out, "none") != 0;
	/* Following calls needs every call to end its superblock (Ijk_Call), as
	 * for callgrind: no chasing into the callee. */
	if (pg_clo_calls)
		VG_(clo_vex_control).guest_chase = False;
	start_pid = VG_(getpid)();
	pg_threads_init();
	pg_code_init();
	if (!pg_trace_open())
		VG_(fmsg_bad_option)("--plumb-trace", "cannot write the trace\n");
}

/* ---- The summary ---- */

static HChar *summary;
static SizeT summary_used, summary_capacity;

static void summary_line(const HChar *line)
{
	SizeT n = VG_(strlen)(line);
	if (summary_used + n + 2 > summary_capacity) {
		summary_capacity = 2 * (summary_capacity + n + 2);
		summary = VG_(realloc)("pg.summary", summary, summary_capacity);
	}
	VG_(memcpy)(summary + summary_used, line, n);
	summary_used += n;
	summary[summary_used++] = '\n';
}

/* Appends s to the command line with newlines turned into blanks. */
static void append_argument(HChar *line, SizeT capacity, const HChar *s)
{
	SizeT n = VG_(strlen)(line);
	if (n + 2 >= capacity)
		return;
	line[n++] = ' ';
	for (; *s && n + 1 < capacity; s++)
		line[n++] = (*s == '\n' || *s == '\r') ? ' ' : *s;
	line[n] = 0;
}

static void write_summary(Int exit_code)
{
	HChar line[4096];
	summary_line("plumbgrind 1");
	VG_(strcpy)(line, "command");
	append_argument(line, sizeof line, VG_(args_the_exename) ? VG_(args_the_exename) : "?");
	for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_client)); i++)
		append_argument(line, sizeof line, *(HChar **)VG_(indexXA)(VG_(args_for_client), i));
	summary_line(line);
	VG_(sprintf)(line, "pid %d", VG_(getpid)());
	summary_line(line);
	VG_(strcpy)(line, "fields");
	for (Int i = 0; i < PG_COUNTERS; i++)
		append_argument(line, sizeof line, pg_counter_names[i]);
	summary_line(line);
	pg_threads_report(summary_line);
	if (pg_trace_error())
		VG_(snprintf)(line, sizeof line, "trace error %s", pg_trace_error());
	else if (pg_clo_ring && !pg_clo_count_records && !pg_filter_enabled && !pg_clo_trace && pg_clo_trace_fd < 0)
		VG_(strcpy)(line, "trace uncounted");
	else if (pg_clo_trace || pg_clo_trace_fd >= 0 || pg_clo_ring)
		VG_(sprintf)(line, "trace records %llu", pg_trace_records());
	else
		VG_(strcpy)(line, "trace none");
	summary_line(line);
	summary_line("end");

	pg_write_file("--plumb-out", pg_clo_out, "summary", summary, summary_used);
}

static void finish(Int exit_code)
{
	/* before the trace ends: a reader at the trace's end finds it whole */
	if (!forked_child)
		pg_code_write();
	pg_trace_close();
	/* A forked child shares the parent's file name unless it holds %p. */
	if (forked_child && !VG_(strstr)(pg_clo_out, "%p"))
		return;
	if (VG_(strcmp)(pg_clo_out, "none") == 0)
		return;   /* only the trace is wanted */
	write_summary(exit_code);
}

static void pre_option_init(void)
{
	VG_(details_name)("plumbgrind");
	VG_(details_version)("0.1.0");
	VG_(details_description)("plumb's exact instruction, load and store counter");
	VG_(details_copyright_author)("plumb developers");
	VG_(details_bug_reports_to)("the plumb project");
	VG_(details_avg_translation_sizeB)(275);
	/* Only the stack pointer need be exact at a memory access, as for
	 * cachegrind: plumbgrind reports no errors and takes no stack traces at
	 * one, and the guest state writes it saves make the code to translate
	 * smaller (sqlite3: 3%).  The same setting as cachegrind's also keeps
	 * the program's run the same as under cachegrind.  A user's
	 * --vex-iropt-register-updates still wins. */
	VG_(clo_vex_control).iropt_register_updates_default = VG_(clo_px_file_backed) = VexRegUpdSpAtMemAccess;
	VG_(basic_tool_funcs)(post_option_init, pg_instrument, finish);
	VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
	VG_(needs_client_requests)(handle_request);
	VG_(track_start_client_code)(pg_thread_start_client_code);
	VG_(track_pre_thread_ll_create)(pg_thread_created);
	VG_(track_pre_thread_ll_exit)(pg_thread_exited);
	VG_(atfork)(NULL, NULL, fork_child);
	VG_(needs_syscall_wrapper)(pg_ring_pre_syscall, pg_ring_post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(pre_option_init)
