#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A long ClickHouse outage with the size budget pressing. mmhitmd records
# 1 s intervals with ship_required on and a max_db_size the database
# outgrows within a minute; mmhitm ship sends a few intervals, then both
# shards of a real two-shard cluster go down for OUTAGE_INTERVALS
# intervals (default 360: six hours of the default 60 s intervals) while
# retention runs after every interval. Every ship in the outage exits 1
# and moves no cursor. The daemon stops at the outage's end, the cluster
# comes back, ship catches up in one run and the next sends nothing.
# Then: every interval SQLite still has is in the cluster, none twice
# (FINAL and raw counts agree); every interval written is in the cluster
# or counted in retention_log.unshipped, exactly; and that count is logged
# by the daemon and shown by mmhitm status and its JSON, never silently.
# Roll-ups are off (ship_rollup = 0): a few minutes make no final bucket,
# and with them on an interval counts as unsent until its bucket is sent.
#
# About 7 minutes with the default OUTAGE_INTERVALS.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse-lib.sh"
require_root
require_tracefs
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
MMHITM=$O/mmhitm
[ -x "$MMHITM" ] || { echo "FAIL: $MMHITM is not built"; exit 1; }
OUTAGE_INTERVALS=${OUTAGE_INTERVALS:-360}
# The database starts near 270 kB and grows 1.2-1.6 kB an interval
# (continuous mode, 1 s intervals, this machine), plus the mm_structs it
# learns from the test's own processes: over budget after about 250
# intervals, so that the outage costs whole intervals, not only detail.
BUDGET=${BUDGET:-640K}

ch_start
WORK=$CH_DIR/work
mkdir -p "$WORK"
DB=$WORK/outage.db
DBNAME=mmo
TO="$CH_URL/?database=$DBNAME"
ship() { "$MMHITM" ship --config /dev/null --db "$DB" --to "$TO" --rollup 0 "$@"; }
for url in "$CH_URL" "$CH_URL2"; do
	"$MMHITM" ship --config /dev/null --init --to "$url/?database=$DBNAME" ||
		{ fail "ship --init on $url"; finish; }
done

"$O/mmhitmd" --config /dev/null --foreground --db "$DB" --interval 1s --record-mode continuous \
	--instance "mmhitm-outage-$$" --metrics-file "" --max-db-size "$BUDGET" \
	--ship-required yes --ship-rollup 0 2> "$WORK/daemon.log" &
DPID=$!
trap 'kill $DPID 2>/dev/null; ch_stop' EXIT
last() { q "SELECT coalesce(max(interval_id), 0) FROM intervals" 2>/dev/null || echo 0; }
at_least() { [ "$(last)" -ge "$1" ]; }
cursor() { q "SELECT coalesce((SELECT last_key FROM ship_cursors WHERE tbl = 'intervals'), 'none')"; }
wait_until 90 at_least 5 || { cat "$WORK/daemon.log"; fail "mmhitmd wrote no intervals"; finish; }
mid=$(q "SELECT quote(machine_id) FROM hosts")
# ClickHouse's intervals of this host: FINAL (what a query sees) or raw.
cluster_n() { chq "SELECT count() FROM $DBNAME.intervals $1 WHERE machine_id = $mid"; }

# --- before: shipping works -----------------------------------------------------

ship > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "the first ship"; }
wait_until 30 at_least $(( $(last) + 5 ))
ship > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "the second ship"; }
before=$(cursor)
check "before the outage: intervals shipped" "$before" -ge 5
check_str "... the cluster has them" "$(cluster_n FINAL)" "$before"

# --- the outage -----------------------------------------------------------------

ch_down 1
ch_down 2
start=$(last)
echo "    cluster down at interval $start, until interval $((start + OUTAGE_INTERVALS))"
tries=0 refused=0 moved=0
while ! at_least $((start + OUTAGE_INTERVALS)); do
	sleep 30
	ship > "$WORK/out" 2>&1
	rc=$?
	tries=$((tries + 1))
	[ $rc = 1 ] && grep -q "Connection refused\|Couldn't connect\|Failed to connect" "$WORK/out" &&
		refused=$((refused + 1))
	[ "$(cursor)" = "$before" ] || moved=$((moved + 1))
	kill -0 $DPID 2>/dev/null || { cat "$WORK/daemon.log"; fail "mmhitmd died in the outage"; finish; }
	echo "    interval $(last): ship exit $rc, $(q "SELECT coalesce(sum(unshipped), 0) FROM retention_log") deleted unshipped so far"
done
check "ships in the outage" "$tries" -ge 2
check_str "... each exits 1 saying the cluster refused" "$refused" "$tries"
check_str "... no cursor moved" "$moved" 0
check "the budget deleted intervals" "$(q "SELECT coalesce(sum(intervals), 0) FROM retention_log WHERE reason = 'size'")" -gt 0
deleted=$(q "SELECT coalesce(sum(unshipped), 0) FROM retention_log")
check "... some of them unshipped (retention_log.unshipped)" "$deleted" -gt 0
grep -q "max_db_size forced deleting .* mmhitm ship had not sent" "$WORK/daemon.log" &&
	pass "the daemon logs it: $(grep -m1 'max_db_size forced' "$WORK/daemon.log" | cut -c1-120)" ||
	fail "the daemon does not log the unshipped deletions"

# --- the cluster back -----------------------------------------------------------

# The daemon stops first, so that what the outage cost stands still: the
# intervals written, those waiting, and those whose detail the budget
# deleted unsent (each interval is counted in retention_log.unshipped once,
# for its detail or its row, whichever went first).
kill -TERM $DPID
wait $DPID
check_str "mmhitmd exits 0" "$?" 0
total=$(last)
deleted=$(q "SELECT coalesce(sum(unshipped), 0) FROM retention_log")
waiting=$(q "SELECT count(*) FROM intervals WHERE interval_id > $before")
bare=$(q "SELECT count(*) FROM intervals WHERE detail_dropped AND interval_id >
	  (SELECT min(last_key) FROM ship_cursors WHERE tbl IN ('hitm_lines', 'vmstat_deltas'))")
ch_up 1
ch_up 2
ship > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship once the cluster is back"; }
check_str "the catch-up sends what waited, in one run" \
	"$(awk '$1 == "intervals" { print $2 }' "$WORK/out")" "$waiting"
check_str "... its cursor at the last interval" "$(cursor)" "$total"
ship > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "a second ship"; }
check_str "a run with nothing new sends nothing" "$(awk '{ n += $2 } END { print n + 0 }' "$WORK/out")" 0

# --- nothing lost but what the budget says, nothing twice -------------------------

final=$(cluster_n FINAL)
check_str "no interval stored twice (FINAL = raw)" "$(cluster_n)" "$final"
q "SELECT start_ns FROM intervals ORDER BY 1" > "$WORK/local"
chq "SELECT start_ns FROM $DBNAME.intervals FINAL WHERE machine_id = $mid ORDER BY start_ns" > "$WORK/cluster"
check_str "every interval SQLite kept is in the cluster ($(wc -l < "$WORK/local"))" \
	"$(comm -23 "$WORK/local" "$WORK/cluster" | wc -l)" 0
echo "    written $total, in the cluster $final; deleted unsent: $deleted, of which $bare kept their row"
check "the outage outlasted the budget: whole intervals deleted unsent" "$final" -lt "$total"
check_str "every interval written is in the cluster or counted deleted unsent" \
	"$((final + deleted - bare))" "$total"

# --- shown, never silently -------------------------------------------------------

"$MMHITM" status --config /dev/null "$DB" > "$WORK/status" 2>&1 || { cat "$WORK/status"; fail "status"; }
grep -q "^  deleted unshipped: $deleted intervals (or their detail) that max_db_size" "$WORK/status" &&
	pass "status says it: $(grep -m1 'deleted unshipped' "$WORK/status" | cut -c1-100)" ||
	{ fail "status does not show the unshipped deletions"; cat "$WORK/status"; }
grep -q "^  shipped: intervals through $total, acknowledged .*; 0 not sent yet" "$WORK/status" &&
	pass "... and that everything else is shipped" || { fail "status's shipped line"; grep shipped "$WORK/status"; }
"$MMHITM" status --config /dev/null --json "$DB" > "$WORK/status.json" 2>&1 ||
	{ cat "$WORK/status.json"; fail "status --json"; }
check_str "status --json: shipping" "$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["shipping"]
print(s["shipped_through"], s["intervals_not_sent"], s["deleted_unshipped"],
      s["deleted_unshipped_first"] <= s["deleted_unshipped_last"])' "$WORK/status.json")" \
	"$total 0 $deleted True"

finish
