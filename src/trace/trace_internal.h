/* Shared internals of the trace readers and writers (src/trace only).
 *
 * A reader is one struct with a per-format read function; its input is a
 * buffered byte source over a file descriptor (file, pipe, stdin, a child's
 * pipe) or a caller's memory.  Buffers are fixed at open, so memory use never
 * depends on the trace's length. */
#ifndef PLUMB_TRACE_INTERNAL_H
#define PLUMB_TRACE_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include "trace/trace.h"

/* ---- Byte input ------------------------------------------------------- */

typedef struct trace_input {
	int fd;                        /* -1 for a memory source */
	bool close_fd;
	const unsigned char *memory;   /* memory source, not copied */
	size_t memory_length;
	unsigned char *data;           /* buffer; valid bytes are data[start, end) */
	size_t capacity, start, end;
	uint64_t offset;               /* input offset of data[start] */
	bool at_eof;
	const char *name;              /* for messages: a path, "standard input", ... */
} trace_input;

#define TRACE_INPUT_BUFFER (1u << 20)

int trace_input_open_fd(trace_input *input, int fd, bool close_fd, const char *name, plumb_status *status);
int trace_input_open_memory(trace_input *input, const void *data, size_t length, const char *name,
                            plumb_status *status);
/* Makes at least `want` bytes available (fewer only at end of input); returns
 * how many are available, or -1 on a read error. */
long trace_input_fill(trace_input *input, size_t want, plumb_status *status);
static inline size_t trace_input_available(const trace_input *input) { return input->end - input->start; }
static inline void trace_input_consume(trace_input *input, size_t n)
{
	input->start += n;
	input->offset += n;
}
void trace_input_close(trace_input *input);

/* ---- Region names ------------------------------------------------------ */

/* The names a reader's region markers point to (trace.h, trace_region_name):
 * each interned once, in its own allocation, so a pointer handed out in a
 * record stays valid while the table grows, until trace_names_free. */
typedef struct trace_names {
	char **names;
	size_t count, capacity;
	size_t last;                   /* the last name found: markers repeat */
	size_t *slots;                 /* open addressing: index + 1 of a name, 0 empty */
	size_t slot_mask;              /* slots - 1 (a power of two, at least twice count) */
} trace_names;

/* The interned copy of name[0..length); NULL if out of memory. */
const char *trace_names_intern(trace_names *table, const char *name, size_t length);
void trace_names_free(trace_names *table);
/* NULL if name (length bytes) is a valid region name, else why not. */
const char *trace_region_name_problem(const char *name, size_t length);

/* ---- Native format constants (docs/trace-format.md) -------------------- */

#define TRACE_NATIVE_MAGIC "\x89PLUMBTR"
#define TRACE_NATIVE_MAGIC_LENGTH 8
#define TRACE_NATIVE_VERSION_MAJOR 1
#define TRACE_NATIVE_VERSION_MINOR 3   /* 1.1: region markers; 1.2: collector markers; 1.3: entry blocks */
#define TRACE_NATIVE_HEADER_SIZE 16
#define TRACE_NATIVE_BLOCK_HEADER_SIZE 32
#define TRACE_NATIVE_BLOCK_MAGIC 0x4b4c4254u   /* "TBLK" little-endian */
#define TRACE_NATIVE_END_MAGIC 0x444e4554u     /* "TEND" */
#define TRACE_NATIVE_ENTRIES_MAGIC 0x504d4354u /* "TCMP": a block of plumbgrind's entries (1.3) */
/* An entry block's limits: its words, and the records they stand for. */
#define TRACE_NATIVE_MAX_ENTRY_BYTES (16u << 20)
#define TRACE_NATIVE_MAX_ENTRY_RECORDS UINT32_MAX
/* Limits a reader enforces so a corrupt header never drives allocation. */
#define TRACE_NATIVE_MAX_BLOCK_RECORDS (1u << 20)
#define TRACE_NATIVE_MAX_BLOCK_BYTES (16u << 20)
/* What the writer aims for: small enough that a cut loses little. */
#define TRACE_NATIVE_WRITER_BLOCK_RECORDS 65536u
#define TRACE_NATIVE_WRITER_BLOCK_BYTES (1u << 20)
/* The largest encoding of one record: header, control, thread, time, size,
 * address and instruction address, each varint at most 10 bytes. */
#define TRACE_NATIVE_RECORD_MAX_BYTES 64
/* A region marker: header, control, thread, type, name length and name. */
#define TRACE_NATIVE_MARKER_MAX_BYTES (4 + 10 + TRACE_REGION_NAME_MAX)

/* Header byte of an encoded record. */
#define TRACE_CODE_KIND_MASK 0x03u
#define TRACE_CODE_SIZE_SHIFT 2
#define TRACE_CODE_SIZE_MASK 0x1cu
#define TRACE_CODE_SIZE_EXPLICIT 0u   /* size code 0: a varint size follows */
#define TRACE_CODE_LAST_FETCH 0x20u    /* instruction address = the last fetch's address */
#define TRACE_CODE_PREDICTOR 0x40u     /* address delta against predictor 1 (else 0) */
#define TRACE_CODE_EXTENDED 0x80u      /* a control byte follows */
/* Control byte after an extended header. */
#define TRACE_CONTROL_THREAD 0x01u       /* varint thread follows */
#define TRACE_CONTROL_TIME 0x02u         /* zigzag varint time delta follows */
#define TRACE_CONTROL_IADDR_DELTA 0x04u  /* zigzag varint instruction-address delta follows the address */
#define TRACE_CONTROL_IADDR_REPEAT 0x08u /* instruction address = the previous record's */
#define TRACE_CONTROL_REGION 0x10u      /* a region marker (version 1.1): header byte exactly 0x80 */
#define TRACE_CONTROL_COLLECTOR 0x20u   /* a collector marker (version 1.2): header byte exactly 0x80 */
#define TRACE_CONTROL_KNOWN 0x0fu
/* A marker's type byte after the control byte (and thread). */
#define TRACE_MARKER_BEGIN 0u
#define TRACE_MARKER_END 1u
/* A collector marker's type byte. */
#define TRACE_COLLECTOR_HALT 0u
#define TRACE_COLLECTOR_LOST 1u
/* Its largest encoding: header, control, thread, type, four varints. */
#define TRACE_NATIVE_COLLECTOR_MAX_BYTES (3 + 5 * 10)

/* The predictors both sides keep; reset at every block so blocks decode
 * alone.  Two address predictors per stream (fetch, data) so that two
 * interleaved regions (stack and heap, a loop and a callee) both get small
 * deltas; the encoder picks one per record and says which. */
typedef struct trace_codec_state {
	uint64_t fetch[2];
	uint64_t data[2];
	uint64_t last_fetch_address;
	uint64_t last_instruction_address;
	uint64_t last_time;
	uint32_t thread;
	uint8_t fetch_recent, data_recent;   /* encoder only: the predictor used last */
	trace_names *names;            /* decoder: where markers' names go (kept by trace_codec_reset) */
} trace_codec_state;

void trace_codec_reset(trace_codec_state *state);
/* Encodes one record at out (room for TRACE_NATIVE_RECORD_MAX_BYTES); returns bytes written. */
size_t trace_codec_encode(trace_codec_state *state, const trace_record *record, unsigned char *out);
/* A region marker: room for TRACE_NATIVE_MARKER_MAX_BYTES; the name is valid. */
size_t trace_codec_encode_marker(trace_codec_state *state, const trace_record *record, unsigned char *out);
/* A collector marker: room for TRACE_NATIVE_COLLECTOR_MAX_BYTES; the fields are valid. */
size_t trace_codec_encode_collector(trace_codec_state *state, const trace_record *record, unsigned char *out);
/* Decodes up to count records from [*cursor, end).  Returns the number decoded;
 * on malformed input returns the count decoded so far and sets *error to a
 * short description. */
size_t trace_codec_decode(trace_codec_state *state, const unsigned char **cursor, const unsigned char *end,
                          trace_record *records, size_t count, const char **error);

uint64_t trace_checksum(const void *data, size_t length, uint64_t seed);

static inline void trace_put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}
static inline void trace_put_u64(unsigned char *p, uint64_t v)
{
	trace_put_u32(p, (uint32_t)v);
	trace_put_u32(p + 4, (uint32_t)(v >> 32));
}
static inline uint32_t trace_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t trace_get_u64(const unsigned char *p)
{
	return (uint64_t)trace_get_u32(p) | (uint64_t)trace_get_u32(p + 4) << 32;
}
/* Block header checksum: over every header byte except the checksum field (20..23). */
uint32_t trace_block_header_check(const unsigned char *header);

/* ---- Readers ----------------------------------------------------------- */

typedef struct trace_native_state trace_native_state;
typedef struct trace_background trace_background;
typedef struct trace_ring trace_ring;

/* Background decoding (trace_background.c): a ring of this many chunks of
 * this many records (3 x 16 Ki x 32 bytes = 1.5 MiB) between the worker and
 * the caller. */
#define TRACE_BACKGROUND_CHUNKS 3
#define TRACE_BACKGROUND_RECORDS 16384u

typedef struct trace_text_state {
	uint64_t line;                 /* 1-based number of the line being parsed */
	uint32_t thread;
	uint64_t last_fetch_address;
	bool have_fetch;               /* a lackey I line seen since the last thread switch */
	uint64_t pid;                  /* lackey: the process whose ==PID== / --PID-- lines came first */
	bool exited;                   /* lackey: its "Exit code:" line came (the program exited) */
} trace_text_state;

typedef struct trace_command_state {
	pid_t pid;
	bool running;
	char *program;                 /* argv[0], for messages */
	char *code_path;               /* plumbgrind's --plumb-code file, removed at close */
	bool code_skipped;             /* none asked for (TRACE_NO_CODE_MAP): the ring tells an exit */
	const char *tool_note;         /* why lackey traces, when plumbgrind was not found (static text or tool_note_text) */
	char tool_note_text[PATH_MAX + 320];
	bool lackey;                   /* Valgrind's lackey writes the trace (its exit line tells an exit) */
	trace_launch_exit *exit;       /* the caller's, filled when the program is waited for */
} trace_command_state;

struct trace_reader {
	trace_format format;
	trace_input input;
	/* Returns records produced; an error sets failed and failure (records
	 * produced before it are still returned). */
	long (*read)(trace_reader *reader, trace_record *records, size_t capacity);
	void (*destroy)(trace_reader *reader);
	/* Set by readers that can lend records in place (trace_reader_view):
	 * the count, 0 at the end or on an error (failed set). */
	long (*lend)(trace_reader *reader, const trace_record **records, size_t max);
	/* Readers with compact entries (the ring): as trace_reader_view_compact. */
	long (*lend_compact)(trace_reader *reader, const trace_record **records, trace_compact *compact, size_t max);
	trace_ring *ring;              /* plumbgrind's shared ring (trace_ring.c) */
	trace_native_state *native;
	trace_background *background; /* set: records come from an inner reader decoding ahead */
	trace_record *view;            /* trace_reader_view's buffer for the other readers */
	trace_text_state text;
	trace_command_state command;
	trace_names names;             /* region markers' names */
	bool failed;                   /* sticky: a reader that reported an error stays failed */
	plumb_status failure;
	bool allow_truncated;
	trace_reader_info info;
	/* trace_reader_want_unchecked_runs: the run handed out unchecked and
	 * not yet given back (run_cursor: the reader's cursor, still at its
	 * start; NULL: none), its block's end, the records counted for it */
	bool unchecked_runs;
	const uint64_t **run_cursor;
	const uint64_t *run_words, *run_end;
	uint64_t run_counted;
};

int trace_native_reader_init(trace_reader *reader, plumb_status *status);
/* A native reader opened from a path loads its blocks ahead in a worker
 * thread started at the first read (trace_native_read.c); set_ahead(0)
 * before it keeps them in the caller's thread.  set_ahead returns whether
 * the reader loads ahead. */
void trace_native_allow_ahead(trace_reader *reader);
int trace_native_set_ahead(trace_reader *reader, int enable);
/* Whether a native reader's first block is an entry block (format 1.3). */
bool trace_native_starts_with_entries(trace_reader *reader);
/* Makes outer (zeroed) hand out inner's records, decoded by a worker thread
 * started at the first read.  On success outer owns inner, and closes it
 * with close_inner (trace_reader_close: the reader is above this file); on
 * failure the caller still owns it. */
int trace_background_wrap(trace_reader *outer, trace_reader *inner,
                          int (*close_inner)(trace_reader *inner, plumb_status *status), plumb_status *status);
/* trace_reader_view of a wrapped reader (-2: out of memory). */
long trace_background_view(trace_reader *reader, const trace_record **records, size_t max);
/* A lackey reader over a pipe from a child program (trace_command.c). */
int trace_reader_open_pipe(trace_reader **out, int fd, const char *program, plumb_status *status);
/* plumbgrind's binary records through a shared ring (trace_ring.c): the
 * ring is made before the fork; the child keeps its three descriptors
 * (trace_ring_child_keep) and the tool takes trace_ring_tool_option; the
 * parent closes them (trace_ring_parent_started) and reads with a reader
 * that owns the ring from then on. */
int trace_ring_new(trace_ring **out, size_t blocks, size_t block_bytes, plumb_status *status);
int trace_ring_tool_option(const trace_ring *ring, char *option, size_t size);
void trace_ring_child_keep(const trace_ring *ring);
/* The tool was given --plumb-filter: its words are the L1 filter's entries
 * (trace_entries filtered). */
void trace_ring_set_filtered(trace_ring *ring);
void trace_ring_parent_started(trace_ring *ring);
void trace_ring_free(trace_ring *ring);
int trace_ring_reader_init(trace_reader *reader, trace_ring *ring, plumb_status *status);
/* At the trace's end: the tool said the program exited (rather than exec'd
 * another program or died without a word). */
bool trace_ring_program_exited(const trace_reader *reader);
/* The program the traced one last called execve on, when the tool said (NULL: none). */
const char *trace_ring_exec_name(const trace_reader *reader);
/* The ring's next block of entries whole and unchecked (a native writer
 * checks them, trace_entries_scan): 1 with the words, 0 at the end, -1 on an
 * error (the reader's failure).  Gives the previous block back.  Only for a
 * reader nothing was read from otherwise. */
int trace_ring_take_block(trace_reader *reader, const uint64_t **words, size_t *count);
/* The reader over it, for a child program (takes the ring, even on failure). */
int trace_reader_open_ring(trace_reader **out, trace_ring *ring, const char *program, plumb_status *status);
#define TRACE_RING_BLOCKS 8
#define TRACE_RING_BLOCK_BYTES (512u << 10)
/* trace_command_end.c: waits for the child; fails if valgrind or the
 * program failed. */
int trace_command_finish(trace_reader *reader, plumb_status *status);
/* The same when the trace ended without the tool's word that the program
 * exited (image_ended false): a program that exits normally then exec'd
 * another, which Valgrind does not follow; that is an error. */
int trace_command_finish_image(trace_reader *reader, bool image_ended, const char *exec_name, plumb_status *status);
/* The refusal of a program that exec'd another (exec_name NULL: not known). */
int trace_command_exec_refusal(const char *program, const char *exec_name, int code, plumb_status *status);
/* Removes plumbgrind's code file (reader_free). */
void trace_command_forget_code(trace_reader *reader);
int trace_lackey_reader_init(trace_reader *reader, plumb_status *status);
int trace_din_reader_init(trace_reader *reader, plumb_status *status);
/* Looks at the first bytes (already buffered) and names the format. */
int trace_detect_format(trace_input *input, trace_format *out, plumb_status *status);

/* Text helpers shared by the lackey and din readers. */
extern const signed char trace_hex_value[256];
/* Finds the end of the current line in [p, end); returns NULL if no newline. */
static inline const unsigned char *trace_line_end(const unsigned char *p, const unsigned char *end)
{
	return memchr(p, '\n', (size_t)(end - p));
}
/* Runs a line-oriented parser: calls parse_line for every complete line (and
 * a final unterminated one at end of input) until capacity records are out. */
/* Parses one line (without its newline); returns 1 if it produced a record in
 * *record, 0 if not, -1 on error (reader->failure filled). */
typedef int (*trace_line_parser)(trace_reader *reader, const unsigned char *line, const unsigned char *line_end,
                                 trace_record *record);
long trace_text_read(trace_reader *reader, trace_line_parser parse_line, trace_record *records, size_t capacity);
/* Copies up to 40 characters of a line for a message, escaping the unprintable. */
const char *trace_quote_line(const unsigned char *line, const unsigned char *line_end, char *buffer, size_t size);
/* Parses hex digits at *p (at most 16 significant); advances *p.  -1 if none or overflow. */
int trace_parse_hex(const unsigned char **p, const unsigned char *end, uint64_t *out);
/* Parses decimal digits at *p into [1, 65535]; -1 if none, 0 or too large. */
int trace_parse_size(const unsigned char **p, const unsigned char *end, uint16_t *out);

/* ---- Writers ----------------------------------------------------------- */

typedef struct trace_native_writer_state trace_native_writer_state;

struct trace_writer {
	trace_format format;
	FILE *stream;                  /* the temporary file, or stdout */
	void *file;                    /* output_file *, NULL for stdout */
	int (*write)(trace_writer *writer, const trace_record *records, size_t count, plumb_status *status);
	int (*finish)(trace_writer *writer, plumb_status *status);
	void (*destroy)(trace_writer *writer);
	trace_native_writer_state *native;
	char *text;                    /* text writers' output buffer */
	size_t text_length, text_capacity;
	uint32_t text_thread;          /* lackey: thread of the last SCHED line written */
	bool text_thread_known;
	uint64_t records;
};

int trace_native_writer_init(trace_writer *writer, plumb_status *status);
int trace_lackey_writer_init(trace_writer *writer, plumb_status *status);
int trace_din_writer_init(trace_writer *writer, plumb_status *status);
/* trace_text_write.c */
int trace_writer_flush_text(trace_writer *writer, plumb_status *status);
/* Room for at least `need` more bytes in the text buffer (flushing if needed). */
static inline int trace_writer_text_room(trace_writer *writer, size_t need, plumb_status *status)
{
	if (writer->text_length + need > writer->text_capacity)
		return trace_writer_flush_text(writer, status);
	return 0;
}
char *trace_put_hex(char *p, uint64_t value, int min_digits);
char *trace_put_decimal(char *p, uint64_t value);
#define TRACE_TEXT_BUFFER (1u << 20)

/* ---- plumbgrind (trace_tool.c) ----------------------------------------- */

#define TRACE_TOOL_FILE "plumbgrind-amd64-linux"
/* Whether dir holds plumbgrind with valgrind's files beside it. */
bool trace_tool_present(const char *dir);
/* The folder to use as VALGRIND_LIB (instrument_find_tool, plumb/instrument.h,
 * says where it looks). */
int trace_tool_find(char *dir, size_t size, plumb_status *status);

/* ---- The one launcher (trace_launcher.c) -------------------------------- */

/* A program to run under Valgrind:
 *   valgrind --tool=TOOL --vgdb=no OPTIONS... -- ARGV...
 * with VALGRIND_LIB=tool_dir (plumbgrind's folder; NULL: as inherited). */
typedef struct trace_valgrind {
	const char *valgrind;              /* NULL or "": $PLUMB_VALGRIND, else valgrind on PATH */
	const char *tool;                  /* "plumbgrind", "lackey", "cachegrind" */
	const char *tool_dir;
	const char *const *options;        /* NULL-terminated, or NULL */
	char *const *argv;                 /* the program and its arguments */
	const char *const *environment;    /* "NAME=VALUE" set, "NAME" removed, in the child; or NULL */
	int program_stdout;                /* the program's stdout; -1: plumb's */
	bool silent;                       /* stdin, stdout and stderr on /dev/null */
	bool own_group;                    /* interrupt_fork(true), not interrupt_fork_command() */
	const int *keep;                   /* descriptors the child inherits across exec */
	size_t keep_count;
	trace_ring *ring;                  /* a ring whose tool side the child keeps, or NULL */
} trace_valgrind;
/* Starts it (fork and exec; exec's failure comes back as "cannot run
 * VALGRIND: ..."); *pid is valgrind's, for interrupt_waitpid. */
int trace_valgrind_start(const trace_valgrind *run, pid_t *pid, plumb_status *status);

#endif
