#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm status for scripts and monitoring: --json is the text's content
# as one JSON object; --check exits 0 only while a daemon records into the
# database, and 3 (with the reason) when none does, when its last interval
# is older than two intervals, or when its last hour lost events.
. "$(dirname "$0")/lib.sh"
require_root
require_tracefs

WORK=$(mktemp -d /tmp/mmhitm-status.XXXXXX)
DB=$WORK/s.db
INST=mmhitm-status-$$
trap 'kill $DPID $HOLD 2>/dev/null; rm -rf "$WORK"' EXIT

"$O/mmhitmd" --foreground --db "$DB" --interval 1s --record-mode continuous --instance "$INST" \
	--metrics-file "" 2>"$WORK/daemon.log" &
DPID=$!
wait_until 60 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0) -ge 2 ]" ||
	{ cat "$WORK/daemon.log"; fail "no intervals"; finish; }

"$O/mmhitm" status --check --db "$DB" >"$WORK/out"; rc=$?
check_str "--check while recording: exit" "$rc" 0
grep -q "^OK: mmhitmd records" "$WORK/out" || fail "--check says: $(cat "$WORK/out")"

"$O/mmhitm" status --json --db "$DB" >"$WORK/status.json"; rc=$?
check_str "--json: exit" "$rc" 0
python3 - "$WORK/status.json" "$DB" <<'PY' || fail "--json does not match the database"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
(n,) = db.execute("SELECT count(*) FROM boots").fetchone()
assert len(d["boots"]) == n == 1, (len(d["boots"]), n)
b = d["boots"][0]
(iv,) = db.execute("SELECT count(*) FROM intervals WHERE boot_id = ?", (b["boot_id"],)).fetchone()
assert b["intervals"] <= iv and b["intervals"] >= 2, (b["intervals"], iv)
ev = dict(db.execute("SELECT n.name, sum(c.count) FROM event_counts c JOIN event_names n USING (event_id)"
                     " JOIN intervals i USING (interval_id) WHERE i.interval_id <= ?"
                     " GROUP BY n.name", (10**9,)).fetchall())
assert b["events"]["sched:sched_switch"] > 0
assert set(b["events"]) <= set(ev), set(b["events"]) - set(ev)
assert b["source"] == "live" and b["hostname"]
print("status --json: boot", b["boot_id"], "intervals", b["intervals"], "events", len(b["events"]))
PY

"$O/mmhitm" status --csv --db "$DB" >"$WORK/status.csv"; rc=$?
check_str "--csv: exit" "$rc" 0
python3 - "$WORK/status.csv" "$WORK/status.json" <<'PY' || fail "--csv does not match --json"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
boots = json.load(open(sys.argv[2]))["boots"]
assert len(rows) == len(boots) == 1, (len(rows), len(boots))
for k in ("boot_id", "hostname", "kernel_release", "source", "pmu"):
    assert rows[0][k] == str(boots[0][k]), (k, rows[0][k], boots[0][k])
print("status --csv: %d boot, as --json" % len(rows))
PY

# An empty top says why, and what would fill it: no PMU on this VM.
"$O/mmhitm" top --db "$DB" >"$WORK/top.out" 2>&1
if grep -q "no memory-sampling PMU\|no boot here has a memory-sampling PMU" "$WORK/top.out"; then
	pass "an empty top says why: no memory-sampling PMU"
elif [ "$(q "SELECT count(*) FROM boots WHERE pmu_kind != 'none'")" -gt 0 ]; then
	pass "this host has a PMU: top's no-PMU reason does not apply"
else
	fail "an empty top does not say why: $(grep 'no attributed' "$WORK/top.out")"
fi

kill -TERM $DPID; wait $DPID
# analyze's summary without HITM says why (no PMU here), beside the work rows.
"$O/mmhitm" analyze --db "$DB" >"$WORK/analyze.out" 2>&1 || fail "analyze: $(cat "$WORK/analyze.out")"
if [ "$(q "SELECT count(*) FROM mem_lines")" -eq 0 ]; then
	grep -q "^(no memory samples: " "$WORK/analyze.out" ||
		fail "analyze without samples does not say why: $(cat "$WORK/analyze.out")"
	pass "analyze without samples says why"
fi

"$O/mmhitm" status --check --db "$DB" >"$WORK/out"; rc=$?
check_str "--check after the daemon stopped: exit" "$rc" 3
grep -q "^UNHEALTHY: mmhitmd is not recording" "$WORK/out" || fail "--check says: $(cat "$WORK/out")"

# A daemon that holds the lock but writes nothing: stale after two intervals.
flock -x "$DB.lock" sleep 60 &
HOLD=$!
# The lock taken, as a daemon's would be.
wait_until 20 sh -c "! flock -n '$DB.lock' true"
sleep 3		# two intervals (1 s) since the daemon's last row: time the test owns
"$O/mmhitm" status --check --db "$DB" >"$WORK/out"; rc=$?
check_str "--check on a stale database: exit" "$rc" 3
grep -q "over two intervals" "$WORK/out" || fail "--check says: $(cat "$WORK/out")"

# Fresh but lossy: the last interval lost events.
sqlite3 "$DB" "UPDATE intervals SET end_ns = CAST((julianday('now') - 2440587.5) * 86400e9 AS INTEGER),
	events_lost = 7 WHERE interval_id = (SELECT max(interval_id) FROM intervals)"
"$O/mmhitm" status --check --db "$DB" >"$WORK/out"; rc=$?
check_str "--check with lost events: exit" "$rc" 3
grep -q "lost 7 learning events in the last hour" "$WORK/out" || fail "--check says: $(cat "$WORK/out")"
kill $HOLD

"$O/mmhitm" status --check --db "$WORK/none.db" >"$WORK/out" 2>/dev/null; rc=$?
check_str "--check without a database: exit" "$rc" 3
finish
