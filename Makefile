# plumb: one library (libplumb), one program (plumb), the tests.
#
# Sources are found by wildcard so that adding a file never means editing
# this Makefile: src/**/ *.c goes into the library, src/cli/cmd_*.c each
# define one subcommand (the command table is generated from their names),
# tests/unit/*.c and tests/e2e/*.c are Criterion suites.

PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR    = $(PREFIX)/bin
LIBDIR    = $(PREFIX)/lib
INCDIR    = $(PREFIX)/include
MANDIR    = $(PREFIX)/share/man
PCDIR     = $(LIBDIR)/pkgconfig

VERSION  := 0.1.0
CC       ?= cc
OBJCOPY  ?= objcopy
BUILD    ?= build
OPT      ?= -O2 -g
SANITIZE ?=
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter \
              -fno-strict-aliasing -pthread -fPIC -Iinclude -Isrc $(OPT) $(SANITIZE)
LDFLAGS_BASE = -pthread $(SANITIZE)

# Required libraries.
PKG_REQUIRED := hwloc libzstd json-c gsl
# Optional libraries: PAPI and libpfm4 have no pkg-config file on Debian 12,
# so probe for their headers.
HASH := \#
HAVE_PAPI   := $(shell printf '$(HASH)include <papi.h>\nint main(void){return 0;}' | $(CC) -x c - -o /dev/null -lpapi 2>/dev/null && echo 1)
HAVE_PFM    := $(shell printf '$(HASH)include <perfmon/pfmlib_perf_event.h>\nint main(void){return 0;}' | $(CC) -x c - -o /dev/null -lpfm 2>/dev/null && echo 1)

# Open MPI (optional: plumb cluster, and sim --sweep across ranks).  Debian's
# libopenmpi-dev ships ompi-c.pc.  The MPI code (src/cluster/*_mpi.c) is
# linked into the plumb program only, never into libplumb, so the library
# and its users never depend on MPI.  Build without it: make HAVE_MPI=
HAVE_MPI    := $(shell pkg-config --exists ompi-c 2>/dev/null && printf '$(HASH)include <mpi.h>\nint main(void){return MPI_Init(0,0);}' | $(CC) -x c - -o /dev/null $$(pkg-config --cflags --libs ompi-c) 2>/dev/null && echo 1)
MPI_CFLAGS  := $(if $(HAVE_MPI),$(patsubst -I%,-isystem %,$(shell pkg-config --cflags ompi-c)))
MPI_LIBS    := $(if $(HAVE_MPI),$(shell pkg-config --libs ompi-c))

PKG_CFLAGS := $(shell pkg-config --cflags $(PKG_REQUIRED) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKG_REQUIRED) 2>/dev/null)
OPT_DEFS   := $(if $(HAVE_PAPI),-DPLUMB_HAVE_PAPI=1) $(if $(HAVE_PFM),-DPLUMB_HAVE_PFM=1) $(if $(HAVE_MPI),-DPLUMB_HAVE_MPI=1)
OPT_LIBS   := $(if $(HAVE_PAPI),-lpapi) $(if $(HAVE_PFM),-lpfm)

CFLAGS  += $(CFLAGS_BASE) $(PKG_CFLAGS) $(OPT_DEFS) -DPLUMB_VERSION=\"$(VERSION)\"
LDLIBS  += $(PKG_LIBS) $(OPT_LIBS) -lm -ldl
LDFLAGS += $(LDFLAGS_BASE)

# What the objects are built with that make's dates do not see: the
# compiler, its flags and the optional libraries found.  A build begun
# before `make deps` installed PAPI or Open MPI, or one with another OPT or
# CC in the same folder, is rebuilt rather than linked from objects that
# lack them.  The stamp is rewritten only when its text changes.
BUILD_STAMP := $(BUILD)/config.stamp
BUILD_CONFIG := $(CC) | $(CFLAGS) | $(MPI_CFLAGS) | $(LDFLAGS) | $(LDLIBS) | $(MPI_LIBS)
$(shell mkdir -p $(BUILD) && printf '%s\n' '$(subst ','\'',$(BUILD_CONFIG))' > $(BUILD_STAMP).new && \
	{ cmp -s $(BUILD_STAMP).new $(BUILD_STAMP) && rm -f $(BUILD_STAMP).new || mv -f $(BUILD_STAMP).new $(BUILD_STAMP); })

MPI_SRC  := $(sort $(wildcard src/cluster/*_mpi.c))
LIB_SRC  := $(filter-out $(MPI_SRC),$(sort $(shell find src -name '*.c' -not -path 'src/cli/*')))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
CMD_SRC  := $(sort $(wildcard src/cli/cmd_*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
E2E_SRC  := $(sort $(wildcard tests/e2e/*.c))
BENCH_SRC:= $(sort $(wildcard bench/*.c))
EXAMPLE_SRC := $(sort $(wildcard examples/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/src/cli/command_table.o
MPI_OBJ  := $(if $(HAVE_MPI),$(MPI_SRC:%.c=$(BUILD)/%.o))
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o)
E2E_OBJ  := $(E2E_SRC:%.c=$(BUILD)/%.o)
DEPS     := $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# The installed interface: only these headers are installed, and only the
# symbols libplumb.map lists are exported from the shared library.  The
# library's objects are compiled with hidden visibility; the static archive
# linked by the program, the tests and the benchmarks (LIB_A) still has every
# internal symbol.  The static archive that is installed (LIB_PUBLIC_A) holds
# one object: every library object linked together (ld -r), its hidden
# symbols then made local (objcopy --localize-hidden), so that it defines the
# public API and nothing else, like the shared library.
PUBLIC_HEADERS := include/plumb/plumb.h include/plumb/region.h include/plumb/valgrind.h
VERSION_SCRIPT := libplumb.map

LIB_A    := $(BUILD)/libplumb.a
LIB_SO   := $(BUILD)/libplumb.so
# The soname's file in the build tree, so that a program linked against
# build/ (with an rpath, as docs/explain.md suggests) starts: the dynamic
# linker looks for libplumb.so.0, the name the library carries.
LIB_SONAME_LINK := $(BUILD)/libplumb.so.0
LIB_PUBLIC_A := $(BUILD)/public/libplumb.a
PLUMB    := $(BUILD)/plumb
# Preloaded beside libplumb.so into the commands plumb perturb halts
# (preload/exec_guard.c); no sanitizer: it runs inside other programs.
EXEC_GUARD := $(BUILD)/libplumb-exec-guard.so
UNIT     := $(BUILD)/tests/unit_tests
E2E      := $(BUILD)/tests/e2e_tests
BENCHES  := $(BENCH_SRC:%.c=$(BUILD)/%)
EXAMPLES := $(EXAMPLE_SRC:%.c=$(BUILD)/%)

.PHONY: all lib check test test-install test-unit test-e2e test-fuzz test-layers sanitize bench install uninstall clean deps
all: $(PLUMB) $(LIB_SO) $(LIB_SONAME_LINK) $(EXEC_GUARD) $(LIB_PUBLIC_A) $(UNIT) $(E2E) $(BENCHES) $(EXAMPLES)
lib: $(LIB_A) $(LIB_SO) $(LIB_SONAME_LINK) $(LIB_PUBLIC_A)

# V=1 shows the full command lines.
V ?= 0
ifeq ($(V),0)
Q = @
SAY = @echo
else
Q =
SAY = @:
endif

$(BUILD)/%.o: %.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(SAY) "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(MPI_OBJ): CFLAGS += $(MPI_CFLAGS)
$(LIB_OBJ): CFLAGS += -fvisibility=hidden

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(SAY) "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIB_PUBLIC_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(SAY) "  AR      $@ (public symbols only)"
	$(Q)rm -f $@ $(@:.a=.o)
	$(Q)$(LD) -r -o $(@:.a=.o) $(LIB_OBJ)
	$(Q)$(OBJCOPY) --localize-hidden $(@:.a=.o)
	$(Q)ar rcs $@ $(@:.a=.o)

$(LIB_SO): $(LIB_OBJ) $(VERSION_SCRIPT)
	$(SAY) "  LD      $@"
	$(Q)$(CC) -shared -Wl,-soname,libplumb.so.0 -Wl,--version-script=$(VERSION_SCRIPT) $(LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)

$(LIB_SONAME_LINK): $(LIB_SO)
	$(Q)ln -sf libplumb.so $@

$(EXEC_GUARD): preload/exec_guard.c src/perturb/perturb_internal.h src/counters/counters.h
	@mkdir -p $(dir $@)
	$(SAY) "  LD      $@"
	$(Q)$(CC) -std=c11 -Wall -Wextra -Werror -O2 -fPIC -fvisibility=hidden -Iinclude -Isrc -shared -o $@ $< -ldl

# The command table: every src/cli/cmd_NAME.c defines
#   int cmd_NAME(int argc, char **argv);  and  const char cmd_NAME_summary[];
$(BUILD)/src/cli/command_table.c: $(CMD_SRC) scripts/gen-command-table.sh
	@mkdir -p $(dir $@)
	$(Q)sh scripts/gen-command-table.sh $(CMD_SRC) > $@.tmp && mv $@.tmp $@

$(BUILD)/src/cli/command_table.o: $(BUILD)/src/cli/command_table.c $(BUILD_STAMP)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(PLUMB): $(CLI_OBJ) $(MPI_OBJ) $(LIB_A) $(BUILD_STAMP)
	$(SAY) "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(MPI_OBJ) $(LIB_A) $(LDLIBS) $(MPI_LIBS)

$(UNIT): $(UNIT_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(SAY) "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJ) $(LIB_A) $(LDLIBS) -lcriterion

$(E2E): $(E2E_OBJ) $(PLUMB)
	@mkdir -p $(dir $@)
	$(SAY) "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(E2E_OBJ) $(LIB_A) $(LDLIBS) -lcriterion

$(BUILD)/bench/%: bench/%.c $(LIB_A) $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(SAY) "  CCLD    $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

$(BUILD)/examples/%: examples/%.c $(LIB_A) $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(SAY) "  CCLD    $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

# Tests.  PLUMB_BIN tells the end-to-end suite which program to run.
# Timing-sensitive suites are marked in their own files; Criterion runs
# with two workers here, the size of the machine.
# Build in parallel, then run the suites one after another: suites that
# time things must not share the two cores with a compiler or each other.
test check: all
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory test-e2e
	$(MAKE) --no-print-directory test-fuzz
	sh tests/install-check.sh
	sh tests/build-stamp-test.sh
test-unit: $(UNIT) test-layers
	sh tests/run-suite.sh $(UNIT) --jobs 2 $(TESTFLAGS)
# The layering (docs/DESIGN.md, "Folders, what each may call"), read from the
# built objects: no circle of files in the library, no folder call the table
# there does not list; then the check's own test, which plants each problem
# and expects it caught.  test-unit runs it first, so `make check`, .ci/run
# and every landing (scripts/land.sh) keep the layers.  Takes a second.
test-layers: $(LIB_OBJ) $(CLI_OBJ) $(MPI_OBJ)
	$(SAY) "  LAYERS  $(BUILD)/src against docs/DESIGN.md"
	$(Q)sh scripts/check-layers.sh docs/DESIGN.md $(LIB_OBJ) $(CLI_OBJ) $(MPI_OBJ) $(VG_LAYER_OBJ)
	$(Q)CC="$(CC)" sh tests/check-layers-test.sh $(LIB_OBJ) $(CLI_OBJ) $(MPI_OBJ)
test-e2e: $(E2E)
	PLUMB_BIN=$(abspath $(PLUMB)) PLUMB_SRCDIR=$(abspath .) sh tests/run-suite.sh $(E2E) --jobs 2 $(TESTFLAGS)
test-install: all
	sh tests/install-check.sh
test-fuzz:
	@if [ -f tests/fuzz/Makefile.inc ]; then $(MAKE) -f tests/fuzz/Makefile.inc fuzz-short; else echo "fuzz: no targets yet"; fi

# The sanitizer build lives in its own directory so it never mixes objects
# with the optimised one.
SANITIZE_MAKE = $(MAKE) --no-print-directory BUILD=build-asan CC=clang OPT='-O1 -g -fno-omit-frame-pointer' \
	    SANITIZE='-fsanitize=address,undefined -fno-sanitize-recover=all'
sanitize: export LSAN_OPTIONS = suppressions=$(abspath tests/lsan.supp):print_suppressions=0
sanitize: export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
sanitize:
	$(SANITIZE_MAKE) build-asan/plumb build-asan/tests/unit_tests build-asan/tests/e2e_tests
	$(SANITIZE_MAKE) test-unit
	$(SANITIZE_MAKE) test-e2e

bench: $(BENCHES)

install: $(PLUMB) $(LIB_PUBLIC_A) $(LIB_SO) $(EXEC_GUARD)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(LIBDIR)/plumb $(DESTDIR)$(INCDIR)/plumb $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(PCDIR)
	install -m 755 $(PLUMB) $(DESTDIR)$(BINDIR)/plumb
	install -m 644 $(LIB_PUBLIC_A) $(DESTDIR)$(LIBDIR)/libplumb.a
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libplumb.so.0
	ln -sf libplumb.so.0 $(DESTDIR)$(LIBDIR)/libplumb.so
	install -m 755 $(EXEC_GUARD) $(DESTDIR)$(LIBDIR)/plumb/libplumb-exec-guard.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCDIR)/plumb/
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/*.3 $(DESTDIR)$(MANDIR)/man3/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@VERSION@|$(VERSION)|; s|@REQUIRES@|$(PKG_REQUIRED)|; s|@LIBS@|$(OPT_LIBS) -lm -ldl|' \
	    plumb.pc.in > $(DESTDIR)$(PCDIR)/plumb.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/plumb $(DESTDIR)$(LIBDIR)/libplumb.* $(DESTDIR)$(PCDIR)/plumb.pc
	rm -f $(DESTDIR)$(LIBDIR)/plumb/libplumb-exec-guard.so
	rm -rf $(DESTDIR)$(INCDIR)/plumb
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard man/*.1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(wildcard man/*.3)))

# Installs what a fresh Debian 12 machine lacks (as root, only when missing).
deps:
	sh scripts/install-deps.sh

clean:
	rm -rf build build-asan build-clang build-fuzz

-include $(DEPS)
-include vg/Makefile.inc
