#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm ship into a real two-shard ClickHouse cluster (Debian's
# clickhouse-server, two servers on loopback started and stopped here):
# two databases mmhitmd writes here (one shipped while the daemon still
# records into it), an imported and analyzed perf.data, and a synthetic
# fleet of 20 hosts. After shipping, every table of every host has in the
# cluster exactly the rows SQLite has (with FINAL and without: nothing
# sent twice); a second run sends nothing. Then the failures the design
# is for: ship killed between the cluster's acknowledgement and its cursor
# update, shipped again: the same counts and sums, no duplicates after
# FINAL; a shard down: exit 1 naming ClickHouse's reason, cursors
# unchanged, everything there after the next run; no server at all; the
# credentials file (refused when others may read it; a wrong password is
# an authentication failure). The roll-ups (interval_rollup, path_rollup):
# per host, the cluster's buckets (FINAL) are the SQLite GROUP BY of the
# final 10-minute buckets, computed here on its own; killed between their
# send and acknowledge, shipped again: nothing duplicated after FINAL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse-lib.sh"
require_root
require_tracefs
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import numpy' 2>/dev/null || skip "python3-numpy is missing (make deps-test)"
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
MMHITM=$O/mmhitm
[ -x "$MMHITM" ] || { echo "FAIL: $MMHITM is not built"; exit 1; }

ch_start
WORK=$CH_DIR/work
mkdir -p "$WORK"
DBNAME=mmt
TO="$CH_URL/?database=$DBNAME"
TABLES="hosts boots ksyms intervals event_counts vmstat_deltas path_intervals hitm_lines"
# ship DB [ARGS]: never the host's /etc/mmhitm/mmhitm.conf
ship() { d=$1; shift; "$MMHITM" ship --config /dev/null --db "$d" --to "$TO" "$@"; }

for url in "$CH_URL" "$CH_URL2"; do
	"$MMHITM" ship --config /dev/null --init --to "$url/?database=$DBNAME" ||
		{ fail "ship --init on $url"; finish; }
done
check_str "--init made every table on both shards" \
	"$(chq "SELECT count() FROM system.tables WHERE database = '$DBNAME'") $(chq \
	   "SELECT count() FROM system.tables WHERE database = '$DBNAME'" "$CH_URL2")" "20 20"
# Again: the schema is created IF NOT EXISTS, so --init can be rerun.
"$MMHITM" ship --config /dev/null --init --to "$TO" 2>/dev/null || fail "a second --init fails"

# What SQLite holds per cluster table, one "table machine_id rows" line each.
sqlite_counts() {
	sqlite3 -batch -noheader -separator ' ' "$1" "
	SELECT 'hosts', machine_id, 1 FROM hosts;
	SELECT 'boots', h.machine_id, count(*) FROM boots b JOIN hosts h USING (host_id) GROUP BY 2;
	SELECT 'ksyms', h.machine_id, count(*) FROM ksyms k JOIN boots b USING (boot_id)
	  JOIN hosts h USING (host_id) GROUP BY 2;
	SELECT 'intervals', h.machine_id, count(*) FROM intervals i JOIN boots b USING (boot_id)
	  JOIN hosts h USING (host_id) GROUP BY 2;
	SELECT 'event_counts', h.machine_id, count(*) FROM event_counts c JOIN intervals i USING (interval_id)
	  JOIN boots b USING (boot_id) JOIN hosts h USING (host_id) GROUP BY 2;
	SELECT 'vmstat_deltas', h.machine_id, count(*) FROM vmstat_deltas c JOIN intervals i USING (interval_id)
	  JOIN boots b USING (boot_id) JOIN hosts h USING (host_id) GROUP BY 2;
	SELECT 'path_intervals', h.machine_id, count(*) FROM path_intervals c JOIN intervals i USING (interval_id)
	  JOIN boots b USING (boot_id) JOIN hosts h USING (host_id) GROUP BY 2;
	SELECT 'hitm_lines', h.machine_id, count(*) FROM line_attribution c
	  JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)
	  JOIN intervals i USING (interval_id)
	  JOIN boots b USING (boot_id) JOIN hosts h USING (host_id) GROUP BY 2;"
}
# The same from the cluster for the hosts of DB: FINAL (what a query sees)
# and without (what is stored; more means a batch is stored twice).
cluster_counts() {
	ids=$(sqlite3 "$1" "SELECT group_concat(quote(machine_id), ',') FROM hosts")
	for t in $TABLES; do
		chq "SELECT '$t', machine_id, count() FROM $DBNAME.$t $2 WHERE machine_id IN ($ids)
		     GROUP BY machine_id FORMAT TSV" | tr '\t' ' '
	done
}
# same_rows WHAT DB: the cluster has exactly the database's rows
same_rows() {
	sqlite_counts "$2" | awk '$3 > 0' | sort > "$WORK/want"
	cluster_counts "$2" FINAL | sort > "$WORK/got"
	cluster_counts "$2" | sort > "$WORK/got-raw"
	if cmp -s "$WORK/want" "$WORK/got"; then
		pass "$1: the cluster has SQLite's rows ($(awk '{ n += $3 } END { print n }' "$WORK/want") rows)"
	else
		fail "$1: the cluster's rows differ from SQLite's:"; diff "$WORK/want" "$WORK/got" | head -20
	fi
	# Hosts, boots and symbols are sent again when they change (a live
	# boot's last_seen_ns); the interval tables never are.
	if [ "${3:-}" != dups-ok ]; then
		grep -v '^hosts \|^boots \|^ksyms ' "$WORK/got" > "$WORK/got-facts"
		grep -v '^hosts \|^boots \|^ksyms ' "$WORK/got-raw" > "$WORK/got-raw-facts"
		cmp -s "$WORK/got-facts" "$WORK/got-raw-facts" && pass "$1: no interval row stored twice" ||
			{ fail "$1: rows stored twice:"; diff "$WORK/got-facts" "$WORK/got-raw-facts" | head; }
	fi
}
# cursor DB TABLE: the shipped key of TABLE, or "none"
cursor() { sqlite3 "$1" "SELECT coalesce((SELECT last_key FROM ship_cursors WHERE tbl = '$2'), 'none')"; }

# The roll-ups of a database as its own GROUP BY, written here apart from
# common/rollup.c: final 10-minute buckets (the boot has an interval
# starting at or after the bucket's end, or a later boot exists; every
# interval analyzed), per host "table machine_id buckets intervals lost
# hitm samples work" (fleetgen's rows measure HITM and work together).
G=600000000000
ROLLUP_CTE="WITH f AS (SELECT b.boot_id, h.machine_id,
	    min(CASE WHEN EXISTS (SELECT 1 FROM boots l WHERE l.host_id = b.host_id
	                          AND l.first_seen_ns > b.first_seen_ns) THEN 9000000000000000000
	        ELSE (SELECT max(start_ns) FROM intervals x WHERE x.boot_id = b.boot_id) END,
	        coalesce((SELECT min(start_ns) FROM intervals x WHERE x.boot_id = b.boot_id
	                  AND x.interval_id > coalesce(a.last_interval_id, -1)), 9000000000000000000)) AS u
	    FROM boots b JOIN hosts h USING (host_id) LEFT JOIN analysis_state a USING (boot_id)),
	  k AS (SELECT i.*, f.machine_id, i.start_ns / $G * $G AS bucket FROM intervals i JOIN f USING (boot_id)
	        WHERE i.start_ns / $G * $G + $G <= f.u)"
sqlite_rollups() {
	sqlite3 -batch -noheader -separator ' ' "$1" "
	$ROLLUP_CTE
	SELECT 'interval_rollup', machine_id, count(DISTINCT boot_id || '/' || bucket), count(*), sum(events_lost)
	  FROM k GROUP BY machine_id;
	$ROLLUP_CTE
	SELECT 'path_rollup', machine_id, count(DISTINCT boot_id || '/' || bucket || '/' || path),
	  coalesce(sum(p.lcl_hitm + p.rmt_hitm + p.peer), 0), coalesce(sum(p.samples), 0),
	  CAST(round(coalesce(sum(p.work), 0)) AS INTEGER)
	  FROM path_intervals p JOIN k USING (interval_id) GROUP BY machine_id;"
}
# The same from the cluster: FINAL (in a subquery: 18.16's FINAL over a
# Distributed table wants the version column selected), or raw (FINAL='').
cluster_rollups() {
	ids=$(sqlite3 "$1" "SELECT group_concat(quote(machine_id), ',') FROM hosts")
	chq "SELECT 'interval_rollup', machine_id, count(), sum(intervals), sum(events_lost)
	     FROM (SELECT * FROM $DBNAME.interval_rollup $2 WHERE grain_s = 600 AND machine_id IN ($ids))
	     GROUP BY machine_id FORMAT TSV" | tr '\t' ' '
	chq "SELECT 'path_rollup', machine_id, count(), ifNull(sum(hitm), 0), ifNull(sum(samples), 0),
	     toInt64(round(ifNull(sum(work), 0)))
	     FROM (SELECT * FROM $DBNAME.path_rollup $2 WHERE grain_s = 600 AND machine_id IN ($ids))
	     GROUP BY machine_id FORMAT TSV" | tr '\t' ' '
}
# same_rollups WHAT DB...: the cluster's roll-ups of the hosts are SQLite's
same_rollups() {
	what=$1; shift
	for d in "$@"; do sqlite_rollups "$d"; done | sort > "$WORK/want-r"
	for d in "$@"; do cluster_rollups "$d" FINAL; done | sort > "$WORK/got-r"
	if [ -s "$WORK/want-r" ] && cmp -s "$WORK/want-r" "$WORK/got-r"; then
		pass "$what: the cluster's roll-ups are SQLite's GROUP BY ($(awk '$1 == "path_rollup" { n += $3 } END { print n }' "$WORK/want-r") path buckets)"
	else
		fail "$what: roll-ups differ from SQLite's GROUP BY:"; diff "$WORK/want-r" "$WORK/got-r" | head -10
	fi
}

# --- real databases ---------------------------------------------------------

# Two recordings of this machine by mmhitmd; the first is shipped while
# the daemon still writes into it.
i=0
for n in a b; do
	"$O/mmhitmd" --foreground --db "$WORK/daemon-$n.db" --interval 1s --record-mode continuous \
		--instance "mmhitm-ship-$n-$$" --metrics-file "" 2>"$WORK/daemon-$n.log" &
	eval "DPID_$n=$!"
done
trap 'kill $DPID_a $DPID_b 2>/dev/null; ch_stop' EXIT
enough() { [ "$(sqlite3 "$1" 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0)" -ge "$2" ]; }
wait_until 90 enough "$WORK/daemon-a.db" 3 || { cat "$WORK/daemon-a.log"; fail "mmhitmd wrote no intervals"; finish; }
ship "$WORK/daemon-a.db" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship while mmhitmd records"; }
first=$(cursor "$WORK/daemon-a.db" intervals)
wait_until 90 sh -c "[ \$(sqlite3 '$WORK/daemon-a.db' 'SELECT max(interval_id) FROM intervals') -gt $first ]" ||
	fail "mmhitmd wrote nothing after the first ship"
kill -TERM $DPID_a $DPID_b; wait $DPID_a; wait $DPID_b
enough "$WORK/daemon-b.db" 1 || { cat "$WORK/daemon-b.log"; fail "the second mmhitmd wrote no intervals"; }
# The second recording stands for another host: same machine, same boot
# would be the same rows in the cluster.
sqlite3 "$WORK/daemon-b.db" "UPDATE hosts SET machine_id = 'b' || machine_id" || fail "renaming host b"
for n in a b; do
	ship "$WORK/daemon-$n.db" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship daemon-$n.db"; }
	same_rows "mmhitmd's database $n" "$WORK/daemon-$n.db"
done
check "real recordings have event counts in the cluster" \
	"$(chq "SELECT count() FROM $DBNAME.event_counts FINAL")" -gt 0
check_str "the last interval's end is the cluster's" \
	"$(chq "SELECT max(end_ns) FROM $DBNAME.intervals FINAL WHERE machine_id = '$(sqlite3 "$WORK/daemon-a.db" \
	   'SELECT machine_id FROM hosts')'")" "$(sqlite3 "$WORK/daemon-a.db" 'SELECT max(end_ns) FROM intervals')"

# A real perf.data, imported and analyzed: typed HITM lines.
"$MMHITM" import "$(fixture perfdata_quipper_weight_struct_memloads.perf.data)" --db "$WORK/import.db" \
	>/dev/null 2>&1 || fail "import"
"$MMHITM" analyze --db "$WORK/import.db" >/dev/null 2>&1 || fail "analyze"
ship "$WORK/import.db" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship import.db"; }
same_rows "an imported perf.data" "$WORK/import.db"
check_str "its line sums are SQLite's" \
	"$(chq "SELECT sum(loads), sum(stores) FROM $DBNAME.hitm_lines FINAL WHERE machine_id IN
	   ($(sqlite3 "$WORK/import.db" "SELECT group_concat(quote(machine_id)) FROM hosts")) FORMAT CSV")" \
	"$(sqlite3 -csv "$WORK/import.db" "SELECT sum(l.loads), sum(l.stores) FROM line_attribution a
	   JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)")"

# --- a synthetic fleet --------------------------------------------------------

"$PY" tests/integration/fleetgen.py bench "$WORK/fleet" --hosts 20 --days 2 --interval 600 >/dev/null ||
	{ fail "fleetgen.py"; finish; }
for db in "$WORK"/fleet/host-*.db; do
	# Small batches: many inserts per table, each acknowledged on its own.
	ship "$db" --batch-rows 400 > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship $(basename "$db")"; }
done
check "a 20-host fleet: path_intervals went in several batches" \
	"$(sqlite3 "$WORK/fleet/host-0000.db" "SELECT batch FROM ship_cursors WHERE tbl = 'path_intervals'")" -ge 3
all_fleet() { for db in "$WORK"/fleet/host-*.db; do sqlite_counts "$db"; done; }
all_fleet | awk '$3 > 0' | sort > "$WORK/want"
for db in "$WORK"/fleet/host-*.db; do cluster_counts "$db" FINAL; done | sort > "$WORK/got"
cmp -s "$WORK/want" "$WORK/got" && pass "20 hosts: the cluster has every host's rows" ||
	{ fail "20 hosts: rows differ"; diff "$WORK/want" "$WORK/got" | head; }
check "the fleet spans both shards" \
	"$(chq "SELECT count(DISTINCT machine_id) FROM $DBNAME.intervals_local" "$CH_URL2")" -gt 0
check "... and on each shard" "$(chq "SELECT count(DISTINCT machine_id) FROM $DBNAME.intervals_local")" -gt 0
# A host's rows live on one shard only (sharded by host).
chq "SELECT DISTINCT machine_id FROM $DBNAME.intervals_local ORDER BY machine_id" > "$WORK/shard1"
chq "SELECT DISTINCT machine_id FROM $DBNAME.intervals_local ORDER BY machine_id" "$CH_URL2" > "$WORK/shard2"
check_str "no host on both shards" "$(comm -12 "$WORK/shard1" "$WORK/shard2" | wc -l)" 0
same_rollups "20 hosts" "$WORK"/fleet/host-*.db
check "... every host has buckets" "$(chq "SELECT count(DISTINCT machine_id) FROM $DBNAME.interval_rollup")" -ge 20
db=$WORK/fleet/host-0003.db
ship "$db" > "$WORK/out" 2>&1 || fail "a second ship"
check_str "a second run sends nothing" "$(awk '{ n += $2 } END { print n }' "$WORK/out")" 0

# --- killed between send and acknowledge ----------------------------------------

"$PY" tests/integration/fleetgen.py bench "$WORK/more" --hosts 3 --days 1 --interval 600 --seed 7 >/dev/null ||
	fail "fleetgen.py"
# Hosts of their own: fleetgen.py names hosts (and machine ids) by number.
for db in "$WORK"/more/host-*.db; do
	sqlite3 "$db" "UPDATE hosts SET machine_id = 'more' || machine_id" || fail "renaming hosts"
done
db=$WORK/more/host-0001.db
MMHITM_SHIP_FAULT=kill-after-send:path_intervals ship "$db" --batch-rows 100000 >/dev/null 2>&1
check_str "the fault kills ship" "$?" 137
check_str "intervals' cursor moved before" "$(cursor "$db" intervals)" \
	"$(sqlite3 "$db" 'SELECT max(interval_id) FROM intervals')"
check_str "path_intervals' cursor did not move" "$(cursor "$db" path_intervals)" none
ship "$db" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship after the kill"; }
same_rows "killed after send, shipped again" "$db" dups-ok
mid=$(sqlite3 "$db" "SELECT group_concat(quote(machine_id)) FROM hosts")
check_str "... path rows stored twice before merging (the resend happened)" \
	"$(chq "SELECT count() FROM $DBNAME.path_intervals WHERE machine_id IN ($mid)")" \
	"$(( 2 * $(sqlite3 "$db" 'SELECT count(*) FROM path_intervals') ))"
check_str "... the HITM sum with FINAL is SQLite's" \
	"$(chq "SELECT sum(lcl_hitm + rmt_hitm + peer) FROM $DBNAME.path_intervals FINAL WHERE machine_id IN ($mid)")" \
	"$(sqlite3 "$db" 'SELECT sum(lcl_hitm + rmt_hitm + peer) FROM path_intervals')"
for url in "$CH_URL" "$CH_URL2"; do
	chq "OPTIMIZE TABLE $DBNAME.path_intervals_local FINAL" "$url" || fail "OPTIMIZE on $url"
done
same_rows "after the merge" "$db"

# The roll-ups, killed the same way: after the cluster took path_rollup's
# batch, before its cursor moved.
"$PY" tests/integration/fleetgen.py bench "$WORK/roll" --hosts 1 --days 1 --interval 300 --seed 9 >/dev/null ||
	fail "fleetgen.py"
db=$WORK/roll/host-0000.db
sqlite3 "$db" "UPDATE hosts SET machine_id = 'roll' || machine_id" || fail "renaming the host"
MMHITM_SHIP_FAULT=kill-after-send:path_rollup ship "$db" >/dev/null 2>&1
check_str "the fault kills ship in path_rollup" "$?" 137
check "interval_rollup's cursor moved before" "$(cursor "$db" interval_rollup@600)" -gt 0
check_str "path_rollup's cursor did not move" "$(cursor "$db" path_rollup@600)" none
ship "$db" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship after the kill in path_rollup"; }
same_rollups "killed after sending path_rollup, shipped again" "$db"
mid=$(sqlite3 "$db" "SELECT group_concat(quote(machine_id)) FROM hosts")
n=$(chq "SELECT count() FROM (SELECT * FROM $DBNAME.path_rollup FINAL WHERE machine_id IN ($mid))")
check "... its buckets" "$n" -gt 100
check_str "... all sent again (the resend happened)" "$(awk '$1 == "path_rollup" { print $2 }' "$WORK/out")" "$n"
for url in "$CH_URL" "$CH_URL2"; do
	chq "OPTIMIZE TABLE $DBNAME.path_rollup_local FINAL" "$url" || fail "OPTIMIZE on $url"
done
check_str "... once after the merge" "$(chq "SELECT count() FROM $DBNAME.path_rollup WHERE machine_id IN ($mid)")" "$n"
ship "$db" > "$WORK/out" 2>&1 || fail "a third ship"
check_str "... and a run with nothing new sends no bucket" \
	"$(awk '/_rollup/ { n += $2 } END { print n + 0 }' "$WORK/out")" 0

# --- the cluster down -----------------------------------------------------------

db=$WORK/more/host-0002.db
# The shard its host goes to: Distributed's shard is the key modulo 2.
shard=$(( $(chq "SELECT cityHash64('$(sqlite3 "$db" 'SELECT machine_id FROM hosts')') % 2") + 1 ))
ch_down "$shard"
ship "$db" > "$WORK/out" 2>&1
check_str "shard $shard down: ship exits" "$?" 1
grep -q "ClickHouse did not take hosts.*Connection refused.*next run sends them again" "$WORK/out" &&
	pass "... saying why: $(grep -m1 'did not take' "$WORK/out" | cut -c1-150)" ||
	{ fail "no clear message:"; cat "$WORK/out"; }
grep -q "^intervals .* 0 rows in 0 batches, $(sqlite3 "$db" 'SELECT count(*) FROM intervals') waiting" \
	"$WORK/out" && pass "... and what waits" || { fail "what waits is not said:"; cat "$WORK/out"; }
check_str "... no cursor moved" "$(sqlite3 "$db" 'SELECT count(*) FROM ship_cursors')" 0
ch_up "$shard"
ship "$db" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship once the shard is back"; }
same_rows "the next run, shard back" "$db"

db=$WORK/more/host-0000.db
"$MMHITM" ship --config /dev/null --db "$db" --to http://127.0.0.1:1/ > "$WORK/out" 2>&1
check_str "no server: ship exits" "$?" 1
grep -q "Connection refused\|Couldn't connect\|Failed to connect" "$WORK/out" && pass "... saying so" ||
	{ fail "no server: unclear message"; cat "$WORK/out"; }
check_str "... no cursor moved" "$(sqlite3 "$db" 'SELECT count(*) FROM ship_cursors')" 0

# --- configuration and credentials ----------------------------------------------

printf 'shipper:s3cret\n' > "$WORK/cred"
chmod 644 "$WORK/cred"
printf 'ship_url = %s\nship_credentials = %s\n' "$TO" "$WORK/cred" > "$WORK/mmhitm.conf"
"$MMHITM" ship --config "$WORK/mmhitm.conf" --db "$db" > "$WORK/out" 2>&1
check_str "credentials others may read: exit" "$?" 1
grep -q "mode 0644 lets others read" "$WORK/out" && pass "... refused, saying why" || { fail "..."; cat "$WORK/out"; }
printf 'shipper:wrong\n' > "$WORK/cred"; chmod 600 "$WORK/cred"
"$MMHITM" ship --config "$WORK/mmhitm.conf" --db "$db" > "$WORK/out" 2>&1
check_str "a wrong password: exit" "$?" 1
grep -q "Permission denied.*Wrong password\|Wrong password" "$WORK/out" && pass "... ClickHouse's reason" ||
	{ fail "..."; cat "$WORK/out"; }
printf 'shipper:s3cret\n' > "$WORK/cred"
"$MMHITM" ship --config "$WORK/mmhitm.conf" --db "$db" > "$WORK/out" 2>&1 ||
	{ cat "$WORK/out"; fail "ship with ship_url and ship_credentials from the configuration"; }
same_rows "shipped as the configured user" "$db"

finish
