#!/bin/sh
# The build's configuration stamp (Makefile, BUILD_STAMP): an object built
# under one configuration (compiler, flags, the optional libraries found)
# is out of date under another, so a build begun before `make deps`
# installed PAPI or Open MPI is rebuilt with them instead of being linked
# from objects compiled without.  One object, in a folder of its own,
# under two OPT settings; a few seconds.
set -eu
dir=$(mktemp -d "${TMPDIR:-/tmp}/plumb-stamp.XXXXXX")
trap 'rm -rf "$dir"' EXIT
object=$dir/b/src/core/status.o
run() { make --no-print-directory -s BUILD="$dir/b" "$@" > /dev/null; }
fail() { echo "build stamp: $*" >&2; exit 1; }
run "$object"
run -q "$object" || fail "an object just built is out of date"
sleep 1   # the stamp is rewritten below: a later time even on a coarse clock
if run -q OPT='-O1 -g' "$object"; then fail "an object built with -O2 is up to date under OPT='-O1 -g'"; fi
run OPT='-O1 -g' "$object"
run -q OPT='-O1 -g' "$object" || fail "an object rebuilt with -O1 is out of date under -O1"
sleep 1
if run -q "$object"; then fail "an object built with -O1 is up to date under the default OPT"; fi
[ "$(grep -c . "$dir/b/config.stamp")" = 1 ] || fail "the stamp is not one line"
echo "build stamp: an object is rebuilt when the configuration changes"
