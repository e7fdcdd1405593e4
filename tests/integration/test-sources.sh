#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every command names its data the same way: --source (repeatable), --db
# and arguments as its aliases, globs expanded. status, analyze and top
# take several SQLite databases and answer for each: per database, the
# boots, intervals, attributed lines and paths its file holds (counted
# here with sqlite3), in text, JSON (an array for several) and CSV (a
# database column). status --check fails when any database does.
. "$(dirname "$0")/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import numpy' 2>/dev/null || skip "python3-numpy is missing (make deps-test)"
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
MMHITM=$O/mmhitm
[ -x "$MMHITM" ] || { echo "FAIL: $MMHITM is not built"; exit 1; }
WORK=$(mktemp -d /tmp/mmhitm-sources.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

"$PY" tests/integration/fleetgen.py bench "$WORK/f" --hosts 4 --days 1 --interval 600 >/dev/null ||
	{ fail "fleetgen.py"; finish; }
# Two real recordings, imported: analyze has work to do in each.
for n in a b; do
	"$MMHITM" import "$(fixture perfdata_quipper_weight_struct_memloads.perf.data)" --db "$WORK/r-$n.db" \
		>/dev/null 2>&1 || fail "import $n"
done
"$MMHITM" import "$(fixture perfdata_numatop_perf_mem_record_loads.perf.data)" --db "$WORK/r-b.db" \
	>/dev/null 2>&1 || fail "import numatop"
cnt() { sqlite3 -batch -noheader "$1" "$2"; }

# --- status ---------------------------------------------------------------------

"$MMHITM" status --db "$WORK/f/host-0000.db" --source "$WORK/f/host-0001.db" "$WORK/f/host-0003.db" \
	> "$WORK/st.txt" || fail "status with --db, --source and an argument"
check_str "status: one block per database" "$(grep -c ': schema version' "$WORK/st.txt")" 3
for h in 0000 0001 0003; do
	db=$WORK/f/host-$h.db
	got=$(awk -v db="$db" '/: schema version/ { on = ($1 == db ":") } on && / intervals, / { n += $1 } END { print n }' \
		"$WORK/st.txt")
	check_str "... $(basename "$db"): its intervals" "$got" "$(cnt "$db" 'SELECT count(*) FROM intervals')"
done
"$MMHITM" status --json --source "$WORK/f/host-*.db" > "$WORK/st.json" || fail "status --json with a glob"
"$PY" - "$WORK/st.json" "$WORK/f" <<'PY' && pass "status --json over a glob: an array, each database's boots and intervals" ||
import json, sqlite3, sys, glob
d = json.load(open(sys.argv[1]))
files = sorted(glob.glob(sys.argv[2] + "/host-*.db"))
assert isinstance(d, list) and [x["database"] for x in d] == files, [x.get("database") for x in d]
for x in d:
    db = sqlite3.connect(x["database"])
    assert len(x["boots"]) == db.execute("SELECT count(*) FROM boots").fetchone()[0]
    assert sum(b["intervals"] for b in x["boots"]) == db.execute("SELECT count(*) FROM intervals").fetchone()[0]
PY
	fail "status --json over a glob"
"$MMHITM" status --csv "$WORK/f/host-*.db" > "$WORK/st.csv" || fail "status --csv with a glob"
"$PY" - "$WORK/st.csv" <<'PY' && pass "status --csv over a glob: one row per boot with its database" ||
import csv, sqlite3, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
per = collections.Counter(r["database"] for r in rows)
assert len(per) == 4, per
for db, n in per.items():
    assert n == sqlite3.connect(db).execute("SELECT count(*) FROM boots").fetchone()[0], (db, n)
PY
	fail "status --csv over a glob"
# One database: the object it always was.
"$MMHITM" status --json --db "$WORK/f/host-0002.db" | "$PY" -c \
	'import json, sys; d = json.load(sys.stdin); assert d["database"].endswith("host-0002.db")' &&
	pass "status --json with one database: one object" || fail "status --json with one database"

# --check: each database says, one unhealthy fails the whole.
"$MMHITM" status --check "$WORK/f/host-000[01].db" "$WORK/none.db" > "$WORK/out" 2>&1
check_str "status --check over three: exit" "$?" 3
check_str "... one line each" "$(grep -c '^UNHEALTHY: ' "$WORK/out")" 3
grep -q "^UNHEALTHY: $WORK/none.db cannot be read" "$WORK/out" && pass "... naming the unreadable one" ||
	fail "--check: $(cat "$WORK/out")"
"$MMHITM" status "$WORK/f/nothing-*.db" > "$WORK/out" 2>&1
check_str "a glob matching nothing: exit" "$?" 2
grep -q "no file matches" "$WORK/out" && pass "... saying so" || fail "glob: $(cat "$WORK/out")"

# --- analyze --------------------------------------------------------------------

"$MMHITM" analyze --json --db "$WORK/r-a.db" --db "$WORK/r-b.db" > "$WORK/an.json" ||
	fail "analyze two databases"
"$PY" - "$WORK/an.json" <<'PY' && pass "analyze --json over two: each database's own lines and paths" ||
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and len(d) == 2, d
for x in d:
    db = sqlite3.connect(x["database"])
    (lines,) = db.execute("SELECT count(*) FROM line_attribution").fetchone()
    assert x["lines_attributed"] == lines > 0, (x["database"], x["lines_attributed"], lines)
    (paths,) = db.execute("SELECT count(DISTINCT path) FROM path_intervals").fetchone()
    assert len({p["path"] for p in x["paths"]}) == paths, (x["paths"], paths)
assert d[0]["lines_attributed"] != d[1]["lines_attributed"]
PY
	fail "analyze --json over two"
"$MMHITM" analyze --csv "$WORK/r-*.db" > "$WORK/an.csv" || fail "analyze --csv with a glob"
for n in a b; do
	check_str "analyze --csv: r-$n.db's paths" \
		"$(grep "^$WORK/r-$n.db," "$WORK/an.csv" | cut -d, -f2 | sort -u | wc -l)" \
		"$(cnt "$WORK/r-$n.db" 'SELECT count(DISTINCT path) FROM path_intervals')"
done
"$MMHITM" analyze "$WORK/r-a.db" "$WORK/r-b.db" > "$WORK/an.txt" || fail "analyze text over two"
check_str "analyze text: a run line per database, nothing new the second time" \
	"$(grep -c ': [0-9]* boots, 0 new intervals' "$WORK/an.txt")" 2

# --- top ------------------------------------------------------------------------

"$MMHITM" top --csv --all --limit 100000 --source "$WORK/r-*.db" --db "$WORK/f/host-0001.db" > "$WORK/top.csv" ||
	fail "top over a glob and a --db"
for db in "$WORK/r-a.db" "$WORK/r-b.db" "$WORK/f/host-0001.db"; do
	check_str "top --csv: $(basename "$db")'s lines" "$(grep -c "^$db," "$WORK/top.csv")" \
		"$(cnt "$db" "SELECT count(DISTINCT i.boot_id || ':' || a.line_addr) FROM line_attribution a
		   JOIN intervals i USING (interval_id)")"
done
check_str "top --csv: each line with its host" \
	"$(grep "^$WORK/f/host-0001.db," "$WORK/top.csv" | awk -F, '{ print $NF }' | sort -u)" host-0001
finish
