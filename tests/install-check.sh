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
check "man pages installed" test -f "$root/dest/usr/local/share/man/man1/plumb.1"
check "headers installed" test -f "$root/dest/usr/local/include/plumb/output.h"
cat > "$root/user.c" <<'C'
#include <plumb/stats.h>
#include <stdio.h>
int main(void)
{
	double s[] = { 1, 2, 3 };
	stats_summary m;
	stats_summarize(s, 3, &m);
	printf("%g\n", m.median);
	return m.median == 2 ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$root/dest/usr/local/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$root/dest"
check "pkg-config knows plumb" pkg-config --exists plumb
check "user program builds" sh -c "cc -o '$root/user' '$root/user.c' \$(pkg-config --cflags --libs plumb)"
check "user program runs" env LD_LIBRARY_PATH="$root/dest/usr/local/lib" "$root/user"
check "uninstall" make --no-print-directory uninstall PREFIX=/usr/local DESTDIR="$root/dest"
check "nothing left" sh -c "! test -e '$root/dest/usr/local/bin/plumb'"
echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
