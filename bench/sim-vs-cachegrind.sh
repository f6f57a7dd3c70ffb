#!/bin/sh
# plumb sim -- PROG against valgrind --tool=cachegrind on the same real programs,
# alternating the runs so both see the same machine load:
#   cachegrind       valgrind --tool=cachegrind with I1/D1/LL given (this VM's
#                    auto-detected LL is meaningless, docs/simulator.md)
#   plumb-1core      plumb sim -p cachegrind --basic with the same geometry: one
#                    core, cachegrind's model (its figures equal cachegrind's), no
#                    miss classification (cachegrind has none)
#   plumb-1core-c    the same with plumb's default miss classification (compulsory,
#                    capacity, conflict), what a user gets without --basic
#   plumb-2core      plumb sim: two cores, MESI, private L1s and L2, a shared L3
# Prints wall and CPU seconds (user + system, the tool and plumb together) per
# run, and the ratios of the medians to cachegrind's median; checks that
# plumb-1core's I refs and D1 misses equal cachegrind's (both run with the
# same VALGRIND_LIB, so the programs see the same environment).
#   bench/sim-vs-cachegrind.sh [-n RUNS] [-p PROGRAMS] [-b PLUMB] [-t TOOLS]   (from the source tree, after make)
# -t TOOLS runs only these of plumb-1core plumb-1core-c plumb-1core-b plumb-1core-c-b plumb-2core plumb-2core-b
# (cachegrind always runs: the ratios are to it).
# The figures in docs/PERFORMANCE.md come from this, in a checkout of main built with
# make and an older checkout built in OLD (the same command on a quiet machine for wall times):
#   BEFORE_VALGRIND_LIB=OLD/build/vg/lib bench/sim-vs-cachegrind.sh -n 3 -b OLD/build/plumb
# -b PLUMB adds plumb-1core-b, plumb-1core-c-b and plumb-2core-b: the same
# one-core (without and with classification) and two-core runs with another plumb binary (an older build, for a before/after
# in the same minutes; its tool from BEFORE_VALGRIND_LIB, default VALGRIND_LIB).
# Both classified one-core runs and both two-core runs then name their tool in PLUMB_VALGRIND_LIB, so the
# program sees the same environment and the outputs are equal when the two
# tool directories' paths have the same length (the environment is on the
# program's stack: a longer one moves its addresses).
# PROGRAMS: any of md5sum gzip sort sort-long sort-threads xz sqlite3 (default: all whose
# program is installed).
# Inputs (made here, the same every time): md5sum of 20 MB of text, gzip -c of 1 MB, sort -n
# --parallel=1 of 100,000 numbers (one thread: a multi-threaded run is not the same twice),
# sort-long: sort --parallel=1 of 60,000 long pseudo-random lines (about 5.8 MB: string
# compares, not short numbers), sort-threads: the same with --parallel=2 -S 1M (two
# threads merging; its figures differ from run to run, so only its time is compared),
# xz -c of 200 KB, sqlite3 building and querying an indexed table of 30,000 rows in memory.
# About a minute per program and run on a quiet 2-vCPU machine.
set -eu
runs=2
programs="md5sum gzip sort sort-long sort-threads xz sqlite3"
before=
only=
while getopts n:p:b:t: option; do
	case $option in
	n) runs=$OPTARG ;;
	p) programs=$OPTARG ;;
	b) before=$OPTARG ;;
	t) only=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [-p PROGRAMS] [-b PLUMB] [-t TOOLS]" >&2; exit 2 ;;
	esac
done
plumb=${PLUMB:-$PWD/build/plumb}
VALGRIND_LIB=${VALGRIND_LIB:-$PWD/build/vg/lib}
export VALGRIND_LIB
[ -x "$plumb" ] && [ -f "$VALGRIND_LIB/plumbgrind-amd64-linux" ] || { echo "$0: build plumb and plumbgrind first (make)" >&2; exit 1; }
I1=32768,8,64 D1=32768,8,64 LL=8388608,16,64
work=$(mktemp -d "${TMPDIR:-/tmp}/plumb-vs-cg.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Inputs, made the same way every time.
seq 1 2600000 > "$work/text"                                   # 20 MB of text
head -c 1000000 "$work/text" > "$work/text1"
head -c 200000 "$work/text" > "$work/text02"
seq 1 100000 | awk '{ print ($1 * 7919) % 100003 }' > "$work/lines"
# long lines from a fixed linear congruential generator: the same file every time
awk 'BEGIN { x = 12345; for (i = 0; i < 60000; i++) { line = "";
	for (j = 0; j < 12; j++) { x = (x * 1103515245 + 12345) % 2147483648; line = line sprintf("%08x", x) }
	print line } }' > "$work/long"
sql="create table t(x); with recursive c(i) as (select 1 union all select i+1 from c where i<30000)
insert into t select (i*7919)%30011 from c; create index tx on t(x); select count(*), sum(x) from t where x%3=0;"

command_of() {
	case $1 in
	md5sum) echo "md5sum $work/text" ;;
	gzip) echo "gzip -c $work/text1" ;;
	sort) echo "sort -n --parallel=1 $work/lines" ;;
	sort-long) echo "sort --parallel=1 $work/long" ;;
	sort-threads) echo "sort --parallel=2 -S 1M $work/long" ;;
	xz) echo "xz -c $work/text02" ;;
	sqlite3) echo "sqlite3 :memory:" ;;
	esac
}

timed() {   # timed OUT COMMAND...: appends "wall cpu" of COMMAND to OUT
	out=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$work/time" "$@"
	awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$work/time" >> "$out"
}

run_tool() {   # run_tool TOOL PROGRAM
	cmd=$(command_of "$2")
	stdin=/dev/null
	[ "$2" = sqlite3 ] && { printf '%s\n' "$sql" > "$work/sql"; stdin=$work/sql; }
	case $1 in
	cachegrind)
		timed "$work/$2.$1" valgrind --tool=cachegrind --cache-sim=yes --I1=$I1 --D1=$D1 --LL=$LL \
			--cachegrind-out-file=/dev/null $cmd < "$stdin" > "$work/out" 2> "$work/$2.cg.txt" ;;
	plumb-1core)
		timed "$work/$2.$1" "$plumb" sim -p cachegrind --basic --l1i $I1 --l1d $D1 --l3 $LL --csv -o "$work/$2.p1.csv" \
			-- $cmd < "$stdin" > "$work/out" 2>&1 ;;
	plumb-1core-c)
		PLUMB_VALGRIND_LIB=${before:+$VALGRIND_LIB} timed "$work/$2.$1" "$plumb" sim -p cachegrind --l1i $I1 --l1d $D1 --l3 $LL --csv -o "$work/$2.p1c.csv" \
			-- $cmd < "$stdin" > "$work/out" 2>&1 ;;
	plumb-1core-b)
		PLUMB_VALGRIND_LIB=${BEFORE_VALGRIND_LIB:-$VALGRIND_LIB} timed "$work/$2.$1" "$before" sim -p cachegrind --basic --l1i $I1 --l1d $D1 --l3 $LL --csv \
			-o "$work/$2.pb.csv" -- $cmd < "$stdin" > "$work/out" 2>&1 ;;
	plumb-1core-c-b)
		PLUMB_VALGRIND_LIB=${BEFORE_VALGRIND_LIB:-$VALGRIND_LIB} timed "$work/$2.$1" "$before" sim -p cachegrind --l1i $I1 --l1d $D1 --l3 $LL --csv \
			-o "$work/$2.pcb.csv" -- $cmd < "$stdin" > "$work/out" 2>&1 ;;
	plumb-2core)
		PLUMB_VALGRIND_LIB=${before:+$VALGRIND_LIB} timed "$work/$2.$1" "$plumb" sim -p default --cores 2 --protocol mesi --l3 $LL --csv -o "$work/$2.p2.csv" \
			-- $cmd < "$stdin" > "$work/out" 2>&1 ;;
	plumb-2core-b)
		PLUMB_VALGRIND_LIB=${BEFORE_VALGRIND_LIB:-$VALGRIND_LIB} timed "$work/$2.$1" "$before" sim -p default --cores 2 \
			--protocol mesi --l3 $LL --csv -o "$work/$2.p2b.csv" -- $cmd < "$stdin" > "$work/out" 2>&1 ;;
	esac
}

# the median of column $2 (the lower middle one for an even count)
median() { sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
tools="cachegrind plumb-1core plumb-1core-c plumb-2core"
[ -n "$before" ] && tools="cachegrind plumb-1core plumb-1core-c plumb-1core-b plumb-1core-c-b plumb-2core plumb-2core-b"
if [ -n "$only" ]; then
	tools=cachegrind
	for tool in $only; do
		case $tool in
		cachegrind) ;;
		plumb-1core | plumb-1core-c | plumb-2core) tools="$tools $tool" ;;
		plumb-1core-b | plumb-1core-c-b | plumb-2core-b) [ -n "$before" ] || { echo "$0: $tool needs -b PLUMB" >&2; exit 2; }; tools="$tools $tool" ;;
		*) echo "$0: -t: unknown tool $tool" >&2; exit 2 ;;
		esac
	done
fi

echo "# $(date -u '+%Y-%m-%d %H:%M') UTC, load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $runs runs each, alternating"
printf '%-8s %-13s %-24s %-24s %8s %8s %s\n' program tool "wall s (runs)" "cpu s (runs)" wall/cg cpu/cg "figures (ratios: medians)"
for program in $programs; do
	command -v "${program%%-*}" > /dev/null || { echo "# $program: not installed, skipped"; continue; }
	for r in $(seq 1 "$runs"); do
		for tool in $tools; do
			run_tool $tool "$program"
		done
	done
	cg_wall=$(median "$work/$program.cachegrind" 1)
	cg_cpu=$(median "$work/$program.cachegrind" 2)
	cg_irefs=$(sed -n 's/.*I *refs: *//p' "$work/$program.cg.txt" | tr -d ',')
	cg_d1=$(sed -n 's/.*D1 *misses: *\([0-9,]*\).*/\1/p' "$work/$program.cg.txt" | tr -d ',')
	p_irefs= p_d1=
	if [ -f "$work/$program.p1.csv" ]; then   # -t without plumb-1core: none
		p_irefs=$(awk -F, '$1 == "I refs" { print $2 }' "$work/$program.p1.csv")
		p_d1=$(awk -F, '$1 == "D1 misses" { print $2 }' "$work/$program.p1.csv")
	fi
	for tool in $tools; do
		walls=$(cut -d' ' -f1 "$work/$program.$tool" | paste -sd' ')
		cpus=$(cut -d' ' -f2 "$work/$program.$tool" | paste -sd' ')
		wall=$(median "$work/$program.$tool" 1)
		cpu=$(median "$work/$program.$tool" 2)
		figures=
		[ $tool = plumb-1core-c-b ] && [ "$program" != sort-threads ] && figures="classified output $(cmp -s "$work/$program.p1c.csv" "$work/$program.pcb.csv" && echo equal to plumb-1core-c || echo DIFFERENT from plumb-1core-c)"
		[ $tool = plumb-2core-b ] && figures="two-core output $(cmp -s "$work/$program.p2.csv" "$work/$program.p2b.csv" && echo equal to plumb-2core || echo DIFFERENT from plumb-2core)"
		[ $tool = plumb-1core ] && [ "$program" != sort-threads ] && figures="I refs $p_irefs/$cg_irefs, D1 misses $p_d1/$cg_d1 ($([ "$p_irefs" = "$cg_irefs" ] && [ "$p_d1" = "$cg_d1" ] && echo equal || echo DIFFERENT))"
		printf '%-8s %-13s %-24s %-24s %8.2f %8.2f %s\n' "$program" $tool "$walls" "$cpus" \
			"$(echo "$wall $cg_wall" | awk '{ print $1 / $2 }')" "$(echo "$cpu $cg_cpu" | awk '{ print $1 / $2 }')" "$figures"
	done
done
