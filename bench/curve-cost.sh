#!/bin/sh
# What a miss-ratio curve (plumb sim --curve LEVEL) costs against one
# simulation of the same references: the bench's real programs recorded
# once with plumb trace record (the inputs of bench/sim-vs-cachegrind.sh:
# gzip -c of 1 MB of text, sort -n --parallel=1 of 100,000 numbers, xz -c
# of 200 KB), then, alternating so that all see the same machine load,
#   basic   plumb sim -p cachegrind --basic TRACE        (one configuration)
#   l1d     plumb sim -p cachegrind --curve l1d TRACE    (the L1D's curve)
#   l1i     plumb sim -p cachegrind --curve l1i TRACE
#   l3      plumb sim -p cachegrind --curve l3 TRACE     (the LL's, below cachegrind's L1s)
# Prints the best (least) CPU seconds (user + system) of RUNS runs of each,
# the ratios to basic, and the load average before and after.
#   bench/curve-cost.sh [-n RUNS] [-p PROGRAMS] [-d DIR] [-l LEVELS]   (from the source tree, after make)
# DIR keeps the traces between runs (default: a temporary folder, removed).
# PROGRAMS: any of gzip sort xz (default: all three).  LEVELS: default "l1d l1i l3".
# docs/PERFORMANCE.md ("Miss-ratio curves") has the figures and the commands.
set -eu
runs=3
programs="gzip sort xz"
levels="l1d l1i l3"
dir=
while getopts n:p:d:l: option; do
	case $option in
	n) runs=$OPTARG ;;
	p) programs=$OPTARG ;;
	d) dir=$OPTARG ;;
	l) levels=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [-p PROGRAMS] [-d DIR] [-l LEVELS]" >&2; exit 2 ;;
	esac
done
plumb=${PLUMB:-$PWD/build/plumb}
[ -x "$plumb" ] || { echo "$0: build plumb first (make)" >&2; exit 1; }
if [ -z "$dir" ]; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/plumb-curve.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"

# A trace plumbgrind recorded has its code map beside it; one recorded with
# lackey (a kept DIR from before, or a plumb that found no plumbgrind) has none
# and is not the trace these figures are of.
check_code_map() {
	[ -s "$dir/$1.ptrace.code" ] && return 0
	echo "$0: $dir/$1.ptrace was recorded without plumbgrind (no code map): build plumb (make) or set PLUMB_VALGRIND_LIB${2:-, and remove it}" >&2
	return 1
}

# The traces, made once.
seq 1 2600000 | head -c 1000000 > "$dir/text1"
head -c 200000 "$dir/text1" > "$dir/text02"
seq 1 100000 | awk '{ print ($1 * 7919) % 100003 }' > "$dir/lines"
for p in $programs; do
	if [ -s "$dir/$p.ptrace" ]; then
		check_code_map "$p" || exit 1
		continue
	fi
	case $p in
	gzip) set -- gzip -c "$dir/text1" ;;
	sort) set -- sort -n --parallel=1 "$dir/lines" ;;
	xz) set -- xz -c "$dir/text02" ;;
	*) echo "$0: unknown program $p" >&2; exit 2 ;;
	esac
	command -v "$1" >/dev/null || { echo "$0: $1 is not installed, skipped" >&2; continue; }
	# trace record gives the program's output on its own stderr: kept out of the table.
	# A plumb copied out of build/ (PLUMB=/tmp/plumb-before) finds plumbgrind through
	# PLUMB_VALGRIND_LIB; without it, it would record with lackey, whose traces have
	# no plumbgrind entries and so are not the traces these figures are of.
	PLUMB_VALGRIND_LIB=${PLUMB_VALGRIND_LIB:-$PWD/build/vg/lib} \
		"$plumb" trace record "$dir/$p.ptrace" -- "$@" > /dev/null 2>&1 ||
		{ echo "$0: plumb trace record -- $* failed (run it by hand to see why)" >&2; exit 1; }
	check_code_map "$p" " (removed)" || { rm -f "$dir/$p.ptrace"; exit 1; }
done

# CPU seconds of one run: user + system.
cpu() {
	/usr/bin/time -f '%U %S' "$plumb" sim -p cachegrind "$@" 2>&1 >/dev/null | tail -n 1 | awk '{ printf "%.2f", $1 + $2 }'
}
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $programs; do
	t=$dir/$p.ptrace
	[ -s "$t" ] || continue
	best_basic=
	for l in $levels; do eval "best_$l="; done
	i=0
	while [ "$i" -lt "$runs" ]; do
		best_basic=$(least "$(cpu --basic "$t")" "$best_basic")
		for l in $levels; do
			eval "prev=\${best_$l}"
			eval "best_$l=$(least "$(cpu --curve "$l" "$t")" "$prev")"
		done
		i=$((i + 1))
	done
	line="$p: basic ${best_basic} s"
	for l in $levels; do
		eval "v=\${best_$l}"
		line="$line, --curve $l $v s ($(awk -v a="$v" -v b="$best_basic" 'BEGIN { printf "%.2f", a / b }')x)"
	done
	echo "$line"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
