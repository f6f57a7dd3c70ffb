#!/bin/sh
# Records the two real-program traces the simulator's throughput is measured
# on (docs/PERFORMANCE.md, "Simulator"): gzip (one thread, 127 M references)
# and zstd with two compression workers (169 M references, 60% and 35% in the
# two workers).  A synthetic trace replayed many times stays in the host's
# caches and repeats one access pattern; these are single files of real
# code, so the reader and the simulator see 100+ M distinct references.
#
# The input is generated (a fixed pseudo-random word list, so every machine
# compresses the same bytes); plumbgrind traces the program and writes
# lackey text into a pipe that `plumb trace convert` turns into the native
# format.  Usage: bench/record-real-traces.sh [DIR] (default /tmp).
set -eu
dir=${1:-/tmp}
mkdir -p "$dir"
plumb=${PLUMB:-build/plumb}
command -v gzip >/dev/null && command -v zstd >/dev/null || { echo "record-real-traces: needs gzip and zstd" >&2; exit 1; }

# 1.5 MB of pseudo-random lower-case words (Park and Miller's generator,
# exact in awk's doubles): compressible about as much as text, identical everywhere.
awk 'BEGIN {
	x = 12345; n = 0; letters = "etaoinshrdlucmfwypvbgkjqxz";
	while (n < 1500000) {
		x = (x * 16807) % 2147483647;
		length_of_word = 2 + x % 8;
		word = "";
		for (i = 0; i < length_of_word; i++) {
			x = (x * 16807) % 2147483647;
			r = x % 100;   # skewed towards the first letters, as in text
			word = word substr(letters, 1 + int(r * r / 385), 1);
		}
		printf "%s%s", word, (x % 11 == 0) ? "\n" : " ";
		n += length_of_word + 1;
	}
}' > "$dir/plumb-words.txt"
head -c 400000 "$dir/plumb-words.txt" > "$dir/plumb-words-small.txt"

record() {   # OUT COMMAND...
	out=$1; shift
	fifo="$dir/plumb-trace.fifo.$$"
	rm -f "$fifo"; mkfifo "$fifo"
	"$plumb" trace convert "$fifo" "$out" --from lackey >/dev/null &
	converter=$!
	"$plumb" instrument --trace "$fifo" -- "$@" >/dev/null 2>&1
	wait "$converter"
	rm -f "$fifo"
	"$plumb" trace stats "$out" | sed -n '/References by kind/,/total/p'
}

record "$dir/gzip.ptrace" gzip -6 -c "$dir/plumb-words-small.txt"
record "$dir/zstd2.ptrace" zstd -T2 -3 -B512K --no-progress -c "$dir/plumb-words.txt"
