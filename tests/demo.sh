#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make demo: records this machine with mmhitmd while a load runs, then
# shows what the database holds. Usage: tests/demo.sh BUILD_DIR DB SECONDS
set -eu
O=$1 DB=$2 SECS=$3

[ "$(id -u)" = 0 ] || { echo "make demo needs root (tracefs, perf counting)" >&2; exit 1; }
mkdir -p "$(dirname "$DB")"
rm -f "$DB" "$DB-wal" "$DB-shm"

echo "== recording ${SECS}s into $DB (intervals of 5s) while a load runs"
"$O/mmhitmd" --foreground --db "$DB" --interval 5s --duration "${SECS}s" \
	--instance "mmhitm-demo-$$" &
DPID=$!
trap 'kill $DPID 2>/dev/null || true' INT TERM
sleep 2

# Load: the four paths' reproducers when built, else the test helper's.
if [ -x "$O/mmhitm-load" ]; then
	for sub in ctxswitch pwrite tlbflush; do
		"$O/mmhitm-load" $sub --duration 5 >/dev/null 2>&1 || true
	done
else
	H=$O/tests/mmhitm-test-helper
	[ -x "$H" ] || make -s "$H"
	"$H" fork 20 >/dev/null
	"$H" exec 10 >/dev/null
	"$H" activate 20000 >/dev/null
	"$H" pwrite 200000 >/dev/null
	"$H" dontneed 50000 >/dev/null
	"$H" yield 100000 >/dev/null
fi
wait $DPID

echo
"$O/mmhitm" status --db "$DB"
echo
echo "== per-interval event rates (view event_rates)"
sqlite3 -header -column "$DB" \
	"SELECT start, round(seconds, 1) AS s, event, method, count, round(stderr) AS stderr,
	        round(per_second) AS per_s, round(armed_share, 3) AS armed
	 FROM event_rates WHERE count > 0 ORDER BY interval_id, event"
echo
echo "== the recorder's own cost (view interval_summary)"
sqlite3 -header -column "$DB" \
	"SELECT start, round(seconds, 1) AS s, partial, learn_records, events_lost,
	        round(daemon_cpu_s * 1000, 1) AS cpu_ms, daemon_rss_kb, round(armed_share, 3) AS armed,
	        slices, round(est_cost_s * 1000, 1) AS window_cost_ms, window_note FROM interval_summary"
echo
echo "== mm_structs learned (view mm_structs), the latest 10"
sqlite3 -header -column "$DB" \
	"SELECT address, tgid, comm, learned_from, allocated, freed FROM mm_structs
	 ORDER BY first_seen_ns DESC LIMIT 10"
echo
echo "== vmemmap calibration (view vmemmap_calibration)"
sqlite3 -header -column "$DB" "SELECT boot_id, vmemmap_base, struct_page_size, pairs FROM vmemmap_calibration"
echo
echo "== before/after report"
"$O/mmhitm" report --db "$DB" --since -1h --before 1h --warmup 0 --no-progress \
	--html "$(dirname "$DB")/report.html" --json "$(dirname "$DB")/report.json"
echo
echo "database: $DB"
