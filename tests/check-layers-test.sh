#!/bin/sh
# Proves that scripts/check-layers.sh catches what it should: it plants
# small objects (a file circle, a folder call the table forbids, a folder
# the table lacks, a table that lets folders call in a circle) and expects
# a failure that names each; a clean layout and an accepted circle pass.
#   sh tests/check-layers-test.sh [OBJECT...]
# With the library's objects as arguments it also plants one object among
# them (src/core calling src/sim) and expects docs/DESIGN.md's table to
# refuse it.  POSIX sh; CC (default cc) compiles the planted files.
set -eu
CC=${CC:-cc}
here=$(cd "$(dirname "$0")/.." && pwd)
check=${LAYERS_CHECK:-$here/scripts/check-layers.sh}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plumb-layers-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0

# plant FILE 'C source': compiles $tmp/build/src/FILE.o
plant() {
	mkdir -p "$tmp/build/src/$(dirname "$1")"
	printf '%s\n' "$2" > "$tmp/source.c"
	"$CC" -c -o "$tmp/build/src/$1.o" "$tmp/source.c"
}
# expect pass|fail NAME TABLE 'TEXT THE OUTPUT MUST HOLD' OBJECT...
expect() {
	want=$1 name=$2 table=$3 text=$4
	shift 4
	if sh "$check" "$table" "$@" > "$tmp/out" 2>&1; then got=pass; else got=fail; fi
	if [ "$got" != "$want" ]; then
		echo "FAIL layers/$name: the check should $want, it did $got:"; sed 's/^/    /' "$tmp/out"
		failed=$((failed + 1))
	elif [ -n "$text" ] && ! grep -F -q -- "$text" "$tmp/out"; then
		echo "FAIL layers/$name: the output does not say '$text':"; sed 's/^/    /' "$tmp/out"
		failed=$((failed + 1))
	else
		echo "PASS layers/$name"
	fi
}
table() {
	{ echo 'Some text.'; echo '```layers'; cat; echo '```'; } > "$tmp/$1"
}

plant low/base 'int base(int x) { return x + 1; }'
plant low/user 'int base(int); int user(int x) { return base(x) * 2; }'
plant high/top 'int user(int); int top(int x) { return user(x) - 1; }'
table ok.md <<'EOF'
 src/high  -> low      # the drawing may say more
     |
 src/low   -> nothing
EOF
expect pass clean_layout "$tmp/ok.md" "no circle, every folder call allowed" \
	"$tmp/build/src/low/base.o" "$tmp/build/src/low/user.o" "$tmp/build/src/high/top.o"

# A file circle inside a folder: base calls user, user calls base.
plant low/base 'int user(int); int base(int x) { return x > 0 ? user(x - 1) : 0; }'
expect fail file_circle "$tmp/ok.md" "files call each other in a circle: low/base low/user" \
	"$tmp/build/src/low/base.o" "$tmp/build/src/low/user.o" "$tmp/build/src/high/top.o"
expect fail file_circle_names_the_calls "$tmp/ok.md" "low/base -> low/user (user)" \
	"$tmp/build/src/low/base.o" "$tmp/build/src/low/user.o" "$tmp/build/src/high/top.o"
table accepted.md <<'EOF'
 src/high  -> low
 src/low   -> nothing
 circle low/user low/base   # accepted, with the reason
EOF
expect pass accepted_circle "$tmp/accepted.md" "" \
	"$tmp/build/src/low/base.o" "$tmp/build/src/low/user.o" "$tmp/build/src/high/top.o"

# A folder calling up: low/base calls high/top (a circle across folders too).
plant low/base 'int top(int); int base(int x) { return x > 0 ? top(x - 1) : 0; }'
expect fail folder_call_up "$tmp/ok.md" "src/low calls src/high, which the table does not allow" \
	"$tmp/build/src/low/base.o" "$tmp/build/src/low/user.o" "$tmp/build/src/high/top.o"
expect fail folder_call_up_is_a_file_circle "$tmp/ok.md" "files call each other in a circle: high/top low/base low/user" \
	"$tmp/build/src/low/base.o" "$tmp/build/src/low/user.o" "$tmp/build/src/high/top.o"

# A folder the table does not list.
plant low/base 'int base(int x) { return x + 1; }'
plant new/thing 'int base(int); int thing(void) { return base(1); }'
expect fail folder_not_in_table "$tmp/ok.md" "src/new has objects but no line in the table" \
	"$tmp/build/src/low/base.o" "$tmp/build/src/new/thing.o"

# A table that lets two folders call each other.
table circle.md <<'EOF'
 src/high  -> low
 src/low   -> high
EOF
expect fail table_circle "$tmp/circle.md" "the table lets these folders call each other in a circle" \
	"$tmp/build/src/low/base.o" "$tmp/build/src/high/top.o"

# plumbgrind's folder (BUILD/vg/FILE.o, the folder "vg"): its files call one
# way too, and it calls nothing the table does not give it.
plant_vg() {
	mkdir -p "$tmp/build/vg"
	printf '%s\n' "$2" > "$tmp/source.c"
	"$CC" -c -o "$tmp/build/vg/$1.o" "$tmp/source.c"
}
plant low/base 'int base(int x) { return x + 1; }'
plant_vg pg_a 'int pg_b(int); int pg_a(int x) { return x > 0 ? pg_b(x - 1) : 0; }'
plant_vg pg_b 'int pg_a(int); int pg_b(int x) { return x > 0 ? pg_a(x - 1) : 0; }'
table vg.md <<'EOF'
 src/low   -> nothing
 vg        -> nothing
EOF
expect fail vg_file_circle "$tmp/vg.md" "files call each other in a circle: vg/pg_a vg/pg_b" \
	"$tmp/build/src/low/base.o" "$tmp/build/vg/pg_a.o" "$tmp/build/vg/pg_b.o"
plant_vg pg_b 'int base(int); int pg_b(int x) { return base(x); }'
expect fail vg_call_not_allowed "$tmp/vg.md" "vg calls src/low, which the table does not allow" \
	"$tmp/build/src/low/base.o" "$tmp/build/vg/pg_b.o"
expect fail vg_not_in_table "$tmp/ok.md" "vg has objects but no line in the table" \
	"$tmp/build/src/low/base.o" "$tmp/build/vg/pg_b.o"
plant_vg pg_b 'int pg_b(int x) { return x; }'
expect pass vg_one_way "$tmp/vg.md" "no circle" "$tmp/build/src/low/base.o" "$tmp/build/vg/pg_a.o" "$tmp/build/vg/pg_b.o"

# The real library with one planted object: src/core calling the simulator.
if [ $# -gt 0 ]; then
	plant core/planted_layers_test 'struct sim; int sim_new(struct sim **, const void *, void *);
int planted(struct sim **s) { return sim_new(s, 0, 0); }'
	expect pass real_library "$here/docs/DESIGN.md" "no circle" "$@"
	expect fail real_library_planted_call "$here/docs/DESIGN.md" "src/core calls src/sim, which the table does not allow" \
		"$@" "$tmp/build/src/core/planted_layers_test.o"
fi

if [ "$failed" -gt 0 ]; then
	echo "layers: $failed check(s) of scripts/check-layers.sh failed"
	exit 1
fi
echo "layers: scripts/check-layers.sh catches every planted problem"
