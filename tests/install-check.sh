#!/bin/sh
# Installs into a scratch DESTDIR and builds a program against the installed
# headers and library through pkg-config, the way a user would.
set -u
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
passed=0 failed=0
check() {
	name=$1; shift
	if "$@" >"$root/log" 2>&1; then passed=$((passed + 1)); echo "ok   $name"
	else failed=$((failed + 1)); echo "FAIL $name"; sed 's/^/     /' "$root/log"; fi
}
check "make install" make --no-print-directory install PREFIX=/usr/local DESTDIR="$root/dest"
check "program installed" test -x "$root/dest/usr/local/bin/plumb"
check "perturb's exec guard installed" test -f "$root/dest/usr/local/lib/plumb/libplumb-exec-guard.so"
# The installed program finds libplumb.so and the guard (without perf events
# perturb fails for that reason instead, which is not this check's concern).
check "installed perturb finds its preloads" sh -c "! '$root/dest/usr/local/bin/plumb' perturb --intervals 1ms --halts 0 -r 2 \
	-e task-clock -- sh -c 'exec true' 2>&1 | grep 'not found'"
check "man pages installed" test -f "$root/dest/usr/local/share/man/man1/plumb.1" -a -f "$root/dest/usr/local/share/man/man3/libplumb.3"
inc="$root/dest/usr/local/include/plumb"
check "public headers installed" test -f "$inc/plumb.h" -a -f "$inc/region.h" -a -f "$inc/valgrind.h"
# Only the public headers: every other header is the library's own.
check "only public headers installed" sh -c "test \"\$(ls '$inc' | tr '\n' ' ')\" = 'plumb.h region.h valgrind.h '"
# Installed headers speak to users: papers by author and year, no internal
# shorthand for them.
check "headers cite by author and year" sh -c "! grep -niE 'seed [0-9]{3}|thesis' '$inc'/*.h"
# The shared library exports the public API and nothing else.
lib="$root/dest/usr/local/lib/libplumb.so.0"
check "every exported symbol starts with plumb_" sh -c \
	"nm -D --defined-only '$lib' | awk '\$2 != \"A\" { print \$3 }' | sed 's/@.*//' > '$root/exported' &&
	 test -s '$root/exported' && ! grep -v '^plumb_' '$root/exported'"
check "the version script lists every exported symbol" sh -c \
	"sed -n 's/^[[:space:]]*\\(plumb_[a-z0-9_]*\\);/\\1/p' libplumb.map | sort > '$root/listed' &&
	 sort '$root/exported' | diff - '$root/listed'"
# The static library defines the same names and nothing else: its internal
# functions are local symbols of its one object (see the Makefile).
archive="$root/dest/usr/local/lib/libplumb.a"
check "the static library defines only the exported symbols" sh -c \
	"nm -g --defined-only '$archive' | awk 'NF == 3 { print \$3 }' | sort > '$root/archived' &&
	 test -s '$root/archived' && ! grep -v '^plumb_' '$root/archived' && diff '$root/archived' '$root/listed'"
check "symbols are versioned PLUMB_1.0" sh -c "nm -D --defined-only '$lib' | grep -q 'plumb_region_begin@@PLUMB_1.0'"
cat > "$root/user.c" <<'C'
#include <plumb/plumb.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	plumb_error error;
	plumb_sim *sim;
	if (plumb_sim_new(&sim, NULL, NULL, &error) != 0) {
		fprintf(stderr, "%s\n", error.message);
		return 1;
	}
	/* Two reads of one line: one compulsory miss, then a hit. */
	plumb_sim_access(sim, 0, PLUMB_ACCESS_READ, 0x1000, 8, &error);
	plumb_sim_access(sim, 0, PLUMB_ACCESS_READ, 0x1008, 8, &error);
	plumb_sim_counts counts;
	plumb_sim_counts_get(sim, -1, &counts, &error);
	plumb_sim_free(sim);
	PLUMB_REGION_BEGIN("never compiled in");
	printf("%s %llu %llu\n", plumb_version(), (unsigned long long)counts.l1d.accesses,
	       (unsigned long long)counts.l1d.misses);
	return counts.l1d.accesses == 2 && counts.l1d.misses == 1 ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$root/dest/usr/local/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$root/dest"
check "pkg-config knows plumb" pkg-config --exists plumb
check "user program builds" sh -c "cc -std=c99 -Wall -Wextra -Werror -pedantic -o '$root/user' '$root/user.c' \$(pkg-config --cflags --libs plumb)"
check "user program runs" env LD_LIBRARY_PATH="$root/dest/usr/local/lib" "$root/user"
# The same program linked against the static library: libplumb's code is in
# the program, which needs no libplumb.so to run.
# (docs/library.md gives this command line)
# The dependencies pkg-config knows are named, not copied: a static link
# then gets hwloc's own dependencies from hwloc.pc.
check "plumb.pc names its pkg-config dependencies" sh -c "grep -q '^Requires.private: hwloc libzstd json-c' '$root/dest/usr/local/lib/pkgconfig/plumb.pc' 2>/dev/null || grep -rq '^Requires.private: hwloc libzstd json-c' '$root/dest'"
static_libs() { pkg-config --static --libs plumb | sed 's/-lplumb /-l:libplumb.a /'; }
check "user program links statically" sh -c "cc -std=c99 -Wall -Wextra -Werror -pedantic -o '$root/user-static' '$root/user.c' \$(pkg-config --cflags plumb) $(static_libs) &&
	 ! readelf -d '$root/user-static' | grep -q 'libplumb' && nm '$root/user-static' | grep -q ' T plumb_sim_new'"
check "statically linked program runs" "$root/user-static"
# A program may name its own functions as the library names its internal
# ones (sim_new is the simulator's, behind plumb_sim_new): both link, and
# each call reaches its own.
cat > "$root/clash.c" <<'C'
#include <plumb/plumb.h>
int sim_new(void);
int sim_new(void) { return 7; }
int main(void)
{
	plumb_sim *sim;
	plumb_error error;
	if (plumb_sim_new(&sim, NULL, NULL, &error) != 0)
		return 1;
	plumb_sim_free(sim);
	return sim_new() == 7 ? 0 : 1;
}
C
check "a program's own internal-looking names link statically" sh -c "cc -std=c99 -Wall -Wextra -Werror -o '$root/clash' '$root/clash.c' \$(pkg-config --cflags plumb) $(static_libs) && '$root/clash'"
# Without -DPLUMB_REGIONS the markers leave no call behind.
check "markers compile out" sh -c "! nm '$root/user' | grep -q plumb_region_begin"
cat > "$root/regions.c" <<'C'
#include <plumb/region.h>
int main(void)
{
	plumb_count counts[4];
	PLUMB_REGION_BEGIN("r");
	int n = PLUMB_REGION_READ("r", counts, 4, 0);
	PLUMB_REGION_END("r");
	return n == 1 && counts[0].state == PLUMB_COUNT_OK && counts[0].value >= 0 ? 0 : 1;
}
C
check "markers build with -DPLUMB_REGIONS" sh -c "cc -DPLUMB_REGIONS -Wall -Wextra -Werror -o '$root/regions' '$root/regions.c' \$(pkg-config --cflags --libs plumb)"
check "markers run and read a running region" env LD_LIBRARY_PATH="$root/dest/usr/local/lib" PLUMB_EVENTS=page-faults \
	PLUMB_REGION_QUIET=1 "$root/regions"
if command -v g++ >/dev/null 2>&1; then
	cat > "$root/user.cc" <<'C'
#include <plumb/plumb.h>
#include <plumb/valgrind.h>
#include <cstdio>
int main()
{
	plumb_sim *sim = nullptr;
	plumb_error error;
	if (plumb_sim_new(&sim, nullptr, nullptr, &error) != 0)
		return 1;
	plumb_sim_free(sim);
	PLUMB_REGION_BEGIN("cxx");
	PLUMB_VG_REGION_BEGIN("cxx");
	PLUMB_VG_REGION_END("cxx");
	PLUMB_REGION_END("cxx");
	std::printf("%s\n", plumb_version());
	return 0;
}
C
	check "a C++ program builds against the headers" sh -c "g++ -std=c++11 -DPLUMB_REGIONS -Wall -Wextra -Werror -pedantic -o '$root/usercc' '$root/user.cc' \$(pkg-config --cflags --libs plumb)"
	check "the C++ program runs" env LD_LIBRARY_PATH="$root/dest/usr/local/lib" PLUMB_REGION_QUIET=1 "$root/usercc"
	check "the C++ program links statically" sh -c "g++ -std=c++11 -DPLUMB_REGIONS -Wall -Wextra -Werror -pedantic -o '$root/usercc-static' '$root/user.cc' \$(pkg-config --cflags plumb) $(static_libs) &&
		 ! readelf -d '$root/usercc-static' | grep -q 'libplumb'"
	check "the statically linked C++ program runs" env PLUMB_REGION_QUIET=1 "$root/usercc-static"
else
	echo "skip C++ program: no g++"
fi
# The build tree itself is linkable, as docs/explain.md invites: a program
# linked against build/ with an rpath finds libplumb.so.0 there and runs
# (build/ used to have only libplumb.so, and the program failed to start).
build=$(pwd)/build
check "an example links against the build tree and runs" sh -c "cc -std=gnu11 -DPLUMB_REGIONS -Iinclude -o '$root/region-build' \
	examples/region_example.c -L'$build' -lplumb -lpthread -Wl,-rpath,'$build' &&
	PLUMB_REGION_QUIET=1 '$root/region-build' 10 1 &&
	ldd '$root/region-build' | grep -q '$build/libplumb.so.0'"
check "uninstall" make --no-print-directory uninstall PREFIX=/usr/local DESTDIR="$root/dest"
check "nothing left" sh -c "! test -e '$root/dest/usr/local/bin/plumb'"
echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
