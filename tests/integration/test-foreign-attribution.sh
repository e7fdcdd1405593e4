#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Attribution of perf c2c recordings from hosts that never ran mmhitmd,
# with only the recorded kernel's BTF and kallsyms: Debian's 6.1 and 6.12
# cloud kernels as booted (tests/fixtures/kernels, PROVENANCE), each path
# reached every way that kernel reaches it and the look-alikes of no path
# (tests/integration/c2c_cases.py lists them). Scores: the share of P1-P4
# HITM on the right path (>= 95 %), HITM on a wrong path (0), unresolved
# lines that name no missing input (0), static data and user space typed.
# Then the same files with --vmemmap-base: the walk's own flag loads (the
# one route the code path cannot type) become P2 on the layout, every
# other result stays, and the import named each missing input once.

. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
MMHITM=$O/mmhitm
KERNELS=$TOP/tests/fixtures/kernels
TMP=$(mktemp -d /tmp/mmhitm-test-foreign-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
VMEMMAP=0xffffe3c580000000	# c2c_cases.py's recorded boot

n=0
for k in "$KERNELS"/*/; do
	rel=$(basename "$k")
	[ -f "$k/layout.btf" ] && [ -f "$k/kallsyms" ] || { fail "$rel: fixture incomplete"; continue; }
	n=$((n + 1))
	DB=$TMP/$rel.db
	python3 tests/integration/c2c_cases.py write "$k" "$TMP/$rel.data" "$TMP/$rel.json" ||
		{ fail "$rel: c2c_cases.py write"; continue; }
	if ! "$MMHITM" import "$TMP/$rel.data" --db "$DB" --btf "$k/layout.btf" \
		--kallsyms "$k/kallsyms" --interval 1s >"$TMP/import.out" 2>"$TMP/import.err"; then
		fail "$rel: import: $(cat "$TMP/import.err")"
		continue
	fi
	# a foreign file: no defaults from this host, the missing base named once
	check "$rel: import names --vmemmap-base once" \
		"$(grep -c 'pass --vmemmap-base' "$TMP/import.err")" -eq 1
	check "$rel: import does not ask for --btf or --kallsyms it was given" \
		"$(grep -c 'pass --btf\|pass --kallsyms' "$TMP/import.err")" -eq 0
	"$MMHITM" analyze --db "$DB" >"$TMP/analyze.out" 2>&1 || fail "$rel: analyze"
	python3 tests/integration/c2c_cases.py score "$DB" "$TMP/$rel.json" >"$TMP/score.out"
	rc=$?
	sed 's/^/    /' "$TMP/score.out"
	check "$rel: score (no wrong path, every unresolved line names its input)" "$rc" -eq 0
	line=$(grep '^score' "$TMP/score.out")
	share=$(echo "$line" | sed -n 's/.*right path [0-9]* of [0-9]* (\([0-9]*\)\.[0-9] %).*/\1/p')
	check "$rel: P1-P4 HITM on the right path, % (BTF + kallsyms only)" "${share:-0}" -ge 95
	check "$rel: HITM on a wrong path" "$(echo "$line" | sed -n 's/.*wrong path \([0-9]*\);.*/\1/p')" -eq 0
	check "$rel: analyze says what each path rests on" \
		"$(grep -c '^P[1-4] .* path 100 %$' "$TMP/analyze.out")" -eq 4
	# top shows the grade and why a line is unresolved
	"$MMHITM" top --db "$DB" --since @0 --all --limit 50 >"$TMP/top.out" 2>&1 || fail "$rel: top"
	check "$rel: top shows P1 typed by its path" "$(grep -c 'P1/path' "$TMP/top.out")" -ge 1
	check "$rel: top's unresolved offsets say what would resolve them" \
		"$(grep -c '^# \[[0-9]*\] .*pass --vmemmap-base' "$TMP/top.out")" -ge 1

	# the base given: struct pages typed by the layout
	DB=$TMP/$rel-base.db
	"$MMHITM" import "$TMP/$rel.data" --db "$DB" --btf "$k/layout.btf" --kallsyms "$k/kallsyms" \
		--vmemmap-base $VMEMMAP --interval 1s >/dev/null 2>"$TMP/import.err" ||
		fail "$rel: import --vmemmap-base"
	check "$rel: with the base, nothing asks for it" "$(grep -c 'vmemmap-base' "$TMP/import.err")" -eq 0
	"$MMHITM" analyze --db "$DB" >/dev/null 2>&1 || fail "$rel: analyze (base)"
	python3 tests/integration/c2c_cases.py score "$DB" "$TMP/$rel.json" >"$TMP/score2.out" ||
		{ fail "$rel: score with the base"; sed 's/^/    /' "$TMP/score2.out"; }
	grep '^score\|rests on' "$TMP/score2.out" | sed 's/^/    /'
	check_str "$rel: the walk's own flag loads are P2 on the layout" \
		"$(grep "the walk's own folio flag loads" "$TMP/score2.out" | awk '{ print $(NF-2), $(NF-1), $NF }')" \
		"P2 6 layout"
	check "$rel: with the base, all P1-P4 HITM on the right path" \
		"$(grep -c 'right path \([0-9]*\) of \1 (100.0 %)' "$TMP/score2.out")" -eq 1
done
check "kernels with fixtures" "$n" -ge 2

# top over both kernels' databases at once: one table each, text or JSON,
# and the JSON's lines are the database's own (HITM per line from the rows).
set -- "$TMP"/*-base.db
"$MMHITM" top "$@" --since @0 --limit 5 --no-detail >"$TMP/top2.out" 2>&1 || fail "top over $# databases"
check "top prints one table per database" "$(grep -c '^== ' "$TMP/top2.out")" -eq $#
"$MMHITM" top "$@" --since @0 --limit 5 --json >"$TMP/top.json" 2>"$TMP/top.err" || fail "top --json"
python3 - "$TMP/top.json" "$@" <<'PY' || fail "top --json does not match the databases"
import json, sqlite3, sys
t = json.load(open(sys.argv[1]))
dbs = sys.argv[2:]
assert [d["database"] for d in t["databases"]] == dbs, t["databases"]
for d in t["databases"]:
    db = sqlite3.connect(d["database"])
    assert 0 < len(d["lines"]) <= 5, len(d["lines"])
    for l in d["lines"]:
        (h,) = db.execute("SELECT sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer)"
                          " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
                          " JOIN intervals i USING (interval_id) WHERE i.boot_id = ? AND a.line_addr = ?",
                          (l["boot"], (int(l["address"], 16) + 2**63) % 2**64 - 2**63)).fetchone()
        assert h == l["hitm"], (l, h)
    assert sum(l["hitm"] for l in d["lines"]) <= d["hitm"]
    assert d["lines"] == sorted(d["lines"], key=lambda l: -l["hitm"])
print("top --json: %d databases, %d lines checked" % (len(t["databases"]), sum(len(d["lines"]) for d in t["databases"])))
PY
# An empty range says where the data is.
"$MMHITM" top "$1" --until @1000 >"$TMP/top-empty.out" 2>&1
grep -q "no intervals in this range; the sampled ones run from .* (--since/--until)" "$TMP/top-empty.out" ||
	fail "an empty range does not say where the data is: $(cat "$TMP/top-empty.out")"
# --csv: the same lines, one row each with its database
"$MMHITM" top "$@" --since @0 --limit 5 --csv >"$TMP/top.csv" 2>>"$TMP/top.err" || fail "top --csv"
python3 - "$TMP/top.csv" "$TMP/top.json" <<'PY' || fail "top --csv differs from --json"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
lines = [(d["database"], l) for d in json.load(open(sys.argv[2]))["databases"] for l in d["lines"]]
assert len(rows) == len(lines), (len(rows), len(lines))
for r, (db, l) in zip(rows, lines):
    assert r["database"] == db and r["address"] == l["address"] and int(r["hitm"]) == l["hitm"], (r, l)
    assert r["paths"] == l["paths"] and r["fields"] == (l["fields"] or ""), (r, l)
print("top --csv: %d rows, the JSON's lines" % len(rows))
PY
# analyze's summary as JSON and CSV: the path rows of the database
DB=$1
"$MMHITM" analyze --db "$DB" --json >"$TMP/an.json" 2>&1 || fail "analyze --json"
"$MMHITM" analyze --db "$DB" --csv >"$TMP/an.csv" 2>&1 || fail "analyze --csv"
python3 - "$TMP/an.json" "$TMP/an.csv" "$DB" <<'PY' || fail "analyze --json/--csv differ from path_intervals"
import csv, json, sqlite3, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
db = sqlite3.connect(sys.argv[3])
want = dict(db.execute("SELECT path, sum(lcl_hitm) FROM path_intervals GROUP BY path").fetchall())
def per_path(entries, num):	# a path's entries (one per kind of interval and unit) summed
    got = {}
    for e in entries:
        v = num(e["lcl_hitm"])
        got[e["path"]] = v if got.get(e["path"]) is None else got[e["path"]] + (v or 0)
    return got
assert per_path(j["paths"], lambda v: v) == want, (j["paths"], want)
assert per_path(rows, lambda v: int(v) if v else None) == want, rows
assert j["database"] == sys.argv[3] and j["rules_digest"]
print("analyze --json/--csv: %d paths, as path_intervals" % len(rows))
PY
finish
