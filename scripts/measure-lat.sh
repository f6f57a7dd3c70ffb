#!/bin/sh
# Re-measures the figures in docs/PERFORMANCE.md, section "Latency":
# wall time and results of the default `plumb lat` (three runs), then one run
# with --restart --mlp.  Run from the top of the tree after `make`; prints
# the load average before each run, since the machine's load shapes every
# number.  Usage: scripts/measure-lat.sh [path/to/plumb]  (default build/plumb)
set -e
plumb=${1:-build/plumb}
[ -x "$plumb" ] || { echo "measure-lat: $plumb not found; run make first" >&2; exit 1; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for run in 1 2 3; do
	echo "## plumb lat, run $run (load: $(cut -d' ' -f1-3 /proc/loadavg))"
	/usr/bin/time -f "wall %e s" "$plumb" lat 2>&1 | sed -n '/^Levels/,$p'
done
echo "## plumb lat --restart --mlp (load: $(cut -d' ' -f1-3 /proc/loadavg))"
/usr/bin/time -f "wall %e s" "$plumb" lat --restart --mlp 2>&1 | sed -n '/^Levels/,/^Time per load with k/p;/^Memory-level/,/^Time per load and bandwidth/p;/^note/p;/^wall/p'
