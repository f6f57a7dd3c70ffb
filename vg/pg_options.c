/* plumbgrind's options, its shared switches and the one way it writes a
 * file: what every other file of the tool reads, so this file calls none
 * of them (the tool's files
 * call one way, docs/DESIGN.md's layer table).  pg_main.c parses the
 * options into these. */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_vki.h"
#include "plumbgrind.h"

const HChar *pg_clo_out = "plumbgrind.out.%p";
Bool pg_counting = True;
const HChar *pg_clo_trace = NULL;
Long pg_clo_trace_fd = -1;
const HChar *pg_clo_code = NULL;
Bool pg_clo_collect = True;
Bool pg_clo_calls = False;
Bool pg_clo_vector = True;
const HChar *pg_clo_ring = NULL;
const HChar *pg_clo_filter = NULL;
Bool pg_clo_count_records = True;

/* The switches every part reads and one part sets: whether references are
 * collected (pg_threads.c sets it), the running thread's number (set on a
 * thread switch, pg_threads.c), whether the trace goes to plumb's ring
 * (pg_ring.c) and whether the L1 filter is on (pg_filter.c).  Defined here, so that reading one is no call into the
 * file that sets it. */
Bool pg_collecting;
UInt pg_running_thread;
Bool pg_ring_enabled;
Bool pg_filter_enabled;

/* Writes length bytes to the file an option names (expanded, %p and all),
 * through FILE.tmp.PID and a rename, so an interrupted run never leaves a
 * file that looks complete.  what names the file in messages. */
void pg_write_file(const HChar *option, const HChar *value, const HChar *what, const HChar *data, SizeT length)
{
	HChar *path = VG_(expand_file_name)(option, value);
	HChar *temporary = VG_(malloc)("pg.path", VG_(strlen)(path) + 32);
	VG_(sprintf)(temporary, "%s.tmp.%d", path, VG_(getpid)());
	Int fd = VG_(fd_open)(temporary, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
	if (fd < 0) {
		VG_(umsg)("plumbgrind: cannot create the %s file '%s'\n", what, temporary);
		return;
	}
	SizeT done = 0;
	while (done < length) {
		Int n = VG_(write)(fd, data + done, (Int)(length - done));
		if (n <= 0) {
			VG_(umsg)("plumbgrind: writing the %s file '%s' failed\n", what, temporary);
			VG_(close)(fd);
			VG_(unlink)(temporary);
			return;
		}
		done += (SizeT)n;
	}
	VG_(close)(fd);
	if (VG_(rename)(temporary, path) != 0) {
		VG_(umsg)("plumbgrind: cannot rename '%s' to '%s'\n", temporary, path);
		VG_(unlink)(temporary);
	}
}
