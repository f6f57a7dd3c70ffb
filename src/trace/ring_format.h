/* The words of plumbgrind's binary ring, in one place for both sides: the
 * tool that writes them (vg/pg_ring.c, vg/pg_filter.c) and plumb, which
 * reads them (src/trace/trace_ring.c, trace_entries.c).  Plain #defines and
 * nothing included, so that Valgrind's tool code, which has no C library,
 * takes it too.  docs/valgrind-tool.md ("The binary ring") tells the
 * protocol; src/trace/trace_entries.h and vg/pg_filter.h each entry's words.
 *
 * An entry's tag is the top 4 bits of its first 64-bit word: */
#ifndef PLUMB_RING_FORMAT_H
#define PLUMB_RING_FORMAT_H

#define PLUMB_RING_TAG_SHIFT 60
#define PLUMB_RING_USE 1u       /* a flush of a definition's events: their data addresses */
#define PLUMB_RING_DEFINE 2u    /* what a flush of a superblock's events holds */
#define PLUMB_RING_THREAD 3u    /* the thread that runs from here on */
#define PLUMB_RING_SINGLE 4u    /* one reference */
#define PLUMB_RING_MARKER 5u    /* a region's begin or end, with its name */
#define PLUMB_RING_CALL 6u      /* a call (--plumb-calls=yes) */
#define PLUMB_RING_RETURN 7u    /* returns */
#define PLUMB_RING_COUNTS 8u    /* the L1 filter's settled references (--plumb-filter) */
#define PLUMB_RING_GENERAL 9u   /* one reference the L1 filter passes on */

/* On the full pipe, in place of a block's length: the program exited (not
 * exec'd another, which Valgrind does not follow).  The last word. */
#define PLUMB_RING_END 0xffffffffu
/* On the full pipe, in place of a block's length: the program calls execve;
 * then the name's length (4 bytes, at most PLUMB_RING_EXEC_NAME_MAX) and the
 * name.  More blocks and the end word follow if the exec failed. */
#define PLUMB_RING_EXEC 0xfffffffeu
#define PLUMB_RING_EXEC_NAME_MAX 1024u

#endif
