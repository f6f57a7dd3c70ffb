/* Source attribution: the function, file and line of every instruction the
 * program runs, from Valgrind's debug information, for plumb's code table
 * and annotation files (docs/valgrind-tool.md, "Source attribution").
 *
 * Each instruction is looked up once, when Valgrind first translates it
 * (the debug information of a library is certainly loaded then, and a
 * translation is rare next to the executions it serves).  Consecutive
 * instructions with the same function, file and line become one range.  The
 * ranges are kept in tool memory and written at exit, before the trace is
 * closed, so a reader that has seen the trace end finds the file complete:
 *
 *   plumbgrind-code 2
 *   START END LINE FILE<TAB>FUNCTION      (START..END inclusive, hex; tab-separated)
 *   segment START END OFFSET<TAB>PATH     (an executable file mapping code ran from)
 *   end
 *
 * Names are cachegrind's: "dir/file" when the debug information gives a
 * directory, "???" and line 0 when it gives nothing.
 *
 * The segments say which file, at which offset, holds the bytes of the code
 * that ran, for plumb explain's disassembly once the program has ended
 * (/proc/PID/maps of Valgrind's process is gone by then, and a reader that
 * reads it while the program runs can come too late for a short program).
 * Each is recorded when the first instruction in it is translated. */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_oset.h"
#include "pub_tool_options.h"
#include "pub_tool_vki.h"
#include "plumbgrind.h"

#define NAME_MAX_BYTES 1024

Bool pg_code_enabled;
static OSet *seen;                    /* instruction addresses already looked up */
static HChar *text;                   /* the ranges' lines */
static SizeT text_used, text_capacity;

typedef struct {
	Bool open;
	Addr start, end;                  /* end: the last byte of the last instruction */
	UInt line;
	HChar file[NAME_MAX_BYTES];
	HChar function[NAME_MAX_BYTES];
} code_range;
static code_range current;

/* The executable file segments recorded so far.  Looked up for each new
 * instruction, no cache of the last one: a library unloaded and another
 * loaded at its addresses is another segment. */
#define SEGMENTS_MAX 4096
typedef struct {
	Addr start, end;                  /* end inclusive */
	ULong offset;
	Int name;                         /* the segment's file name index */
} code_segment;
static code_segment *segments;
static UInt segment_count;

void pg_code_init(void)
{
	pg_code_enabled = pg_clo_code != NULL;
	if (!pg_code_enabled)
		return;
	seen = VG_(OSetWord_Create)(VG_(malloc), "pg.code.seen", VG_(free));
	text_capacity = 1 << 16;
	text = VG_(malloc)("pg.code.text", text_capacity);
	text_used = VG_(sprintf)(text, "plumbgrind-code 2\n");
	segments = VG_(malloc)("pg.code.segments", SEGMENTS_MAX * sizeof *segments);
}

static void append(const HChar *s, SizeT n)
{
	if (text_used + n + 1 > text_capacity) {
		while (text_used + n + 1 > text_capacity)
			text_capacity *= 2;
		text = VG_(realloc)("pg.code.text", text, text_capacity);
	}
	VG_(memcpy)(text + text_used, s, n);
	text_used += n;
}

/* A copy without the separators of the file format. */
static void copy_name(HChar *to, const HChar *dir, const HChar *name)
{
	SizeT n = 0;
	if (dir && dir[0]) {
		for (; *dir && n < NAME_MAX_BYTES - 2; dir++)
			to[n++] = (*dir == '\t' || *dir == '\n' || *dir == '\r') ? ' ' : *dir;
		to[n++] = '/';
	}
	for (; *name && n < NAME_MAX_BYTES - 1; name++)
		to[n++] = (*name == '\t' || *name == '\n' || *name == '\r') ? ' ' : *name;
	to[n] = 0;
}

static void range_close(void)
{
	if (!current.open)
		return;
	HChar head[96];
	Int n = VG_(sprintf)(head, "%lx %lx %u ", current.start, current.end, current.line);
	append(head, (SizeT)n);
	append(current.file, VG_(strlen)(current.file));
	append("\t", 1);
	append(current.function, VG_(strlen)(current.function));
	append("\n", 1);
	current.open = False;
}

/* A path the file format can carry: no tab or line break (such a file is
 * left out rather than named wrongly). */
static Bool plain_path(const HChar *path)
{
	for (; *path; path++)
		if (*path == '\t' || *path == '\n' || *path == '\r')
			return False;
	return True;
}

/* The executable file segment that holds address, recorded if new. */
static void note_segment(Addr address)
{
	NSegment const *seg = VG_(am_find_nsegment)(address);
	if (!seg || seg->kind != SkFileC || !seg->hasX)
		return;
	for (UInt i = 0; i < segment_count; i++)
		if (segments[i].start == seg->start && segments[i].end == seg->end && segments[i].offset == (ULong)seg->offset &&
		    segments[i].name == seg->fnIdx)
			return;
	const HChar *path = VG_(am_get_filename)(seg);
	if (!path || path[0] != '/' || !plain_path(path) || segment_count == SEGMENTS_MAX)
		return;
	segments[segment_count++] = (code_segment){ seg->start, seg->end, (ULong)seg->offset, seg->fnIdx };
	HChar head[96];
	Int n = VG_(sprintf)(head, "segment %lx %lx %llx\t", seg->start, seg->end, (ULong)seg->offset);
	append(head, (SizeT)n);
	append(path, VG_(strlen)(path));
	append("\n", 1);
}

void pg_code_note(Addr address, UInt length)
{
	if (VG_(OSetWord_Contains)(seen, address)) {
		range_close();
		return;
	}
	VG_(OSetWord_Insert)(seen, address);
	note_segment(address);
	DiEpoch epoch = VG_(current_DiEpoch)();
	const HChar *file = NULL, *dir = NULL, *function = NULL;
	UInt line = 0;
	HChar file_copy[NAME_MAX_BYTES];
	if (VG_(get_filename_linenum)(epoch, address, &file, &dir, &line))
		copy_name(file_copy, dir, file);
	else {
		VG_(strcpy)(file_copy, "???");
		line = 0;
	}
	/* after the file: get_fnname may overwrite the strings it returned */
	if (!VG_(get_fnname)(epoch, address, &function))
		function = "???";
	HChar function_copy[NAME_MAX_BYTES];
	copy_name(function_copy, NULL, function);
	if (current.open && address == current.end + 1 && line == current.line &&
	    VG_(strcmp)(file_copy, current.file) == 0 && VG_(strcmp)(function_copy, current.function) == 0) {
		current.end = address + length - 1;
		return;
	}
	range_close();
	current.open = True;
	current.start = address;
	current.end = address + (length ? length : 1) - 1;
	current.line = line;
	VG_(strcpy)(current.file, file_copy);
	VG_(strcpy)(current.function, function_copy);
}

void pg_code_block_end(void)
{
	range_close();
}

void pg_code_write(void)
{
	if (!pg_code_enabled)
		return;
	range_close();
	append("end\n", 4);
	pg_write_file("--plumb-code", pg_clo_code, "code", text, text_used);
}
