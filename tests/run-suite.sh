#!/bin/sh
# Runs one Criterion suite so that no skip is silent: Criterion prints a
# skipped test and its reason only when verbose, and verbose also prints a
# [RUN] and a [PASS] line per test; those two are dropped here.  The suite's
# exit status is kept.
#   tests/run-suite.sh SUITE [CRITERION OPTIONS...]
suite=$1
shift
status_file=$(mktemp "${TMPDIR:-/tmp}/plumb-suite-status.XXXXXX") || exit 1
trap 'rm -f "$status_file"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
{ "$suite" --verbose "$@" 2>&1; echo $? > "$status_file"; } |
	awk '/^\[(RUN |PASS)\]/ { next }
	     /^\[SKIP\]/ && /Test is disabled$/ { next }
	     /^\[SKIP\]/ { skipped++ }
	     { print; fflush() }
	     END { if (skipped) printf "[====] Skipped, with the reasons above: %d\n", skipped }'
exit "$(cat "$status_file")"
