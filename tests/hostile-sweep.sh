#!/bin/bash
# The hostile-input sweep: plumb tried as an attacker and a careless user
# would, case by case, against the eleven attacks of docs/bad-input.md's
# "Security" section (shell and gnuplot injection, script in a page,
# planted temporary files, outputs beside devices, unbounded reads, signals
# and file-size limits, grandchildren, setuid, silently wrong numbers, exec).
#
#   tests/hostile-sweep.sh [PLUMB] [-v]     (from the source tree, after make;
#   PLUMB_SRCDIR names the tree when the script runs from a copy)
#
# Not part of `make check` (it takes minutes): run it before a release or
# after touching an input or output path.  Every case runs in a fresh folder
# with TMPDIR pointing into it and a time limit, and checks: the exit status
# class; no crash (a signal death other than the one sent) and no hang; no
# file an injection would create (INJECTED, PWNED) anywhere; no unescaped
# tag of the attacker's in a page plumb wrote; no FILE.tmp.* or plumb-*
# temporary left; no process of the case left running; no special file
# replaced and no file outside the case's folder changed; one line on
# stderr for an error.  Prints "PASS|FAIL|SKIP ITEM CASE [why]" per case
# and the counts per item; exits 1 if any case failed.
set -u
plumb=$(realpath "${1:-build/plumb}")
verbose=${2:-}
source_dir=${PLUMB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
[ -x "$plumb" ] || { echo "usage: $0 [PLUMB]: build plumb first (make)" >&2; exit 2; }
root=$(mktemp -d "${TMPDIR:-/tmp}/plumb-sweep.XXXXXX")
trap 'rm -rf "$root"' EXIT
fixtures=$root/fixtures
mkdir -p "$fixtures"
declare -A passed failed skipped
total=0 failures=0 case_number=0

have() { command -v "$1" >/dev/null 2>&1; }
has_valgrind=0; have valgrind && has_valgrind=1
has_gnuplot=0; have gnuplot && has_gnuplot=1
allowed_cpus=$(nproc)

record() {   # record RESULT ITEM CASE [WHY]
	local result=$1 item=$2 name=$3 why=${4:-}
	total=$((total + 1))
	case $result in
	PASS) passed[$item]=$(( ${passed[$item]:-0} + 1 )); [ -n "$verbose" ] && echo "PASS $item $name" ;;
	SKIP) skipped[$item]=$(( ${skipped[$item]:-0} + 1 )); echo "SKIP $item $name: $why" ;;
	FAIL) failed[$item]=$(( ${failed[$item]:-0} + 1 )); failures=$((failures + 1)); echo "FAIL $item $name: $why" ;;
	esac
}

# A fresh folder for one case: $case_dir, TMPDIR inside it, the working folder.
begin_case() {
	case_number=$((case_number + 1))
	case_dir=$root/case$case_number
	mkdir -p "$case_dir/tmp"
	export TMPDIR=$case_dir/tmp
	cd "$case_dir" || exit 2
	marker=$case_number$RANDOM
}

# What every case checks after plumb ran: prints a reason, or nothing.
leftovers() {
	local found
	found=$(find "$case_dir" /tmp -maxdepth 3 \( -name INJECTED -o -name PWNED \) 2>/dev/null | head -n 1)
	[ -n "$found" ] && { echo "injection ran: $found exists"; rm -f "$found"; return; }
	found=$(find "$case_dir" -name '*.tmp.*' ! -type p 2>/dev/null | head -n 1)
	[ -n "$found" ] && { echo "temporary output left: ${found#$case_dir/}"; return; }
	found=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'plumb*' 2>/dev/null | head -n 1)
	[ -n "$found" ] && { echo "temporary folder left: ${found#$case_dir/}"; return; }
	found=$(ls -d /dev/null?* /dev/zero?* /dev/full?* 2>/dev/null | grep -vxF "$devices_before" | head -n 1)
	[ -n "$found" ] && { echo "file created beside a device: $found"; rm -f "$found"; return; }
	[ -c /dev/null ] || { echo "/dev/null replaced"; return; }
	if pgrep -f "$marker" >/dev/null 2>&1; then
		pkill -KILL -f "$marker"
		echo "process of the case left running"
		return
	fi
}

# run_case ITEM NAME EXPECT SECONDS COMMAND...: EXPECT is a list of allowed
# exit statuses ("2", "1 2", "0"); stderr must be one line when not 0.
run_case() {
	local item=$1 name=$2 expect=$3 seconds=$4
	shift 4
	begin_case
	prepare_case 2>/dev/null
	timeout -k 5 "$seconds" "$@" > out.stdout 2> out.stderr < /dev/null
	local status=$?
	finish_case "$item" "$name" "$expect" "$status"
}
prepare_case() { :; }

finish_case() {
	local item=$1 name=$2 expect=$3 status=$4 why="" lines
	prepare_case() { :; }
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		why="no answer within the time limit (hang)"
	elif [ "$status" -ge 128 ] && ! [[ " $expect " == *" $status "* ]]; then
		why="killed by signal $((status - 128))"
	elif ! [[ " $expect " == *" $status "* ]]; then
		why="exit status $status, expected one of: $expect; stderr: $(head -c 200 out.stderr | tr '\n' ' ')"
	elif [ "$status" != 0 ] && [ "$status" -lt 128 ]; then
		lines=$(grep -c '' out.stderr)
		[ "$lines" -ge 1 ] && [ "$lines" -le 2 ] || why="$lines lines on stderr: $(head -c 200 out.stderr | tr '\n' ' ')"
		grep -qi 'sanitizer\|runtime error' out.stderr && why="sanitizer report"
	fi
	[ -z "$why" ] && why=$(leftovers)
	[ -z "$why" ] && [ -n "${extra_check:-}" ] && why=$($extra_check)
	extra_check=
	if [ -n "$why" ]; then record FAIL "$item" "$name" "$why"; else record PASS "$item" "$name"; fi
	cd "$root" && rm -rf "$case_dir"
}

# ---------------------------------------------------------------- fixtures
cp "$source_dir"/tests/data/report_vm_xeon/*.json "$fixtures/"
cp "$source_dir"/tests/data/lat_vm_xeon_run1.json "$fixtures/lat.json"
printf '0 400000\n1 400040\n0 400080\n2 400000\n' > "$fixtures/small.din"
sections=()
for section in topo lat bw loaded model program; do sections+=("$fixtures/$section.json"); done
"$plumb" report --from "${sections[@]}" -o "$fixtures/report.html" > /dev/null 2>&1
[ -s "$fixtures/report.json" ] || { echo "$0: plumb report --from could not make the fixture report.json" >&2; exit 2; }
# Files beside devices that were there before the sweep (another program's).
devices_before=$(ls -d /dev/null?* /dev/zero?* /dev/full?* 2>/dev/null)
head -c 73400320 /dev/zero | tr '\0' '7' > "$fixtures/big"
head -c 4096 /dev/urandom > "$fixtures/junk"
: > "$fixtures/empty"
mkdir -p "$fixtures/folder"
printf '\xef\xbb\xbfsize,assoc,line\n32768,8,64\n' > "$fixtures/bom.csv"

# =========================================================== 10. numbers
# Every integer and size option, each bad form: a usage error (2), at once.
# A value that is accepted by mistake would start a measurement: the time
# limit turns that into a FAIL too.
bad_counts=(" -1" "-1" "-0" "+5" "1e3" "1.5" "" "1,2" "1 2" "99999999999999999999" "abc" "0x" "5x" "$(printf '\xd9\xa1\xd9\xa2')" "0b101" "1_000")
bad_sizes=("64Kb" "64KB" "64 K" "-64K" "+64K" "K" "64Q" "99999999999999999999K" "" "0x" "64KiBB" "$(printf '\xd9\xa1')K")
count_options=(
	"bw --time-cap" "bw --min-samples"
	"c2c --lines" "c2c --samples" "c2c --round-trips" "c2c --duration" "c2c --timeout" "c2c --seed"
	"explain -r" "explain --interleave"
	"geometry --points-per-octave" "geometry --repeats" "geometry --time-cap" "geometry --seed" "geometry -C"
	"lat --points-per-octave" "lat -C" "lat --seed" "lat --repeats" "lat --max-chains" "lat --time-cap"
	"loaded --generators" "loaded --loads" "loaded --chunk" "loaded --samples" "loaded --timeout" "loaded --seed"
	"model --processors"
	"perturb -r" "perturb --size" "perturb --miss-times" "perturb --window" "perturb --windows" "perturb --limit" "perturb -C"
	"sim --cores" "sim --top" "sim --interleave" "sim --interleave-window"
	"stat -r" "stat -n"
	"validate --seed" "validate -r" "validate --max-count" "validate -C" "validate --check-trips" "validate --pairs"
)
# Options that take a real number: the forms no number has.
bad_reals=("" "abc" "1..2" "1,5" "nan" "inf" "-inf" "1e999" "0x" "5 s" "$(printf '\xd9\xa1')")
real_options=("cluster --rank-timeout" "bw --target-ci" "lat --target-ci" "geometry --target-ci" "model --service" "model --l0" "explain --ipc" "perturb --scale")
size_options=(
	"bw -s" "geometry --max-size" "lat --min-size" "lat --max-size" "lat --page-group" "lat --stride"
	"lat --line-size" "loaded --size" "loaded --generator-size" "sim --curve-max" "perturb --buffers"
	"perturb --record-bytes" "c2c --spacing"
)
# The arguments a command needs besides the option tried, so that only the
# option can be wrong.
rest_of_command() {
	case $1 in
	stat|explain) echo "-- true" ;;
	sim) echo "--curve l1d $fixtures/small.din" ;;
	cluster) echo "-o out" ;;
	perturb) echo "--workload spin" ;;
	model) echo "--from $fixtures/loaded.json" ;;
	esac
}
# try_bad_values OPTIONS_ARRAY VALUES_ARRAY: every option with every value.
try_bad_values() {
	local -n options=$1 values=$2
	local option command flag value extra
	for option in "${options[@]}"; do
		read -r command flag <<< "$option"
		read -r -a extra <<< "$(rest_of_command "$command")"
		for value in "${values[@]}"; do
			run_case 10 "$command $flag '$value'" "2" 20 "$plumb" "$command" "$flag" "$value" "${extra[@]}"
		done
	done
}
try_bad_values count_options bad_counts
try_bad_values size_options bad_sizes
try_bad_values real_options bad_reals
# Decimal unless 0x: stat -r 010 makes ten runs, not eight.
runs_are() {
	local runs
	runs=$(grep -o '"runs": *[0-9]*' out.json | head -n 1 | grep -o '[0-9]*$')
	[ "$runs" = "$expected_runs" ] || echo "$expected_runs runs asked, $runs made"
}
for pair in "010 10" "0x10 16" "00010 10" "10 10"; do
	read -r value expected_runs <<< "$pair"
	extra_check=runs_are
	run_case 10 "stat -r $value makes $expected_runs runs" "0" 60 "$plumb" stat -e task-clock -r "$value" --json -o out.json -- true
done
# A request that cannot be honoured is an error, not a clamp.
run_case 10 "loaded --generators beyond the allowed CPUs" "2" 20 "$plumb" loaded --generators $((allowed_cpus + 3))
for formats in "--csv --json" "--json --csv"; do
	for command in topo "lat --from $fixtures/lat.json" "model --from $fixtures/loaded.json" "sim $fixtures/small.din" "events --no-probe"; do
		# shellcheck disable=SC2086
		run_case 10 "$command $formats" "2" 20 "$plumb" $command $formats
	done
done
# A byte-order mark is skipped: the CSV's first row is read.
bom_read() { grep -q '192K' out.stdout || echo "the line after the byte-order mark was lost"; }
if "$plumb" sim --help 2>&1 | grep -q -- '--config'; then
	printf '\xef\xbb\xbfl1d.size = 192K\n' > "$fixtures/bom.cfg"
	extra_check=bom_read
	run_case 10 "sim -c with a byte-order mark" "0" 20 "$plumb" sim -c "$fixtures/bom.cfg" --print-config
fi

# ============================================ 6. unbounded and odd reads
readers=(
	"lat --from" "report --from" "geometry --levels-from" "instrument --summary" "model --from"
	"sim -c" "sim" "trace stats" "bw --machine" "lat --machine" "perturb --rate-trace"
	"events --verification" "bw --levels-from" "report --compare-first" "report --compare-second"
	"explain --machine" "sim --machine"
)
make_fifo_writer() {   # a FIFO fed 200 MB of zeros, then closed
	mkfifo fifo
	(head -c 200000000 /dev/zero > fifo 2>/dev/null &)
}
for reader in "${readers[@]}"; do
	read -r command flag <<< "$reader"
	for input in /dev/zero big junk empty folder fifo; do
		path=$input
		[ "$input" != /dev/zero ] && [ "$input" != fifo ] && path=$fixtures/$input
		args=()
		case "$command $flag" in
		"sim ") args=("$path") ;;
		"trace stats") args=(stats "$path") ;;
		"report --compare-first") args=(--compare "$path" "$fixtures/report.json") ;;
		"report --compare-second") args=(--compare "$fixtures/report.json" "$path") ;;
		"perturb --rate-trace") args=(--workload spin --intervals 100s --halts 0 -r 1 --rate-trace "$path") ;;
		"explain --machine") args=(--machine "$path" -- true) ;;
		"sim --machine") args=(--machine "$path" "$fixtures/small.din") ;;
		"lat --machine") args=(--machine "$path" --from "$fixtures/lat.json") ;;
		"bw --machine") args=(--machine "$path" -s 16K -t 1 -k read --time-cap 5) ;;
		"events --verification") args=(--verification "$path" --no-probe) ;;
		*) args=("$flag" "$path") ;;
		esac
		[ "$command" = trace ] && command_word=trace || command_word=$command
		if [ "$input" = fifo ]; then prepare_case() { make_fifo_writer; }; fi
		# Under a 2 GiB address-space limit: a reader without a bound fails
		# here, or takes the limit's memory, instead of failing at once.
		# Verification records are a side input: events warns (one line)
		# and goes on without them.
		expect="1 2"
		[ "$command" = events ] && expect="0 1 2"
		run_case 6 "$command $flag $input" "$expect" 60 bash -c 'ulimit -v 2097152; exec "$@"' sweep "$plumb" "$command_word" "${args[@]}"
	done
done

# ================================ 2, 3. gnuplot and HTML from a report file
# Every string cell of every section file replaced by a payload: backquotes
# and $(...) for gnuplot, tags for the page.  report --from must neither run
# them nor put them in report.html unescaped.
payloads=(
	'`touch PWNED`' '$(touch PWNED)' "'; system('touch PWNED'); '" '"; system("touch PWNED"); "'
	'<img src=x onerror=alert(1)>' '/tmp/<img src=x onerror=alert(1)>' '<script>alert(1)</script>'
	'"><svg onload=alert(1)>' "' onmouseover='alert(1)" '</title><script>alert(1)</script>'
	'\`touch PWNED\`' 'a\nset output "/tmp/PWNED"' '&lt;b&gt;' ']]><![CDATA[<script>alert(1)</script>'
)
page_is_clean() {
	[ -f out/report.html ] || return
	grep -q '<img src=x onerror\|<script>alert\|<svg onload\|onmouseover=.alert' out/report.html &&
		echo "an attacker's tag is in report.html unescaped"
}
payload_number=0
for payload in "${payloads[@]}"; do
	payload_number=$((payload_number + 1))
	for section in lat bw loaded model topo program; do
		[ -f "$fixtures/$section.json" ] || continue
		prepare_case() {
			mkdir -p evil out
			for each in topo lat bw loaded model program; do cp "$fixtures/$each.json" evil/; done
			python3 - "$fixtures/$section.json" "evil/$section.json" "$payload" <<'EOF'
import json, sys
source, target, payload = sys.argv[1:4]
def poison(value, key=None):
    if isinstance(value, dict):
        return {k: poison(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v) for v in value]
    if isinstance(value, str) and key not in ("command", "schema", "version", "columns", "unit", "units", "type"):
        return value + payload
    return value
document = json.load(open(source))
json.dump(poison(document), open(target, "w"))
EOF
		}
		item=2
		case $payload in *'<'*|*"'"*|*'&'*) item=3 ;; esac
		extra_check=page_is_clean
		run_case $item "report --from, payload $payload_number in $section.json" "0 1" 60 bash -c 'exec "$0" report --from evil/*.json -o out/report.html' "$plumb"
	done
done
# The same payloads as a folder name for validate -d and report -d (item 1).
for payload in "${payloads[@]}" "v';touch INJECTED;'" 'a"b;touch INJECTED' 'x$(touch INJECTED)' 'sp ace' '-d'; do
	name=${payload//\//_}
	run_case 1 "validate -d '$name'" "0 1" 60 "$plumb" validate --backend sim --sizes 1 --runs 1 --no-record -d "./$name" page-faults
	run_case 1 "report --from -d '$name'" "0 1" 60 "$plumb" report --from "$fixtures/report.json" -d "./$name" -o out.html
	run_case 1 "report --from -o '$name.html'" "0 1" 60 "$plumb" report --from "$fixtures/report.json" -o "./$name.html"
	prepare_case() { mkdir -p "./$name"; }
	run_case 1 "TMPDIR with '$name'" "0 1" 60 env TMPDIR="$PWD/$name" "$plumb" report --from "$fixtures/report.json" -o out.html
done

# ===================================== 4, 5. outputs: planted files, devices
writers=(
	"topo --json -o OUT" "events --no-probe --json -o OUT" "lat --from $fixtures/lat.json --json -o OUT"
	"model --from $fixtures/loaded.json --json -o OUT" "sim -p cachegrind --basic --json -o OUT $fixtures/small.din"
	"sim -p cachegrind --basic --csv -o OUT $fixtures/small.din" "lat --from $fixtures/lat.json --csv -o OUT"
	"report --from $fixtures/report.json -o OUT" "trace convert $fixtures/small.din OUT --to din" "topo --csv -o OUT"
	"report --compare $fixtures/report.json $fixtures/report.json --json -o OUT"
	"trace stats $fixtures/small.din --json -o OUT"
)
# A symlink is followed where the kernel would follow it (as a shell's
# redirection does) and stays a link; a hard link's other name, a planted
# FIFO and another user's file are never written.
outside_unchanged() {
	if [ "$plant" = symlink ]; then
		[ -L TARGET ] || echo "the symlink was replaced by a file"
		cmp -s "$root/outside" "$root/outside.copy" && echo "the symlink's target was not written"
		return
	fi
	cmp -s "$root/outside" "$root/outside.copy" || echo "a file outside the case's folder was written through the output path"
	[ "$plant" != fifo-beside ] || [ -p TARGET.tmp ] || echo "planted FIFO replaced"
	# Replaced by a file of plumb's own is right; written into is not (the
	# other user would own the output).
	[ "$plant" != sticky-other ] || [ ! -s shared/TARGET ] || [ "$(stat -c %U shared/TARGET)" != nobody ] ||
		echo "another user's file became the output"
}
for writer in "${writers[@]}"; do
	for plant in symlink hardlink fifo-beside fifo-target device-null read-only sticky-other; do
		echo "outside $RANDOM" > "$root/outside"
		cp "$root/outside" "$root/outside.copy"
		target=TARGET
		expect="0"
		case $plant in
		symlink) prepare_case() { ln -s "$root/outside" TARGET; } ;;
		hardlink) prepare_case() { ln "$root/outside" TARGET; } ;;
		fifo-beside) prepare_case() { mkfifo TARGET.tmp; for n in 1 2 3 4 5 6 7 8 9; do mkfifo "TARGET.tmp.$n"; done; } ;;
		fifo-target) prepare_case() { mkfifo TARGET; (cat TARGET > /dev/null &); }; expect="0 1" ;;
		device-null) target=/dev/null; expect="0 1" ;;
		read-only) prepare_case() { mkdir ro; chmod 555 ro; }; target=ro/TARGET; expect="0 1" ;;
		sticky-other) prepare_case() { mkdir -m 1777 shared; touch shared/TARGET; chown nobody shared/TARGET 2>/dev/null; chmod 666 shared/TARGET; }; target=shared/TARGET; expect="0 1" ;;
		esac
		extra_check=outside_unchanged
		read -r -a words <<< "${writer//OUT/$target}"
		run_case 4 "${writer//$fixtures\//}, output $plant" "$expect" 30 "$plumb" "${words[@]}"
	done
done
if [ "$has_valgrind" = 1 ]; then
	run_case 5 "trace record /dev/null" "0 1" 60 "$plumb" trace record /dev/null --to native -- true
	run_case 5 "sim --cachegrind-out /dev/null" "0 1" 60 "$plumb" sim -p cachegrind --basic --cachegrind-out /dev/null "$fixtures/small.din"
	run_case 5 "sim --callgrind-out /dev/null" "0 1" 60 "$plumb" sim -p cachegrind --basic --callgrind-out /dev/null "$fixtures/small.din"
else
	record SKIP 5 "trace record /dev/null" "valgrind is not installed"
fi
for command in "report --from $fixtures/report.json -o OUT" "topo --csv -o OUT" "sim -p cachegrind --csv -o OUT $fixtures/small.din" "lat --from $fixtures/lat.json --csv -o OUT" "bw --csv -s 16K -t 1 -k read --time-cap 10 -o OUT" "validate --backend sim --sizes 1 --runs 1 --no-record --csv -o OUT page-faults" "report --quick --sections topo -o OUT"; do
	for device in /dev/null /dev/zero /dev/full; do
		read -r -a words <<< "${command//OUT/$device}"
		run_case 5 "${command//$fixtures\//}, OUT $device" "0 1" 60 "$plumb" "${words[@]}"
	done
done

# ================================================ 7, 8. signals and limits
long_commands=(
	"stat -e task-clock -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
	"lat"
	"report --quick -o out.html"
	"validate --backend sim --no-record -d out"
)
if [ "$has_valgrind" = 1 ]; then
	long_commands+=(
		"sim -p cachegrind -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
		"trace record out.ptrace -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
		"explain -r 1 -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
		"instrument -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
	)
fi
for command in "${long_commands[@]}"; do
	for signal in INT TERM HUP QUIT USR1 USR2 XFSZ PIPE; do
		begin_case
		line=${command//MARK/$marker}
		# shellcheck disable=SC2086
		# A script's background job starts with SIGINT and SIGQUIT ignored,
		# which plumb respects: give the job the default dispositions.
		eval "env --default-signal \"\$plumb\" $line > out.stdout 2> out.stderr < /dev/null &"
		pid=$!
		sleep 2
		kill -s "$signal" "$pid" 2>/dev/null
		for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$pid" 2>/dev/null; then
			kill -KILL "$pid"; wait "$pid" 2>/dev/null
			status=124
		else
			wait "$pid"; status=$?
		fi
		number=$(kill -l "$signal")
		finish_case $(case $command in *MARK*) echo 8 ;; *) echo 7 ;; esac) "$command, SIG$signal" "$((128 + number)) 0 1" "$status"
	done
done
# A file-size limit: EFBIG is an error message, SIGXFSZ no death.
for command in "lat --from $fixtures/lat.json --json -o OUT" "report --from $fixtures/report.json -o OUT" "sim -p cachegrind --json -o OUT $fixtures/small.din" "topo --json -o OUT" "model --from $fixtures/loaded.json --json -o OUT"; do
	read -r -a words <<< "${command//OUT/out}"
	run_case 7 "${command//$fixtures\//} under ulimit -f 1" "1" 30 bash -c 'ulimit -f 1; exec "$@"' sweep "$plumb" "${words[@]}"
done

# ====================================================== 9. the environment
# libplumb reads its variables with secure_getenv: a setuid program never
# takes a file name from its caller's environment.
begin_case
found=$(grep -rn '[^_]getenv *(' "$source_dir/src" --include=*.c | grep -v '^[^:]*/src/cli/' | grep -v secure_getenv)
if [ -n "$found" ]; then
	record FAIL 9 "libplumb reads no variable with getenv" "$(echo "$found" | head -n 1)"
else
	record PASS 9 "libplumb reads no variable with getenv"
fi
cd "$root" && rm -rf "$case_dir"
if have cc && [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1 && [ -f "$source_dir/build/libplumb.so" ]; then
	begin_case
	chmod 755 "$case_dir" "$root"
	cat > region.c <<'EOF'
#include <plumb/region.h>
int main(void)
{
	PLUMB_REGION_BEGIN("sweep");
	PLUMB_REGION_END("sweep");
	return 0;
}
EOF
	if cc -DPLUMB_REGIONS -I"$source_dir/include" region.c -o region -L"$source_dir/build" -lplumb -Wl,-rpath,"$source_dir/build" 2>/dev/null; then
		chown nobody region && chmod 4755 region
		for variable in PLUMB_REGION_JSON PLUMB_VERIFICATION; do
			rm -f planted
			env "$variable=$case_dir/planted" ./region > /dev/null 2>&1
			if [ -e planted ]; then record FAIL 9 "setuid program and $variable" "wrote the file the variable named"
			else record PASS 9 "setuid program and $variable"; fi
		done
	else
		record SKIP 9 "setuid program" "no program could be linked against build/libplumb.so"
	fi
	cd "$root" && rm -rf "$case_dir"
else
	record SKIP 9 "setuid program" "needs root, a C compiler, the user nobody and build/libplumb.so"
fi

# ================================================================ 11. exec
# Valgrind does not follow an exec: every command refuses, naming it, rather
# than report the part before it as the whole program.
exec_named() { grep -q "exec'd" out.stderr || echo "the exec is not named: $(head -c 200 out.stderr)"; }
if [ "$has_valgrind" = 1 ]; then
	for command in "sim -p cachegrind --basic" "trace record out.ptrace" "explain -r 1" "instrument"; do
		for program in "sh -c 'exec true'" "sh -c 'exec sh -c true'" "env true"; do
			eval "args=($program)"
			extra_check=exec_named
			run_case 11 "$command -- $program" "1" 120 "$plumb" $command -- "${args[@]}"
		done
	done
else
	record SKIP 11 "exec" "valgrind is not installed"
fi

# ================================================================= counts
echo
printf '%-5s %6s %6s %6s\n' item pass skip fail
for item in 1 2 3 4 5 6 7 8 9 10 11; do
	printf '%-5s %6d %6d %6d\n' "$item" "${passed[$item]:-0}" "${skipped[$item]:-0}" "${failed[$item]:-0}"
done
echo "$total cases, $failures failed"
[ "$failures" = 0 ]
