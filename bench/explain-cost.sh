#!/bin/sh
# What plumb explain's one run costs against plumb sim's (issue 25's fast
# path: at most 1.5 times plumb sim -- PROG plus one native run, on a
# program whose Valgrind run dominates): md5sum of SIZE MB of random bytes,
#   native   md5sum FILE
#   sim      plumb sim -- md5sum FILE
#   explain  PLUMB_EXPLAIN_CACHE=0 plumb explain --runs 1 --machine MACHINE --json -o OUT -- md5sum FILE
#            (LLVM's tools run: the first explain of a program)
#   again    the same with LLVM's answers kept from a run before (a cache
#            folder of DIR's, XDG_CACHE_HOME: the same program explained again)
#   [other   the first explain with the plumb of -b, to weigh two builds]
# alternating, RUNS rounds, each timed with /usr/bin/time: wall seconds and
# CPU seconds (user + system of the command and its children).  The
# machine's figures come from a saved model (-m, or one made first with
# plumb explain --runs 1 --json -- true) so that its probe does not count.
# Prints each round, then per round explain / (sim + native) and again /
# (sim + native) in wall and in CPU time, and the load average before and
# after.
#   bench/explain-cost.sh [-n RUNS] [-s MB] [-m MACHINE] [-b OTHER_PLUMB] [-d DIR]   (from the source tree, after make)
# docs/PERFORMANCE.md (Explain, "The fast path") has the figures and the commands.
set -eu
runs=3
size=60
machine=
other=
dir=
while getopts n:s:m:b:d: option; do
	case $option in
	n) runs=$OPTARG ;;
	s) size=$OPTARG ;;
	m) machine=$OPTARG ;;
	b) other=$OPTARG ;;
	d) dir=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [-s MB] [-m MACHINE] [-b OTHER_PLUMB] [-d DIR]" >&2; exit 2 ;;
	esac
done
plumb=${PLUMB:-$PWD/build/plumb}
[ -x "$plumb" ] || { echo "$0: build plumb first (make)" >&2; exit 1; }
[ -z "$other" ] || [ -x "$other" ] || { echo "$0: $other is not a program" >&2; exit 2; }
command -v md5sum >/dev/null || { echo "$0: needs md5sum" >&2; exit 1; }
if [ -z "$dir" ]; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/plumb-explain-cost.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
file=$dir/random$size
[ -s "$file" ] || head -c $((size * 1000000)) /dev/urandom > "$file"
# LLVM's answers for "again", kept by one explain first
mkdir -p "$dir/cache"
if [ -z "$machine" ]; then
	machine=$dir/machine.json
	[ -s "$machine" ] || "$plumb" explain --runs 1 --json -o "$machine" -- true > /dev/null
fi

XDG_CACHE_HOME=$dir/cache "$plumb" explain --runs 1 --machine "$machine" --json -o "$dir/a.json" -- md5sum "$file" \
	> /dev/null

# wall and CPU seconds of one command, its output thrown away
timed() {
	/usr/bin/time -f '%e %U %S' "$@" 2>&1 >/dev/null | tail -n 1 | awk '{ printf "%.2f %.2f", $1, $2 + $3 }'
}

echo "# $(date -u '+%Y-%m-%d %H:%M:%S') UTC, load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $runs rounds, alternating, md5sum of $size MB"
printf '%-6s %-9s %8s %8s\n' round command wall_s cpu_s
ratios=$dir/ratios
: > "$ratios"
r=1
while [ "$r" -le "$runs" ]; do
	n=$(timed md5sum "$file")
	s=$(timed "$plumb" sim -- md5sum "$file")
	e=$(timed env PLUMB_EXPLAIN_CACHE=0 "$plumb" explain --runs 1 --machine "$machine" --json -o "$dir/e.json" -- \
		md5sum "$file")
	a=$(timed env XDG_CACHE_HOME="$dir/cache" "$plumb" explain --runs 1 --machine "$machine" --json -o "$dir/a.json" -- \
		md5sum "$file")
	# shellcheck disable=SC2086  # "wall cpu": two fields
	printf '%-6s %-9s %8s %8s\n' "$r" native $n "$r" sim $s "$r" explain $e "$r" again $a
	o=
	if [ -n "$other" ]; then
		o=$(timed env PLUMB_EXPLAIN_CACHE=0 "$other" explain --runs 1 --machine "$machine" --json -o "$dir/o.json" -- \
			md5sum "$file")
		# shellcheck disable=SC2086
		printf '%-6s %-9s %8s %8s\n' "$r" other $o
	fi
	echo "$r $n $s $e $a $o" >> "$ratios"
	r=$((r + 1))
done
echo "# / (sim + native), per round: explain wall, CPU; again wall, CPU${other:+; other wall, CPU}"
awk '{ printf "%s %.2f %.2f   %.2f %.2f", $1, $6 / ($4 + $2), $7 / ($5 + $3), $8 / ($4 + $2), $9 / ($5 + $3)
       if (NF >= 11) printf "   %.2f %.2f", $10 / ($4 + $2), $11 / ($5 + $3)
       printf "\n" }' "$ratios"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
