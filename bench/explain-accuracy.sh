#!/bin/sh
# How close plumb explain's prediction comes to the measured time, on the
# kernels of PolyBench/C 4.2.1 (Pouchet and Yuki) and on whole programs.
#
#   bench/explain-accuracy.sh [-r RUNS] [-k "KERNEL ..."] [-b PLUMB] [-w WORKDIR] [POLYBENCH_DIR]
#
# POLYBENCH_DIR: an unpacked polybench-c-4.2.1-beta; without it the tarball is
# fetched (curl) into WORKDIR (default: $TMPDIR/plumb-explain-accuracy), never
# into the source tree.  Each kernel is built with -O2 -DMEDIUM_DATASET, its
# timed part (PolyBench's polybench_timer_start/stop, turned on by
# -DPOLYBENCH_TIME) marked as the one region "kernel" through a small wrapper
# that calls plumb_region_begin/end, and run under
#   plumb explain --runs RUNS --machine WORKDIR/machine.json --json
# (the machine's figures measured once, by the first run, so every kernel is
# priced with the same ones).  Then gzip, xz, sort and md5sum on a few MB, as
# whole programs (row "(program)").
#
# Prints per kernel: the prediction, the best wall time of the runs, the CPU
# time (task-clock: this is what the ratio column of plumb explain takes when
# counted; the lowest of the runs), predicted/best and predicted/CPU, and the
# terms; then the median
# |predicted/CPU - 1|, the share within 25%, and the largest miss.
# About 30-90 s per kernel on a 2-vCPU VM (the Valgrind run dominates).
set -eu
runs=5
kernels=
plumb=
work=${TMPDIR:-/tmp}/plumb-explain-accuracy
while getopts r:k:b:w: option; do
	case $option in
	r) runs=$OPTARG ;;
	k) kernels=$OPTARG ;;
	b) plumb=$OPTARG ;;
	w) work=$OPTARG ;;
	*) echo "usage: $0 [-r RUNS] [-k \"KERNEL ...\"] [-b PLUMB] [-w WORKDIR] [POLYBENCH_DIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
src=$(cd "$(dirname "$0")/.." && pwd)
plumb=${plumb:-$src/build/plumb}
[ -x "$plumb" ] || { echo "$0: $plumb is not built (make)" >&2; exit 1; }
[ -f "$src/build/libplumb.so" ] || { echo "$0: $src/build/libplumb.so is not built (make)" >&2; exit 1; }
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 1; }
mkdir -p "$work"
work=$(cd "$work" && pwd)
case "$work" in "$src"|"$src"/*) echo "$0: WORKDIR must be outside the source tree" >&2; exit 2 ;; esac

pb=${1:-}
if [ -z "$pb" ]; then
	pb=$work/polybench-c-4.2.1-beta
	if [ ! -d "$pb" ]; then
		url=https://downloads.sourceforge.net/project/polybench/polybench-c-4.2.1-beta.tar.gz
		echo "fetching $url" >&2
		curl -fsSL "$url" -o "$work/polybench.tar.gz" ||
			{ echo "$0: cannot fetch PolyBench/C ($url); give an unpacked copy as POLYBENCH_DIR" >&2; exit 1; }
		tar -xzf "$work/polybench.tar.gz" -C "$work"
	fi
fi
[ -f "$pb/utilities/polybench.c" ] || { echo "$0: $pb is not PolyBench/C (no utilities/polybench.c)" >&2; exit 1; }
pb=$(cd "$pb" && pwd)

all="correlation covariance gemm gemver gesummv symm syr2k syrk trmm 2mm 3mm atax bicg doitgen mvt
     cholesky durbin gramschmidt lu ludcmp trisolv deriche floyd-warshall nussinov adi fdtd-2d heat-3d
     jacobi-1d jacobi-2d seidel-2d"
kernels=${kernels:-$all}

# The region around PolyBench's timed part, and the library's soname beside it.
cat > "$work/region_wrap.c" <<'EOF'
#include <plumb/region.h>
void plumb_bench_start(void) { plumb_region_begin("kernel"); }
void plumb_bench_stop(void) { plumb_region_end("kernel"); }
void plumb_bench_print(void) { }
EOF
ln -sf "$src/build/libplumb.so" "$work/libplumb.so.0"
cc=${CC:-cc}
$cc -O2 -c -I"$pb/utilities" "$pb/utilities/polybench.c" -o "$work/polybench.o"
$cc -O2 -c -I"$src/include" "$work/region_wrap.c" -o "$work/region_wrap.o"

explain() {   # NAME JSON PROGRAM ARGS...
	name=$1 json=$2
	shift 2
	machine=
	[ -f "$work/machine.json" ] && machine="--machine $work/machine.json"
	# shellcheck disable=SC2086
	"$plumb" explain --runs "$runs" $machine --json -o "$json" -- "$@" >/dev/null 2>"$work/$name.err" ||
		{ echo "$name: plumb explain failed: $(tail -1 "$work/$name.err")" >&2; return 1; }
	[ -f "$work/machine.json" ] || cp "$json" "$work/machine.json"
}

row() {   # NAME JSON REGION
	jq -r --arg region "$3" --arg name "$1" '
		([.tables[] | select(.name == "regions") | .rows[] | select(.region == $region)][0]) as $r |
		([.tables[] | select(.name == "prediction") | .rows[] | select(.region == $region)][0]) as $p |
		if $r == null or $p == null or ($r.predicted_ns | type) != "number" then "\($name) - - - - - - - - -"
		else [$name, ($r.predicted_ns / 1e6), ($r.best_ns / 1e6), (($r.cpu_best_ns // $r.cpu_ns // $r.best_ns) / 1e6),
		      ($r.predicted_ns / $r.best_ns), ($r.predicted_ns / ($r.cpu_best_ns // $r.cpu_ns // $r.best_ns)),
		      $p.ipc, ($p.compute_ns / 1e6), ($p.transfer_ns / 1e6), ($p.stall_ns / 1e6)]
		     | map(if type == "number" then (. * 1000 | round / 1000) else . end) | map(tostring) | join(" ")
		end' "$2"
}

results=$work/results.txt
: > "$results"
printf '%-16s %10s %10s %10s %8s %8s %6s %9s %9s %9s\n' kernel predicted_ms best_ms cpu_ms pred/best pred/cpu \
	ipc core_ms xfer_ms stall_ms
for k in $kernels; do
	dir=$(find "$pb" -type d -name "$k" | head -1)
	[ -n "$dir" ] && [ -f "$dir/$k.c" ] || { echo "$k: not in $pb" >&2; continue; }
	$cc -O2 -DMEDIUM_DATASET -DPOLYBENCH_TIME -Dpolybench_timer_start=plumb_bench_start \
		-Dpolybench_timer_stop=plumb_bench_stop -Dpolybench_timer_print=plumb_bench_print \
		-I"$pb/utilities" -I"$dir" "$dir/$k.c" "$work/polybench.o" "$work/region_wrap.o" \
		"$work/libplumb.so.0" -Wl,-rpath,"$work" -lm -o "$work/$k"
	explain "$k" "$work/$k.json" "$work/$k" || continue
	row "$k" "$work/$k.json" kernel | tee -a "$results" |
		awk '{ printf "%-16s %10s %10s %10s %8s %8s %6s %9s %9s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
done

# Whole programs on a few MB (the "(program)" row: exec, the loader and
# page faults included).
head -c 1000000 /dev/urandom | od -An -tx1 | head -c 3000000 > "$work/text.in"
head -c 500000 "$work/text.in" > "$work/small.in"
seq 1 200000 | awk 'BEGIN { srand(1) } { print int(rand() * 1000000) }' > "$work/numbers.in"
programs=$work/programs.txt
: > "$programs"
for p in gzip xz sort md5sum; do
	command -v "$p" >/dev/null || { echo "$p: not installed" >&2; continue; }
	case $p in
	gzip) set -- -c "$work/text.in" ;;
	xz) set -- -c -T1 "$work/small.in" ;;   # xz under Valgrind: 10 minutes for 3 MB
	sort) set -- -n --parallel=1 "$work/numbers.in" ;;
	md5sum) set -- "$work/text.in" ;;
	esac
	explain "$p" "$work/$p.json" "$(command -v "$p")" "$@" || continue
	row "$p" "$work/$p.json" "(program)" | tee -a "$programs" |
		awk '{ printf "%-16s %10s %10s %10s %8s %8s %6s %9s %9s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
done

summary() {   # FILE LABEL
	awk -v label="$2" '$6 != "-" && $6 > 0 {
		n++; r = $6; d = r > 1 ? r - 1 : 1 - r; dev[n] = d; if (d <= 0.25) within++
		far = r > 1 ? r : 1 / r; if (far > worst) { worst = far; worst_name = $1 }
	}
	END {
		if (!n) { print label ": no rows"; exit }
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (dev[j] < dev[i]) { t = dev[i]; dev[i] = dev[j]; dev[j] = t }
		median = n % 2 ? dev[(n + 1) / 2] : (dev[n / 2] + dev[n / 2 + 1]) / 2
		printf "%s: %d rows, median |predicted/cpu - 1| = %.2f, %d of %d (%.0f%%) within 25%%, farthest %s (%.2fx)\n",
			label, n, median, within, n, 100 * within / n, worst_name, worst
	}' "$1"
}
echo
summary "$results" "PolyBench kernels"
summary "$programs" "whole programs"
echo "(JSON reports in $work)"
