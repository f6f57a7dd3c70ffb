#!/bin/sh
# Checks that the code calls one way (docs/DESIGN.md, "Folders, what each
# may call, the pipelines"), from the built objects:
#
#   sh scripts/check-layers.sh TABLE OBJECT...
#
# OBJECT is BUILD/src/FOLDER/FILE.o or BUILD/vg/FILE.o (plumbgrind, the
# folder "vg"; any BUILD).  A file calls another when
# one of its undefined symbols (nm: U, w) is a global symbol the other
# defines (T D B R C G S V W i u); a folder calls another when one of its
# files does.  Fails, naming the circle or the call, when
#   - files of the library (every folder but src/cli, the program's) call
#     each other in a circle (a strongly connected component of the file
#     graph), unless TABLE accepts that circle by name;
#   - a folder calls one that TABLE does not list after its arrow, or a
#     folder has objects but no line in TABLE;
#   - TABLE itself lets folders call in a circle.
# TABLE is the fenced block of docs/DESIGN.md that opens with ```layers:
#   src/NAME -> FOLDER FOLDER ...   # comment      (* = every folder; vg: plumbgrind)
#   circle FOLDER/FILE FOLDER/FILE ... # why       (an accepted file circle)
# Lines of the block that start otherwise are drawing and are ignored.
# POSIX sh, nm and awk only (mawk and gawk).
set -eu
NM=${NM:-nm}
[ $# -ge 2 ] || { echo "usage: check-layers.sh TABLE OBJECT..." >&2; exit 2; }
table=$1
shift
[ -r "$table" ] || { echo "layers: cannot read the table $table" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plumb-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# One line per object ("O file") and symbol: "D file symbol" (defines) or
# "U file symbol" (uses).  One nm for all objects (-A: each line names its
# object; -P: the portable format "object: symbol type ...").
for object in "$@"; do
	case "$object" in
	*/src/*/*.o|*/vg/*.o) ;;
	*) echo "layers: $object is not BUILD/src/FOLDER/FILE.o or BUILD/vg/FILE.o" >&2; exit 2 ;;
	esac
	[ -r "$object" ] || { echo "layers: cannot read $object (build first)" >&2; exit 2; }
done
"$NM" -A -P "$@" > "$tmp/nm" || { echo "layers: $NM failed" >&2; exit 2; }
for object in "$@"; do echo "$object"; done > "$tmp/objects"
awk '
	function file_of(path) {
		if (path ~ /\/src\/[^\/]+\/[^\/]+\.o:?$/) sub(/.*\/src\//, "", path); else sub(/.*\/vg\//, "vg/", path)
		sub(/\.o:?$/, "", path); return path
	}
	FNR == NR { print "O", file_of($0); next }
	$3 == "U" || $3 == "w" || $3 == "v" { print "U", file_of($1), $2; next }
	$3 ~ /^[TDBRCGSVWiu]$/ { print "D", file_of($1), $2 }' "$tmp/objects" "$tmp/nm" > "$tmp/symbols"

awk -v table="$table" '
function folder_of(file,   i) { i = index(file, "/"); return substr(file, 1, i - 1) }
# How a folder is named to the reader: src/NAME, or vg (plumbgrind, the tool).
function shown(folder) { return folder == "vg" ? "vg" : "src/" folder }

# Tarjan: the strongly connected components of the graph in out[], nout[].
function strong(v,   i, w, members, k) {
	index_of[v] = counter; low[v] = counter; counter++
	stack[++sp] = v; on_stack[v] = 1
	for (i = 1; i <= nout[v]; i++) {
		w = out[v, i]
		if (!(w in index_of)) { strong(w); if (low[w] < low[v]) low[v] = low[w] }
		else if (on_stack[w] && index_of[w] < low[v]) low[v] = index_of[w]
	}
	if (low[v] == index_of[v]) {
		k = 0; members = ""
		do { w = stack[sp--]; on_stack[w] = 0; component[w] = v; k++; members = members " " w } while (w != v)
		if (k > 1) { ncomponents++; component_root[ncomponents] = v; component_members[ncomponents] = members }
	}
}

# One circle through v inside its component, as "v -> a -> ... -> v".
function circle_through(v,   queue, head, tail, seen, parent, x, i, w, path) {
	head = 1; tail = 0
	for (i = 1; i <= nout[v]; i++) {
		w = out[v, i]
		if (component[w] == component[v] && !(w in seen)) { seen[w] = 1; parent[w] = v; queue[++tail] = w }
	}
	while (head <= tail) {
		x = queue[head++]
		if (x == v) break
		for (i = 1; i <= nout[x]; i++) {
			w = out[x, i]
			if (component[w] == component[v] && !(w in seen)) { seen[w] = 1; parent[w] = x; queue[++tail] = w }
		}
	}
	path = v; x = v
	do { x = parent[x]; path = x " -> " path } while (x != v)
	return path
}

function symbols_between(a, b,   list) { list = via[a, b]; return list }

BEGIN {
	# The table: the fenced block that opens with ```layers.
	inside = 0; rows = 0
	while ((getline line < table) > 0) {
		if (!inside && line ~ /^```layers[ \t]*$/) { inside = 1; found = 1; continue }
		if (inside && line ~ /^```/) { inside = 0; continue }
		if (!inside) continue
		sub(/#.*/, "", line)
		n = split(line, word, /[ \t]+/)
		first = 1; while (first <= n && word[first] == "") first++
		if (first > n) continue
		if (word[first] == "circle") {
			k = 0
			for (i = first + 1; i <= n; i++) if (word[i] != "") circle_member[++k] = word[i]
			for (i = 2; i <= k; i++) { x = circle_member[i]; for (j = i - 1; j >= 1 && circle_member[j] > x; j--) circle_member[j + 1] = circle_member[j]; circle_member[j + 1] = x }
			key = ""; for (i = 1; i <= k; i++) key = key " " circle_member[i]
			accepted[key] = 1
			continue
		}
		if (word[first] !~ /^src\// && word[first] != "vg") continue
		if (word[first + 1] != "->") {
			print "layers: " table ": \"" word[first] "\" has no arrow (src/NAME -> FOLDER ...)"; bad_table = 1; continue
		}
		name = word[first] == "vg" ? "vg" : substr(word[first], 5); listed[name] = 1; rows++
		for (i = first + 2; i <= n; i++) {
			if (word[i] == "" || word[i] == "nothing") continue
			if (word[i] == "*") { any[name] = 1; continue }
			w = word[i]; sub(/^src\//, "", w)
			allowed[name, w] = 1
			if (!((name, w) in table_edge)) { table_edge[name, w] = 1; table_out[name, ++table_nout[name]] = w }
		}
	}
	close(table)
	if (!found || rows == 0) { print "layers: " table " has no ```layers block"; exit 2 }
}
$1 == "O" { object[$2] = 1; folders[folder_of($2)] = 1; next }
$1 == "D" { if ($3 in definer) definer[$3] = definer[$3] " " $2; else definer[$3] = $2; next }
$1 == "U" { use[++nuse] = $2 " " $3; next }
END {
	if (bad_table) exit 1
	# The file graph.
	for (u = 1; u <= nuse; u++) {
		split(use[u], part, " "); from = part[1]; symbol = part[2]
		if (!(symbol in definer)) continue
		nd = split(definer[symbol], to, " ")
		for (j = 1; j <= nd; j++) {
			if (to[j] == from) continue
			if (!((from, to[j]) in edge)) { edge[from, to[j]] = 1; out[from, ++nout[from]] = to[j]; via[from, to[j]] = symbol }
			else if (index(" " via[from, to[j]] " ", " " symbol " ") == 0 && split(via[from, to[j]], tmp_count, " ") < 3)
				via[from, to[j]] = via[from, to[j]] " " symbol
		}
	}
	failures = 0

	# File circles inside the library (src/cli is the program, not the library).
	counter = 0; sp = 0; ncomponents = 0
	for (f in object) if (!(f in index_of)) strong(f)
	for (c = 1; c <= ncomponents; c++) {
		n = split(component_members[c], member, " ")
		library = 0
		for (i = 1; i <= n; i++) if (folder_of(member[i]) != "cli") library = 1
		# the accepted circles are named in sorted order
		for (i = 2; i <= n; i++) { x = member[i]; for (j = i - 1; j >= 1 && member[j] > x; j--) member[j + 1] = member[j]; member[j + 1] = x }
		key = ""; for (i = 1; i <= n; i++) key = key " " member[i]
		if (key in accepted) { used_circle[key] = 1; continue }
		if (!library) {
			print "layers: src/cli files call each other in a circle that docs/DESIGN.md does not accept:" key
			failures++
			continue
		}
		path = circle_through(member[1])
		m = split(path, hop, " -> ")
		detail = ""
		for (i = 1; i < m; i++) detail = detail (i > 1 ? "; " : "") hop[i] " -> " hop[i + 1] " (" via[hop[i], hop[i + 1]] ")"
		print "layers: files call each other in a circle:" key
		print "        " detail
		failures++
	}
	for (key in accepted) if (!(key in used_circle))
		print "layers: note: the accepted circle" key " is gone: remove its line from the table"

	# Folder calls against the table.
	for (f in folders) if (!(f in listed)) {
		print "layers: " shown(f) " has objects but no line in the table (" table ")"; failures++
	}
	for (pair in edge) {
		split(pair, ends, SUBSEP)
		a = folder_of(ends[1]); b = folder_of(ends[2])
		if (a == b || (a, b) in allowed || a in any) continue
		if (!((a, b) in reported)) { reported[a, b] = 1; order[++nreported] = a SUBSEP b }
		calls[a, b] = calls[a, b] "\n        " ends[1] " -> " ends[2] " (" via[ends[1], ends[2]] ")"
	}
	for (i = 1; i <= nreported; i++) {
		split(order[i], ends, SUBSEP)
		print "layers: " shown(ends[1]) " calls " shown(ends[2]) ", which the table does not allow:" calls[ends[1], ends[2]]
		failures++
	}
	for (pair in allowed) {
		split(pair, ends, SUBSEP); used = 0
		for (e in edge) { split(e, fe, SUBSEP); if (folder_of(fe[1]) == ends[1] && folder_of(fe[2]) == ends[2]) { used = 1; break } }
		if (!used && (ends[1] in folders)) print "layers: note: the table lets " shown(ends[1]) " call " shown(ends[2]) ", which it does not"
	}

	# The table itself must not let folders call in a circle.
	delete out; delete nout; delete index_of; delete low; delete on_stack; delete component
	for (pair in table_edge) { split(pair, ends, SUBSEP); out[ends[1], ++nout[ends[1]]] = ends[2] }
	counter = 0; sp = 0; ncomponents = 0
	for (f in listed) if (!(f in index_of)) strong(f)
	for (c = 1; c <= ncomponents; c++) {
		print "layers: the table lets these folders call each other in a circle:" component_members[c]; failures++
	}

	if (failures) { print "layers: " failures " problem(s); docs/DESIGN.md says how the code is layered"; exit 1 }
	nfiles = 0; for (f in object) nfiles++
	nfolders = 0; for (f in folders) nfolders++
	nedges = 0; for (e in edge) nedges++
	print "layers: " nfiles " files in " nfolders " folders, " nedges " file calls: no circle, every folder call allowed"
}' "$tmp/symbols"
