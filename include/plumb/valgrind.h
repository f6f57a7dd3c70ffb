/* Markers for plumbgrind, plumb's Valgrind tool: exact instruction, load and
 * store counts of named regions, per thread.
 *
 *   #include <plumb/valgrind.h>
 *   PLUMB_VG_REGION_BEGIN("solve");
 *   ... work ...
 *   PLUMB_VG_REGION_END("solve");
 *
 * Run it as `plumb instrument -- ./program` (or valgrind --tool=plumbgrind,
 * see docs/valgrind-tool.md).  Outside the tool every macro is a few
 * instructions that do nothing: Valgrind's client-request sequence is a
 * no-op on real hardware, and so are the two marker no-ops around it.
 *
 * Exactness.  A region counts what the thread executes between the end of
 * its BEGIN marker and the start of its END marker, and nothing of the
 * markers themselves: each macro is wrapped in two distinctive no-ops
 * (`nopl 0x30705047(%rax)` and `nopl 0x31705047(%rax)`, "GPp0"/"GPp1"), and
 * the tool leaves out of every region whatever the thread runs from the
 * first to the second, including the request's argument stores.  The
 * compiler cannot move memory accesses across them (volatile asm with a
 * "memory" clobber); a loop written in inline asm between BEGIN and END is
 * counted to the instruction.
 *
 * Regions nest (an outer region includes its inner ones), may be entered
 * many times (the counts add up, the entries are counted) and are per
 * thread.  END must name the innermost open region of its thread; anything
 * else is reported as a warning in the summary and ignored, like
 * plumb_region_end.
 *
 * PLUMB_VG_STOP / PLUMB_VG_START switch collection off and on for the whole
 * process (all threads), like callgrind's toggle: while off, the reference
 * trace is not written and the per-thread "collected" counts do not grow.
 * Totals and named regions are always counted.
 *
 * PLUMB_VG_RUNNING() is 1 under plumbgrind, 0 otherwise. */
#ifndef PLUMB_VALGRIND_H
#define PLUMB_VALGRIND_H

/* Without valgrind.h (valgrind not installed where this is compiled) every
 * macro is an empty statement and PLUMB_VG_RUNNING() is 0. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#define PLUMB_VG_HAVE_VALGRIND_H 1
#endif
#endif
#if defined(PLUMB_VG_HAVE_VALGRIND_H)
#include <valgrind/valgrind.h>
#endif

/* Request codes: VG_USERREQ_TOOL_BASE('P','G') + n, that is ('P' << 24 |
 * 'G' << 16) + n.  Stable: the tool and programs built against older headers
 * must agree. */
enum {
	PLUMB_VG_REQ_REGION_BEGIN = ((unsigned)'P' << 24 | (unsigned)'G' << 16),
	PLUMB_VG_REQ_REGION_END,
	PLUMB_VG_REQ_START,
	PLUMB_VG_REQ_STOP,
	PLUMB_VG_REQ_RUNNING
};

/* The marker no-ops' bytes: 0f 1f 80 and a 32-bit displacement. */
#define PLUMB_VG_MARK_PAUSE_DISPLACEMENT 0x30705047u   /* "GPp0" */
#define PLUMB_VG_MARK_RESUME_DISPLACEMENT 0x31705047u  /* "GPp1" */

#if defined(__x86_64__) && !defined(NVALGRIND) && defined(PLUMB_VG_HAVE_VALGRIND_H)
#define PLUMB_VG__MARK_PAUSE() \
	__asm__ __volatile__(".byte 0x0f,0x1f,0x80,0x47,0x50,0x70,0x30" ::: "memory")
#define PLUMB_VG__MARK_RESUME() \
	__asm__ __volatile__(".byte 0x0f,0x1f,0x80,0x47,0x50,0x70,0x31" ::: "memory")
#else
#define PLUMB_VG__MARK_PAUSE() do { } while (0)
#define PLUMB_VG__MARK_RESUME() do { } while (0)
#endif

#if defined(PLUMB_VG_HAVE_VALGRIND_H)
#define PLUMB_VG__REQUEST(request, argument)                                         \
	do {                                                                         \
		PLUMB_VG__MARK_PAUSE();                                              \
		VALGRIND_DO_CLIENT_REQUEST_STMT((request), (argument), 0, 0, 0, 0);  \
		PLUMB_VG__MARK_RESUME();                                             \
	} while (0)

#define PLUMB_VG_RUNNING() \
	((int)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, PLUMB_VG_REQ_RUNNING, 0, 0, 0, 0, 0))
#else
#define PLUMB_VG__REQUEST(request, argument) do { (void)(argument); } while (0)
#define PLUMB_VG_RUNNING() 0
#endif

#define PLUMB_VG_REGION_BEGIN(name) PLUMB_VG__REQUEST(PLUMB_VG_REQ_REGION_BEGIN, (const char *)(name))
#define PLUMB_VG_REGION_END(name) PLUMB_VG__REQUEST(PLUMB_VG_REQ_REGION_END, (const char *)(name))
#define PLUMB_VG_START PLUMB_VG__REQUEST(PLUMB_VG_REQ_START, 0)
#define PLUMB_VG_STOP PLUMB_VG__REQUEST(PLUMB_VG_REQ_STOP, 0)

#endif
