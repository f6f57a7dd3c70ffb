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
# SWEEP_ONLY="lists more-sinks" runs only those parts (names after "want"
# below); the default is every part.
want() { [ -z "${SWEEP_ONLY:-}" ] || [[ " $SWEEP_ONLY " == *" $1 "* ]]; }
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

# Any process still working in the case's folder (plumb's own children, a
# section, valgrind, the program): the case's helpers (a FIFO's reader or
# writer) are ended quietly; anything else fails the case, after a moment
# to finish dying.
processes_left() {
	local attempt link pid comm found
	for attempt in 1 2 3 4 5 6; do
		found=
		for link in $(find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$case_dir" -o -lname "$case_dir/*" \) 2>/dev/null); do
			pid=${link#/proc/}; pid=${pid%/cwd}
			comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
			# bash: a FIFO writer's subshell still blocked opening the FIFO
			# that plumb refused to read (its head not started yet)
			case $comm in cat|yes|head|bash) kill -KILL "$pid" 2>/dev/null; continue ;; esac
			found="$found $comm"
		done
		[ -z "$found" ] && return
		sleep 0.5
	done
	for link in $(find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$case_dir" -o -lname "$case_dir/*" \) 2>/dev/null); do
		pid=${link#/proc/}; kill -KILL "${pid%/cwd}" 2>/dev/null
	done
	echo "process of the case left running:$found"
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
	cd "$root" || exit 2
	[ -z "$why" ] && why=$(processes_left)
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
if want numbers; then
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

fi # numbers

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
if want readers; then
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

fi # readers

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
if want payloads; then
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

fi # payloads

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
# plant_output PLANT: what is at the output path before the case runs (a
# link to a file outside the case's folder, FIFOs, a device, a read-only
# folder, another user's file, a folder, links that lead nowhere or to
# /dev/null): sets target (the path given to plumb), expect (the exit
# statuses allowed) and prepare_case.
plant_output() {
	target=TARGET
	expect="0"
	case $1 in
	symlink) prepare_case() { ln -s "$root/outside" TARGET; } ;;
	hardlink) prepare_case() { ln "$root/outside" TARGET; } ;;
	fifo-beside) prepare_case() { mkfifo TARGET.tmp; for n in 1 2 3 4 5 6 7 8 9; do mkfifo "TARGET.tmp.$n"; done; } ;;
	fifo-target) prepare_case() { mkfifo TARGET; (cat TARGET > /dev/null &); }; expect="0 1" ;;
	device-null) target=/dev/null; expect="0 1" ;;
	read-only) prepare_case() { mkdir ro; chmod 555 ro; }; target=ro/TARGET; expect="0 1" ;;
	sticky-other) prepare_case() { mkdir -m 1777 shared; touch shared/TARGET; chown nobody shared/TARGET 2>/dev/null; chmod 666 shared/TARGET; }; target=shared/TARGET; expect="0 1" ;;
	folder) prepare_case() { mkdir TARGET; }; expect="1 2" ;;
	dangling) prepare_case() { ln -s "$root/outside-missing" TARGET; } ;;
	loop) prepare_case() { ln -s TARGET TARGET; }; expect="1 2" ;;
	symlink-null) prepare_case() { ln -s /dev/null TARGET; }; expect="0 1" ;;
	*) echo "$0: unknown plant $1" >&2; exit 2 ;;
	esac
}
if want outputs; then
for writer in "${writers[@]}"; do
	for plant in symlink hardlink fifo-beside fifo-target device-null read-only sticky-other; do
		echo "outside $RANDOM" > "$root/outside"
		cp "$root/outside" "$root/outside.copy"
		plant_output "$plant"
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

fi # outputs

# ================================================ 7, 8. signals and limits
if want signals; then
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

fi # signals

# ====================================================== 9. the environment
if want environment; then
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

fi # environment

# ================================================================ 11. exec
# Valgrind does not follow an exec: every command refuses, naming it, rather
# than report the part before it as the whole program.
exec_named() { grep -q "exec'd" out.stderr || echo "the exec is not named: $(head -c 200 out.stderr)"; }
if want exec; then
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

fi # exec

# ====================================================== the second round
# What the first round did not try: list and field options, hostile JSON
# contents and standard input, HTML, CSV and the terminal reached from
# compare, explain and a program's own region names, more writers and
# targets, more commands signalled or limited, writing into a closed pipe,
# the lackey fallback, and libplumb's variables with hostile values.

# A program that enters one region per argument, named by it: the names are
# the attacker's (a program's region names are its author's).
region_program=
if have cc && [ -f "$source_dir/build/libplumb.so" ]; then
	cat > "$fixtures/regions.c" <<'EOF'
#include <stdlib.h>
#include <plumb/region.h>
static volatile long sink;
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		plumb_region_begin(argv[i]);
		for (long k = 0; k < 100000; k++)
			sink += k;
		plumb_region_end(argv[i]);
	}
	return 0;
}
EOF
	cc -I"$source_dir/include" "$fixtures/regions.c" -o "$fixtures/regions" -L"$source_dir/build" -lplumb \
		-Wl,-rpath,"$source_dir/build" 2>/dev/null && region_program=$fixtures/regions
	cc "$source_dir/tests/data/raise_handled.c" -o "$fixtures/raise_handled" 2>/dev/null
fi
# A trace of 20,000 references: outputs of a few hundred KiB.
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "%d %x\n", i % 3, 4194304 + (i * 64) % 1048576 }' > "$fixtures/mid.din"
# Hostile JSON contents for the JSON readers.
python3 - "$fixtures" <<'EOF'
import json, re, sys
folder = sys.argv[1]
report = open(folder + "/report.json").read()
lat = json.load(open(folder + "/lat.json"))
def write(name, text):
    open(folder + "/" + name, "w").write(text)
write("deep.json", "[" * 200000 + "]" * 200000)
write("deep-object.json", '{"a":' * 100000 + "1" + "}" * 100000)
write("top-array.json", "[1, 2, 3]")
write("top-string.json", '"plumb"')
write("top-null.json", "null")
write("truncated.json", report[: len(report) // 2])
write("nan.json", report.replace('"schema_version": 1', '"schema_version": NaN', 1))
write("huge-number.json", json.dumps(dict(lat, schema_version=10 ** 400)))
open(folder + "/invalid-utf8.json", "wb").write(report.encode()[:100] + b"\xff\xfe\xc0\x80" + report.encode()[100:])
write("nul-in-string.json", report.replace('"plumb_version": "', '"plumb_version": "\\u0000<script>alert(1)</script>', 1))
write("duplicate-keys.json", report.replace("{", '{"schema": "plumb-report", ', 1))
document = json.loads(report)
for key in ("sections", "reports"):
    if isinstance(document.get(key), list) and document[key]:
        many = dict(document)
        many[key] = document[key] * 400
        write("many-sections.json", json.dumps(many))
        break
else:
    write("many-sections.json", report)
write("negative.json", re.sub(r'("[a-z_]*(size|bytes|ns)[a-z_]*": )([0-9])', r'\1-\3', json.dumps(lat)))
EOF
hostile_json=(deep deep-object top-array top-string top-null truncated nan huge-number invalid-utf8 nul-in-string duplicate-keys many-sections negative)

# ---------------------------------------------- 10. lists and fields
if want lists; then
# Each list option, built from a good element G: an empty item, a sign, a
# unit no one spells, a bad item after a good one, and a value of more than
# 1 KiB (a parser that copies into a fixed buffer and cuts it would run
# with what was left: the long value ends in a bad item).
list_options=(
	"bw -s 16K size -t 1 -k read --time-cap 10" "bw -t 1 int -s 16K -k read --time-cap 10"
	"bw -C 0 cpu -s 16K -t 1 -k read --time-cap 10" "bw -k read name -s 16K -t 1 --time-cap 10"
	"c2c -C 0 cpu --only pairs --samples 1 --round-trips 10 --lines 64"
	"c2c --only pairs name --samples 1 --round-trips 10 --lines 64"
	"loaded -C 0 cpu --samples 1 --loads 1000 --delays 0 --size 1M --generator-size 1M"
	"loaded --delays 16 int --samples 1 --loads 1000 --size 1M --generator-size 1M"
	"model --at 100 real --from $fixtures/loaded.json"
	"validate --sizes 1 int --backend sim --runs 1 --no-record page-faults"
	"validate --backend sim name --sizes 1 --runs 1 --no-record page-faults"
	"perturb --buffers 64K size --simulate $fixtures/small.din"
	"perturb --intervals 1/8 real --workload spin --size 1000 -r 2 --halts 0"
	"perturb --halts 0 real --workload spin --size 1000 -r 2 --intervals 1/8"
	"report --sections topo name -o out.html" "cluster --sections topo name -o out"
	"stat -e task-clock name -- true" "explain -e task-clock name -r 1 --no-valgrind -- true"
	"sim --curve l1d name $fixtures/small.din"
)
long_zeros=$(printf '0%.0s' $(seq 1 1100))
long_names() { local g=$1 list="" i; for i in $(seq 1 150); do list+="$g,"; done; echo "${list}x!"; }
for entry in "${list_options[@]}"; do
	read -r command flag good kind rest <<< "$entry"
	read -r -a extra <<< "$rest"
	forms=("$good,,$good" ",$good" "$good," "$good,x!")
	case $kind in
	size) forms+=("$good,-1K" "$good,+1K" "$good,64Kb" "${long_zeros}${good},x!") ;;
	int|cpu) forms+=("$good,-1" "$good,+1" "$good,1e3" "$good, -1" "${long_zeros}${good},x!") ;;
	real) forms+=("$good,abc" "$good,nan" "$good,inf" "${long_zeros}${good},x!") ;;
	name) forms+=("$(long_names "$good")") ;;
	esac
	for value in "${forms[@]}"; do
		shown=$value
		[ ${#shown} -gt 40 ] && shown="${shown:0:12}...(${#value} characters)"
		# An event no one knows is "unsupported" in the table stat and
		# explain write (as perf stat's <not supported>), not a usage error.
		[ "$flag" = -e ] && [[ $value == *x!* ]] && continue
		run_case 10 "$command $flag '$shown'" "2" 30 "$plumb" "$command" "$flag" "$value" "${extra[@]}"
	done
done
# Fields in a fixed order: an empty field must not shift the others.
for flag in --l1d --l1i --l2 --l3; do
	for value in "32K,,8,64" "32K,8,,64" ",32K,8,64" "32K,8,64," "32K,8" "32K,8,64,1" "32Kb,8,64" "32K,+8,64" "32K,8,-64" "32K,8,64x" ",," ""; do
		run_case 10 "sim $flag '$value'" "2" 20 "$plumb" sim "$flag" "$value" "$fixtures/small.din"
	done
done
for value in "1,,2,3" "1,2,,3" ",1,2,3" "1,2,3," "1,2" "1,2,3,4" "1,+2,3" "1,2,-3" "1,2,3x" ",,"; do
	run_case 10 "perturb --footprint '$value'" "2" 20 "$plumb" perturb --workload spin --size 1000 -r 2 --intervals 1/8 --halts 0 --footprint "$value"
done
for value in "0,,1" ",0,1" "0,1," "0" "0,1,2" "0,+1" "0,-1" "+0,1" "0, 1"; do
	run_case 10 "c2c --pair '$value'" "2" 20 "$plumb" c2c --pair "$value" --only pairs --samples 1 --round-trips 10 --lines 64
done
# A setting's value, on the command line and in a configuration file.
for setting in "l1d.size=64Kb" "l1d.size=-64K" "l1d.size=+64K" "l1d.assoc=+8" "l1d.assoc=-8" "l1d.assoc=8x" "l1d.assoc=1e3" \
	"l1d.line=" "l1d.line=99999999999999999999" "cores=-1" "cores=+2" "cores=0x" "l1d.size" "=64K" "nosuch.key=1" "l1d.size=64K junk" \
	"l1d.assoc= -8" "l1d.size=$(printf '\xd9\xa1')K"; do
	run_case 10 "sim --set '$setting'" "2" 20 "$plumb" sim --set "$setting" "$fixtures/small.din"
	prepare_case() { printf '%s\n' "${setting/=/ = }" > bad.cfg; }
	run_case 10 "sim -c with '$setting'" "1 2" 20 "$plumb" sim -c bad.cfg "$fixtures/small.din"
done
# The trace command's numbers.
for value in "${bad_counts[@]}"; do
	run_case 10 "trace stats --line-size '$value'" "2" 20 "$plumb" trace stats "$fixtures/small.din" --line-size "$value"
	run_case 10 "trace stats --page-size '$value'" "2" 20 "$plumb" trace stats "$fixtures/small.din" --page-size "$value"
	[ "$has_valgrind" = 1 ] && run_case 10 "trace record --buffer '$value'" "2" 20 "$plumb" trace record out.ptrace --buffer "$value" -- true
done
for value in "5-3" "-1-5" "1-" "-" "a-b" "0x10-0x5" "1-2-3" "+1-5" "1--5" "" "99999999999999999999-1"; do
	run_case 10 "trace filter --drop-range '$value'" "2" 20 "$plumb" trace filter "$fixtures/small.din" out.din --drop-range "$value"
done
for value in "${bad_reals[@]}" "-1" "0"; do
	[ "$has_valgrind" = 1 ] && run_case 10 "trace record --drain-rate '$value'" "2" 20 "$plumb" trace record out.ptrace --buffer 1000 --drain-rate "$value" -- true
	run_case 10 "model --line-size '$value'" "2" 20 "$plumb" model --from "$fixtures/loaded.json" --line-size "$value"
done
fi # lists

# ------------------------------------ 6. more readers, standard input, JSON
if want more-readers; then
for reader in "trace convert" "trace filter" "perturb --simulate" "explain --on" "perturb --machine"; do
	for input in /dev/zero big junk empty folder fifo; do
		path=$input
		[ "$input" != /dev/zero ] && [ "$input" != fifo ] && path=$fixtures/$input
		case $reader in
		"trace convert") args=(trace convert "$path" out.din --to din) ;;
		"trace filter") args=(trace filter "$path" out.din --to din --drop-collector) ;;
		"perturb --simulate") args=(perturb --simulate "$path" --buffers 64K) ;;
		"explain --on") args=(explain --on "$path" -r 1 --no-valgrind -- true) ;;
		"perturb --machine") args=(perturb --simulate "$fixtures/small.din" --buffers 64K --machine "$path") ;;
		esac
		if [ "$input" = fifo ]; then prepare_case() { make_fifo_writer; }; fi
		run_case 6 "$reader $input" "1 2" 60 bash -c 'ulimit -v 2097152; exec "$@"' sweep "$plumb" "${args[@]}"
	done
done
# Standard input ('-'), which has no size to look at first.
for reader in "model --from -" "bw --levels-from -" "geometry --levels-from -" "sim -" "trace stats -" "lat --from -" "trace convert - out.din"; do
	for input in /dev/zero big junk empty; do
		path=$input
		[ "$input" != /dev/zero ] && path=$fixtures/$input
		read -r -a words <<< "$reader"
		run_case 6 "$reader < $input" "1 2" 60 bash -c 'ulimit -v 2097152; exec "$@" < "$0"' "$path" "$plumb" "${words[@]}"
	done
done
# JSON that parses oddly or not at all: nesting without end, the wrong
# type at the top, a cut-off file, NaN, a number beyond any type, invalid
# UTF-8, a NUL inside a string, duplicate keys, hundreds of sections,
# negative sizes.  Taken or refused, never a crash or a hang.
for json in "${hostile_json[@]}"; do
	for reader in "report --from" "lat --from" "model --from" "geometry --levels-from" "explain --machine" "sim --machine" "report --compare" "bw --levels-from" "lat --machine"; do
		case $reader in
		"report --from") args=(report --from "$fixtures/$json.json" -o out/report.html) ;;
		"report --compare") args=(report --compare "$fixtures/$json.json" "$fixtures/report.json" --html -o out/report.html) ;;
		"explain --machine") args=(explain --machine "$fixtures/$json.json" -r 1 -- true) ;;
		"sim --machine") args=(sim --machine "$fixtures/$json.json" "$fixtures/small.din") ;;
		"lat --machine") args=(lat --machine "$fixtures/$json.json" --from "$fixtures/lat.json") ;;
		"bw --levels-from") args=(bw --levels-from "$fixtures/$json.json" -s 16K -t 1 -k read --time-cap 10) ;;
		*) args=($reader "$fixtures/$json.json") ;;
		esac
		prepare_case() { mkdir out; }
		extra_check=page_is_clean
		run_case 6 "$reader $json.json" "0 1 2" 60 bash -c 'ulimit -v 2097152; exec "$@"' sweep "$plumb" "${args[@]}"
	done
done
fi # more-readers

# --------------------------------- 2, 3. more sinks: compare, explain, CSV
if want more-sinks; then
no_escape_sequence() {
	grep -q $'\x1b\|\xc2\x9b' out.stdout out.stderr 2>/dev/null && echo "an escape sequence reached the terminal"
}
csv_is_clean() {
	local file
	for file in out.csv out-*.csv; do
		[ -f "$file" ] || continue
		grep -qE '(^|,)"?[=+@-]HYPERLINK' "$file" && { echo "$file has a formula a spreadsheet would compute"; return; }
	done
}
sinks_are_clean() {
	local why
	why=$(page_is_clean); [ -n "$why" ] && { echo "$why"; return; }
	why=$(csv_is_clean); [ -n "$why" ] && { echo "$why"; return; }
	no_escape_sequence
}
escape_payload=$'\x1b]0;owned\x07\x1b[2J\xc2\x9b31m'
formula_payload='=HYPERLINK("http://x","y")'
poison_report() {   # poison_report SOURCE TARGET PAYLOAD: every string cell
	python3 - "$@" <<'EOF'
import json, sys
source, target, payload = sys.argv[1:4]
def poison(value, key=None):
    if isinstance(value, dict):
        return {k: poison(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v) for v in value]
    if isinstance(value, str) and key not in ("command", "schema", "version", "columns", "unit", "units", "type"):
        return payload + value
    return value
json.dump(poison(json.load(open(source))), open(target, "w"))
EOF
}
payload_number=0
for payload in "${payloads[@]}" "$escape_payload" "$formula_payload"; do
	payload_number=$((payload_number + 1))
	item=2
	case $payload in *'<'*|*"'"*|*'&'*|*$'\x1b'*|*=*) item=3 ;; esac
	for side in first second; do
		for format in --html --csv ""; do
			prepare_case() {
				mkdir out
				poison_report "$fixtures/report.json" evil.json "$payload"
			}
			if [ "$side" = first ]; then pair=(evil.json "$fixtures/report.json"); else pair=("$fixtures/report.json" evil.json); fi
			output=out/report.html
			[ "$format" = --csv ] && output=out.csv
			[ -z "$format" ] && output=out.txt
			extra_check=sinks_are_clean
			run_case $item "report --compare $format, payload $payload_number in the $side file" "0 1" 60 \
				"$plumb" report --compare "${pair[@]}" $format -o "$output"
		done
	done
	# The text a person reads: report --from and lat --from to the terminal.
	prepare_case() { poison_report "$fixtures/lat.json" evil.json "$payload"; }
	extra_check=sinks_are_clean
	run_case $item "lat --from, payload $payload_number, to the terminal" "0 1" 60 "$plumb" lat --from evil.json
	prepare_case() { poison_report "$fixtures/loaded.json" evil.json "$payload"; }
	extra_check=sinks_are_clean
	run_case $item "model --from --csv, payload $payload_number" "0 1" 60 "$plumb" model --from evil.json --csv -o out.csv
	# A program whose path holds the payload (under /tmp/, which pages shorten).
	name=${payload//\//_}
	prepare_case() { mkdir out; cp /bin/true "./$name"; }
	extra_check=sinks_are_clean
	run_case $item "explain --html on a program named with payload $payload_number" "0 1" 60 \
		"$plumb" explain -r 1 --no-valgrind --html out/report.html --csv -o out.csv -- "$case_dir/$name"
	# A program whose region names are the payload.
	if [ -n "$region_program" ] && [ ${#payload} -lt 64 ]; then
		for format in "--html out/report.html --csv -o out.csv" ""; do
			prepare_case() { mkdir out; }
			extra_check=sinks_are_clean
			# shellcheck disable=SC2086
			run_case $item "explain ${format%% *} on regions named with payload $payload_number" "0 1" 60 \
				"$plumb" explain -r 1 --no-valgrind $format -- "$region_program" "$payload" plain
		done
		# Under Valgrind (seconds a case): a gnuplot, an HTML, a terminal and
		# a spreadsheet payload.
		if [ "$has_valgrind" = 1 ] && [[ " 1 5 15 16 " == *" $payload_number "* ]]; then
			for command in "sim -p cachegrind --basic" "instrument" "explain -r 1 --no-simulate"; do
				extra_check=sinks_are_clean
				# shellcheck disable=SC2086
				run_case $item "$command on regions named with payload $payload_number" "0 1" 120 \
					"$plumb" $command -- "$region_program" "$payload" plain
			done
		fi
	fi
done
# cluster's folder and page.
for payload in "v';touch INJECTED;'" 'a"b;touch INJECTED' 'x$(touch INJECTED)' '`touch INJECTED`' 'sp ace' '<img src=x onerror=alert(1)>'; do
	name=${payload//\//_}
	extra_check=
	run_case 1 "cluster -o '$name'" "0 1" 60 "$plumb" cluster -o "./$name" --sections topo
done
# report --program is split as a shell would quote, and never given to one.
for line in 'true; touch INJECTED' 'true && touch INJECTED' 'true | touch INJECTED' 'touch INJECTED &' '$(touch INJECTED)' \
	'`touch INJECTED`' 'true > INJECTED' 'true < /etc/passwd' "'unterminated" 'true\' '~/x' 'true *'; do
	run_case 1 "report --program '$line'" "2" 20 "$plumb" report --sections topo --program "$line" -o out.html
done
fi # more-sinks

# -------------------------------------- 4, 5. more writers, more targets
if want more-outputs; then
writers2=(
	"stat -e task-clock -o OUT -- true" "trace filter $fixtures/small.din OUT --to din --drop-collector"
	"explain -r 1 --no-valgrind -o OUT -- true" "explain -r 1 --no-valgrind --html OUT -- true"
	"perturb --workload spin --size 1000 -r 2 --intervals 1/8 --halts 0 -o OUT"
	"c2c --only pairs --samples 1 --round-trips 10 --lines 64 -o OUT"
	"trace convert $fixtures/small.din OUT --to lackey"
)
if [ "$has_valgrind" = 1 ]; then
	writers2+=(
		"trace record OUT --to native -- true" "instrument --trace OUT -- true" "instrument -o OUT -- true"
		"sim -p cachegrind --basic --cachegrind-out OUT $fixtures/small.din"
		"sim -p cachegrind --basic --callgrind-out OUT $fixtures/small.din"
	)
fi
for writer in "${writers2[@]}" "${writers[@]}"; do
	for plant in symlink hardlink fifo-beside fifo-target device-null read-only sticky-other folder dangling loop symlink-null; do
		# The first round tried its writers on the first seven.
		case " ${writers[*]} " in *" $writer "*) case $plant in folder|dangling|loop|symlink-null) ;; *) continue ;; esac ;; esac
		echo "outside $RANDOM" > "$root/outside"
		cp "$root/outside" "$root/outside.copy"
		rm -f "$root/outside-missing"
		plant_output "$plant"
		extra_check=outside_unchanged
		read -r -a words <<< "${writer//OUT/$target}"
		run_case 4 "${writer//$fixtures\//}, output $plant" "$expect" 60 "$plumb" "${words[@]}"
	done
done
# A folder argument that is not a folder: said at once, not after the run.
for command in "report --sections topo -o out.html -d OUT" "validate --backend sim --sizes 1 --runs 1 --no-record -d OUT page-faults" "cluster --sections topo -o OUT"; do
	for plant in file fifo /dev/null /dev/full symlink-to-file; do
		target=OUT
		case $plant in
		file) prepare_case() { echo keep > OUT; } ;;
		fifo) prepare_case() { mkfifo OUT; } ;;
		symlink-to-file) prepare_case() { echo keep > file; ln -s file OUT; } ;;
		*) target=$plant ;;
		esac
		folder_untouched() {
			case $plant in file) [ "$(cat OUT 2>/dev/null)" = keep ] || echo "the file given as a folder was written" ;; esac
			case $plant in symlink-to-file) [ "$(cat file 2>/dev/null)" = keep ] || echo "the file given as a folder was written" ;; esac
			[ -f out.html ] && echo "the report was written though its folder for sections was refused"
		}
		extra_check=folder_untouched
		read -r -a words <<< "${command//OUT/$target}"
		run_case 5 "${command%% -*} -d/-o $plant" "1 2" 30 "$plumb" "${words[@]}"
	done
done
# Secondary outputs beside devices, for the writers the first round left out.
for command in "explain -r 1 --no-valgrind --csv -o OUT -- true" "explain -r 1 --no-valgrind --html OUT -- true" \
	"stat --csv -o OUT -- true" "perturb --workload spin --size 1000 -r 2 --intervals 1/8 --halts 0 --csv -o OUT" \
	"c2c --only pairs --samples 1 --round-trips 10 --lines 64 --csv -o OUT" "trace convert $fixtures/mid.din OUT --to din" \
	"loaded --samples 1 --loads 1000 --delays 0 --size 1M --generator-size 1M --csv -o OUT" "events --no-probe --csv -o OUT"; do
	for device in /dev/null /dev/full; do
		read -r -a words <<< "${command//OUT/$device}"
		run_case 5 "${command//$fixtures\//}, OUT $device" "0 1" 60 "$plumb" "${words[@]}"
	done
done
if [ "$has_valgrind" = 1 ]; then
	for command in "instrument --csv -o OUT -- true" "instrument --trace OUT -- true" "trace record OUT --to native -- true" "sim -p cachegrind --basic --cachegrind-out OUT -- true"; do
		for device in /dev/null /dev/full; do
			read -r -a words <<< "${command//OUT/$device}"
			run_case 5 "$command, OUT $device" "0 1" 60 "$plumb" "${words[@]}"
		done
	done
fi
fi # more-outputs

# ------------------------------ 7, 8. more commands signalled or limited
if want more-signals; then
signal_case() {   # signal_case ITEM SIGNAL PREPARE COMMAND-LINE
	local item=$1 signal=$2 setup=$3 line=$4
	begin_case
	line=${line//MARK/$marker}
	eval "$setup" 2>/dev/null
	eval "env --default-signal $line > out.stdout 2> out.stderr < /dev/null &"
	pid=$!
	sleep 1.5
	kill -s "$signal" "$pid" 2>/dev/null
	for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"; wait "$pid" 2>/dev/null
		status=124
	else
		wait "$pid"; status=$?
	fi
	finish_case "$item" "${line//$marker/MARK}, SIG$signal" "$((128 + $(kill -l "$signal"))) 0 1" "$status"
}
endless_trace='mkfifo in.din; (yes "0 400000" > in.din &)'
more_long=(
	"7||\$plumb sim -p cachegrind --basic in.din"
	"7||\$plumb trace convert in.din out.ptrace --to native"
	"7||\$plumb trace stats in.din --json -o out.json"
	"7||\$plumb geometry --time-cap 100 -o out.txt"
	"7||\$plumb bw -k read -t 1 --json -o out.json"
	"7||\$plumb loaded --json -o out.json"
	"7||\$plumb c2c --json -o out.json"
	"7||\$plumb perturb --workload spin -r 5 --intervals 1/8,1/4 --halts 0,1/2 --json -o out.json"
	"7||\$plumb cluster -o out --sections lat"
	"8||\$plumb explain -r 3 --no-valgrind -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
	"8||\$plumb perturb -r 2 --intervals 1/8 --halts 0 -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
	"8||\$plumb report --sections topo -o out.html --program \"sh -c 'sleep 30.MARK & sleep 31.MARK'\""
)
if [ "$has_valgrind" = 1 ]; then
	more_long+=(
		"8||PLUMB_TRACE_LACKEY=1 \$plumb trace record out.lackey -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
		"8||PLUMB_TRACE_LACKEY=1 \$plumb sim -p cachegrind -- sh -c 'sleep 30.MARK & sleep 31.MARK'"
	)
fi
for entry in "${more_long[@]}"; do
	item=${entry%%||*}
	line=${entry#*||}
	setup=:
	case $line in *in.din*) setup=$endless_trace ;; esac
	for signal in INT TERM QUIT USR1 XFSZ PIPE; do
		signal_case "$item" "$signal" "$setup" "$line"
	done
done
# File-size limits on the writers the first round left out: EFBIG is an
# error message, not a death, and no partial file is left.
for command in "stat -e task-clock --per-run -r 3 --json -o OUT -- true" "explain -r 1 --no-valgrind --html OUT -- true" \
	"trace convert $fixtures/mid.din OUT --to lackey" "trace filter $fixtures/mid.din OUT --to din --drop-collector" \
	"events --no-probe --json -o OUT" "report --sections topo -o OUT" \
	"perturb --workload spin --size 1000 -r 2 --intervals 1/8 --halts 0 --json -o OUT"; do
	read -r -a words <<< "${command//OUT/out.file}"
	run_case 7 "${command//$fixtures\//} under ulimit -f 1" "1" 60 bash -c 'ulimit -f 1; exec "$@"' sweep "$plumb" "${words[@]}"
done
for command in "validate --backend sim --sizes 1,10 --runs 1 --no-record -d out page-faults" "cluster --sections topo -o out"; do
	read -r -a words <<< "$command"
	run_case 7 "$command under ulimit -f 1" "1" 60 bash -c 'ulimit -f 1; exec "$@"' sweep "$plumb" "${words[@]}"
done
if [ "$has_valgrind" = 1 ]; then
	for command in "trace record OUT --to native -- true" "instrument --trace OUT -- true" "sim -p cachegrind --basic --cachegrind-out OUT -- true"; do
		read -r -a words <<< "${command//OUT/out.file}"
		run_case 7 "$command under ulimit -f 1" "1" 120 bash -c 'ulimit -f 1; exec "$@"' sweep "$plumb" "${words[@]}"
	done
fi
# A closed pipe on standard output: a quiet end (SIGPIPE, or exit 0 or 1
# with one line), nothing left behind.
for command in "trace convert $fixtures/mid.din - --to lackey" "events --no-probe" "sim --print-config" "sim -p cachegrind $fixtures/mid.din" \
	"report --from $fixtures/report.json -o out.html" "lat --from $fixtures/lat.json" "trace stats $fixtures/mid.din" "topo --json"; do
	read -r -a words <<< "$command"
	run_case 7 "${command//$fixtures\//} | head -c 1" "0 1 141" 60 bash -c '"$@" | head -c 1 > /dev/null; exit "${PIPESTATUS[0]}"' sweep "$plumb" "${words[@]}"
done
fi # more-signals

# ------------------------------------------ 9. libplumb's variables, hostile
if want more-environment; then
begin_case
found=$(grep -rn '[^_]getenv *(' "$source_dir/preload" "$source_dir/src" --include=*.c | grep -v '^[^:]*/src/cli/' | grep -v secure_getenv)
if [ -n "$found" ]; then record FAIL 9 "the preloaded libraries read no variable with getenv" "$(echo "$found" | head -n 1)"
else record PASS 9 "the preloaded libraries read no variable with getenv"; fi
cd "$root" && rm -rf "$case_dir"
# A program's markers never fail loudly: whatever the variables say, the
# program runs to its end (exit 0), with at most a line of its own.
if [ -n "$region_program" ]; then
	long_list=$(printf 'task-clock,%.0s' $(seq 1 300))
	for setting in "PLUMB_EVENTS=" "PLUMB_EVENTS=,," "PLUMB_EVENTS=nosuch" "PLUMB_EVENTS=$long_list" "PLUMB_EVENTS=cycles:u:k:p:x" \
		"PLUMB_BACKEND=nosuch" "PLUMB_BACKEND=" "PLUMB_REGION_JSON=" "PLUMB_REGION_JSON=/dev/full" "PLUMB_REGION_JSON=." \
		"PLUMB_REGION_JSON=nodir/x.json" "PLUMB_REGION_JSON=/proc/version" "PLUMB_REGION_QUIET=2" "PLUMB_VERIFICATION=/dev/zero" \
		"PLUMB_EVENTS=page-faults PLUMB_REGION_JSON=fifo"; do
		case $setting in *=fifo) prepare_case() { mkfifo fifo; (cat fifo > /dev/null &); } ;; esac
		# shellcheck disable=SC2086
		run_case 9 "a program with markers, $setting" "0" 30 env $setting "$region_program" one two
	done
fi
fi # more-environment

# ---------------------------------------- 11. the lackey fallback, signals
if want more-exec && [ "$has_valgrind" = 1 ]; then
for command in "sim -p cachegrind --basic" "trace record out.lackey" "explain -r 1"; do
	for program in "sh -c 'exec true'" "env true" "sh -c 'kill -USR1 \$\$'"; do
		eval "args=($program)"
		extra_check=
		expect=1
		case $program in *exec*|env*) extra_check=exec_named ;; esac
		# explain's exact counts and simulation need plumbgrind: set aside,
		# explain runs no Valgrind and only measures, which follows an exec
		# (docs/explain.md), as --no-valgrind does below
		case $command:$program in explain*:*exec*|explain*:env*) extra_check=; expect=0 ;; esac
		run_case 11 "lackey: $command -- $program" "$expect" 120 env PLUMB_TRACE_LACKEY=1 "$plumb" $command -- "${args[@]}"
	done
	if [ -x "$fixtures/raise_handled" ]; then
		run_case 11 "lackey: $command -- a program that handles a signal" "0" 120 env PLUMB_TRACE_LACKEY=1 "$plumb" $command -- "$fixtures/raise_handled"
		run_case 11 "$command -- a program that handles a signal" "0" 120 "$plumb" $command -- "$fixtures/raise_handled"
	fi
done
[ -x "$fixtures/raise_handled" ] && run_case 11 "instrument -- a program that handles a signal" "0" 120 "$plumb" instrument -- "$fixtures/raise_handled"
# Counting alone follows an exec, as perf does: nothing to refuse.
for program in "sh -c 'exec true'" "env true"; do
	eval "args=($program)"
	run_case 11 "explain --no-valgrind -- $program" "0" 60 "$plumb" explain -r 1 --no-valgrind -- "${args[@]}"
	run_case 11 "stat -- $program" "0" 60 "$plumb" stat -e task-clock -- "${args[@]}"
done
fi # more-exec

# ================================================================= counts
echo
printf '%-5s %6s %6s %6s\n' item pass skip fail
for item in 1 2 3 4 5 6 7 8 9 10 11; do
	printf '%-5s %6d %6d %6d\n' "$item" "${passed[$item]:-0}" "${skipped[$item]:-0}" "${failed[$item]:-0}"
done
echo "$total cases, $failures failed"
[ "$failures" = 0 ]
