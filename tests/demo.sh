#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make demo: records this machine with mmhitmd while a load runs and shows
# what the database holds; then brings in what this machine cannot record
# itself, each from where it honestly comes from: the real perf recordings
# bundled in tests/fixtures/real (imported, their boots marked 'import'),
# and, where QEMU can run (DEMO_ROLLOUT=1, the default), a real kernel
# rollout, 6.1 then 6.12, recorded by mmhitmd inside the guests. One report
# over the three says what it can, and why the rest cannot be judged.
# Then, so that a newcomer sees what an answer looks like, a simulated
# fleet (tests/integration/fleetgen.py: 40 generated hosts, a week before
# and after a rollout, constructed effects, drifting levels), labelled
# simulated here and in its report; the last lines are its verdicts, with
# their intervals beside the effects that were put in.
# Usage: tests/demo.sh BUILD_DIR DB SECONDS
set -eu
O=$1 DB=$2 SECS=$3
DIR=$(dirname "$DB")
TOP=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}

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
echo "== the real recordings in tests/fixtures/real, imported (source 'import')"
IMPORTED=$DIR/imported.db
rm -f "$IMPORTED" "$IMPORTED-wal" "$IMPORTED-shm"
for f in "$TOP"/tests/fixtures/real/*.perf.data; do
	# the hostname in each file names its host; the boot is marked imported
	"$O/mmhitm" import --db "$IMPORTED" "$f" 2>&1 | sed 's/^/    /' || true
done
"$O/mmhitm" analyze --db "$IMPORTED" >/dev/null 2>&1 || true
"$O/mmhitm" top --db "$IMPORTED" --since @0 --all --limit 5 --no-detail 2>&1 | sed -n '1,30p'
echo

dbs="$DB $IMPORTED"
ROLLOUT_DB=$DIR/rollout/db/mmhitm.db
if [ "${DEMO_ROLLOUT:-1}" = 1 ]; then
	echo "== a real kernel rollout under QEMU: Debian 6.1, then 6.12 (DEMO_ROLLOUT=0 skips it)"
	if O=$O ROLLOUT_DIR=$DIR/rollout sh "$TOP/tests/kernels/test-rollout.sh" >"$DIR/rollout.log" 2>&1 &&
	   [ -f "$ROLLOUT_DB" ]; then
		dbs="$dbs $ROLLOUT_DB"
		echo "    recorded: $ROLLOUT_DB (log: $DIR/rollout.log)"
	else
		echo "    not here: $(grep -m1 -E '^(SKIP|FAIL)' "$DIR/rollout.log" || tail -n1 "$DIR/rollout.log")"
	fi
	echo
fi

echo "== before/after report over what was recorded: this machine, the imports and the rollout"
# The newest data sets the range's end; a week before it covers all three.
# shellcheck disable=SC2086
"$O/mmhitm" report $dbs --before 1h --after 1h --warmup 0 --no-progress --quiet \
	--html "$DIR/report.html" --json --output "$DIR/report.json" || true
if [ -f "$DIR/report.json" ]; then
	python3 - "$DIR/report.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["paths"]:
    print("  %s %-18s %s" % (p["path"], p["verdict"], p.get("reason", "")))
PY
fi
echo "  HTML report: $DIR/report.html"
echo "  databases: $dbs"
echo

# P2 and P4 get no effect: the report must not find one there.
SIM=$DIR/simulated
EFFECT=P1=-0.3,P3=0.15
echo "== SIMULATED: a generated fleet, not a recording (tests/integration/fleetgen.py drift)"
echo "   40 hosts: 20 roll 6.1 -> 6.12-mmfix over a day, 20 keep 6.1; a week before and after;"
echo "   each host's level drifts day to day; effects put in: $EFFECT, none on P2 and P4"
rm -rf "$SIM" "$DIR"/simulated.*
t0=$(date +%s)
if range=$("$PY" "$TOP/tests/integration/fleetgen.py" drift "$SIM" --hosts 20 --effect "$EFFECT" \
		2>"$DIR/fleetgen.log"); then
	echo "   generated in $(($(date +%s) - t0)) s into $SIM/"
	# "since=@S until=@U" -> --since @S --until @U
	# shellcheck disable=SC2046
	"$O/mmhitm" report "$SIM"/*.db $(echo "$range" | sed 's/since=/--since /; s/ until=/ --until /') \
		--patches "$SIM/patches.conf" --no-progress --html "$DIR/simulated.html" \
		--json --output "$DIR/simulated.json" >"$DIR/simulated.txt" || true
	echo "   HTML report: $DIR/simulated.html"
	echo
	grep '^simulated data:' "$DIR/simulated.txt" || true
	[ -f "$DIR/simulated.json" ] && "$PY" - "$DIR/simulated.json" "$EFFECT" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
put = dict(e.split("=") for e in sys.argv[2].split(","))
pct = lambda v: "%+.1f %%" % (100 * v) if isinstance(v, (int, float)) else str(v)
# The answer per path, with the interval that decided it (90 % for "no change")
for path, a in r["summary"]["paths"].items():
    ci = ("%g %% CI %s .. %s" % (100 * a["ci_level"], pct(a["ci_low"]), pct(a["ci_high"]))
          if isinstance(a["ci_level"], (int, float)) else "no interval")
    truth = pct(float(put[path])) if path in put else "none"
    print("  %s %-18s %9s  %-30s (put in: %s)" % (path, a["verdict"], pct(a["change"]), ci, truth))
PY
else
	echo "   not here: $(tail -n1 "$DIR/fleetgen.log") (make deps installs python3-numpy)"
fi
