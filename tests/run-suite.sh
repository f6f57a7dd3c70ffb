#!/bin/sh
# Runs one Criterion suite so that no skip is silent: Criterion prints a
# skipped test and its reason only when verbose, and verbose also prints a
# [RUN] and a [PASS] line per test; those two are dropped here.  The names of
# failing and crashing tests are repeated after the synthesis, so that the
# last lines of a long log (all a CI page may show) name them.  The suite's
# exit status is kept, and the suite fails when its tests leave anything in
# TMPDIR, which is a fresh folder per suite (tests make their temporary files
# there: tests/temp_folder.h).
#   tests/run-suite.sh SUITE [CRITERION OPTIONS...]
suite=$1
shift
status_file=$(mktemp "${TMPDIR:-/tmp}/plumb-suite-status.XXXXXX") || exit 1
# explain keeps LLVM's answers in $XDG_CACHE_HOME/plumb/llvm: the tests keep
# theirs in a folder of their own, never in the user's home.
cache_dir=$(mktemp -d "${TMPDIR:-/tmp}/plumb-suite-cache.XXXXXX") || exit 1
XDG_CACHE_HOME=$cache_dir
export XDG_CACHE_HOME
tmp_dir=$(mktemp -d "${TMPDIR:-/tmp}/plumb-suite-tmp.XXXXXX") || exit 1
TMPDIR=$tmp_dir
export TMPDIR
trap 'rm -f "$status_file"; rm -rf "$cache_dir" "$tmp_dir"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
{ "$suite" --verbose "$@" 2>&1; echo $? > "$status_file"; } |
	awk '/^\[(RUN |PASS)\]/ { next }
	     /^\[SKIP\]/ && /Test is disabled$/ { next }
	     /^\[SKIP\]/ { skipped++ }
	     /Assertion Failed/ { context = 3 }
	     /^\[FAIL\]/ || /CRASH/ || (/^\[----\]/ && context-- > 0 && failures < 60) { failed[++failures] = $0 }
	     { print; fflush() }
	     END { if (skipped) printf "[====] Skipped, with the reasons above: %d\n", skipped
		   for (i = 1; i <= failures; i++) printf "[====] Failed: %s\n", failed[i] }'
status=$(cat "$status_file")
left=$(ls -A "$tmp_dir")
if [ -n "$left" ]; then
	echo "[====] Failed: the suite's tests left these in TMPDIR (a test must remove what it makes, also when it skips):"
	printf '%s\n' "$left" | sed 's/^/[====]   /'
	[ "$status" = 0 ] && status=1
fi
exit "$status"
