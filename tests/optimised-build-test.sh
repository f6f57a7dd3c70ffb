#!/bin/sh
# The tree builds warning-free (-Werror) at -O3 as well as at the default
# -O2: gcc -O3 inlines further and warns of what it cannot prove at a call's
# inlined site (an array of fields set up to a count, a value a parser sets
# when it succeeds, a format's possible truncation), which made
# `make OPT=-O3` fail.  Compile only, into build-o3/; the suites run on the
# default build.  .ci/run calls it.
set -eu
cd "$(dirname "$0")/.."
make --no-print-directory -j2 BUILD=build-o3 OPT='-O3 -g' all
echo "optimised build: the tree builds at -O3 with -Werror"
