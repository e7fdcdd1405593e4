#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every rate analyze prints pairs HITM with the work counted in the same
# intervals (issue 27): a database holding the three real perf.data
# fixtures (HITM sampled, no work counted) and the real trace.dat (work
# counted, no HITM) shows each side as such, "no work counted" beside the
# HITM and "no HITM sampled" beside the switches, in the unit its source
# counts (the trace.dat's sched_switch is all switches, not same-mm ones),
# and no rate, as text, JSON and CSV. Then one perf.data boot is given
# TLB flushes counted in its own interval: P4 gets a rate, from that boot
# alone, and the trace.dat's switches still none.

. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
MMHITM=$O/mmhitm
TMP=$(mktemp -d /tmp/mmhitm-test-analyze-rates-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
DB=$TMP/mixed.db

for f in perfdata_numatop_perf_mem_record_loads.perf.data perfdata_prospar_c2c_record_userspace.perf.data \
	 perfdata_quipper_weight_struct_memloads.perf.data tracedat_elainecole_sched_switch_4cpu.trace.dat; do
	"$MMHITM" import "$(fixture $f)" --db "$DB" >/dev/null 2>"$TMP/err" ||
		{ fail "import $f: $(cat "$TMP/err")"; finish; }
done
"$MMHITM" analyze "$DB" >"$TMP/text" 2>"$TMP/err" || fail "analyze: $(cat "$TMP/err")"
"$MMHITM" analyze --json "$DB" >"$TMP/json" 2>"$TMP/err" || fail "analyze --json: $(cat "$TMP/err")"
"$MMHITM" analyze --csv "$DB" >"$TMP/csv" 2>"$TMP/err" || fail "analyze --csv: $(cat "$TMP/err")"
cat "$TMP/text"

# The text: each side says what it lacks, the switches their unit.
grep -q '^P1 .* 4427  all context switches  *no HITM sampled$' "$TMP/text" ||
	fail "text: the trace.dat's switches are not shown as all switches without HITM"
grep -q '^P1 .*  -  *-  *no work counted$' "$TMP/text" ||
	fail "text: the perf.data files' P1 HITM is not shown as without work"

# JSON and CSV: the same rows; no row holds HITM and work of different
# intervals, none has a rate; the P1 sides are two rows of their own boots.
python3 - "$TMP/json" "$TMP/csv" "$DB" <<'PY' || fail "analyze built a rate or a row from two recordings"
import csv, json, sqlite3, sys
rows = json.load(open(sys.argv[1]))["paths"]
db = sqlite3.connect(sys.argv[3])
for r in rows:
    assert r["hitm_per_work"] is None, r
    assert r["lcl_hitm"] is None or r["work"] is None, ("HITM beside work it was not measured with", r)
    assert r["no_rate"], r
p1 = {r["no_rate"]: r for r in rows if r["path"] == "P1"}
assert set(p1) == {"no HITM sampled", "no work counted"}, p1
w, h = p1["no HITM sampled"], p1["no work counted"]
assert (w["work"], w["work_unit"], w["boots"], w["lcl_hitm"]) == (4427, "all context switches", 1, None), w
assert (h["work"], h["work_unit"], h["boots"]) == (None, None, 3), h
(hitm,) = db.execute("SELECT sum(lcl_hitm) FROM path_intervals WHERE path = 'P1'").fetchone()
assert h["lcl_hitm"] == hitm, (h, hitm)
keys = list(rows[0])
got = [[r[k] for k in keys] for r in csv.DictReader(open(sys.argv[2]))]
want = [["" if r[k] is None else str(r[k]) for k in keys] for r in rows]
assert got == want, (got, want)
print("ok: %d rows, no rate, each side on its own; CSV = JSON" % len(rows))
PY

# TLB flushes counted in the numatop boot's interval: P4's HITM and work
# are now of the same interval, and that is the only rate.
python3 - "$DB" <<'PY' || { fail "could not add the counts"; finish; }
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT OR IGNORE INTO event_names(name) VALUES ('tlb:tlb_flush')")
db.execute("INSERT INTO event_counts(interval_id, event_id, count) SELECT min(interval_id),"
           " (SELECT event_id FROM event_names WHERE name = 'tlb:tlb_flush'), 25000 FROM intervals"
           " WHERE boot_id = 1")
db.commit()
PY
"$MMHITM" analyze --rebuild --json "$DB" >"$TMP/json" 2>"$TMP/err" || fail "analyze --rebuild: $(cat "$TMP/err")"
python3 - "$TMP/json" "$DB" <<'PY' || fail "P4's rate is not its one boot's HITM per its work"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))["paths"]
db = sqlite3.connect(sys.argv[2])
rated = [r for r in rows if r["hitm_per_work"] is not None]
assert [(r["path"], r["boots"], r["work"], r["work_unit"]) for r in rated] == \
    [("P4", 1, 25000, "TLB flushes and zaps")], rated
(want,) = db.execute("SELECT sum(hitm) * 1000.0 / sum(work) FROM path_rates p WHERE path = 'P4'"
                     " AND boot_id = 1").fetchone()
assert abs(rated[0]["hitm_per_work"] - want) < 1e-9, (rated, want)
assert sorted(r["no_rate"] for r in rows if r["path"] == "P1") == ["no HITM sampled", "no work counted"], rows
print("ok: P4's rate from one boot's interval (%g per 1000), P1 still none" % want)
PY
finish
