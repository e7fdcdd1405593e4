#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm report --source clickhouse:// against the SQLite files it came
# from, on a real two-shard cluster (Debian's clickhouse-server, two
# servers on loopback started and stopped here, as test-ship.sh).
#
# Shipped: the constructed `mixed` fleet (24 hosts, 10-minute intervals,
# SQLite files), a database mmhitmd writes here, and an imported, analyzed
# real perf.data (typed lines). Then:
#   - the cluster's report (roll-ups at 10 minutes) equals
#     `report --rollup 10m` of the files: every verdict, reason, estimate,
#     interval bound, count, host list, series and top line
#     (tests/integration/report-compare.py; numbers to 1e-9 relative);
#   - the two real databases, shipped again at a 1 s grain into a second
#     database, equal `report --rollup 1s` of the files over their whole
#     range (real intervals and path rows);
#   - bench/window-stats.py's query computes every window statistic of
#     the cluster's report in the cluster, equal to the report's numbers,
#     and finds one of them changed;
#   - the comparison can fail: a report without one host, and one where a
#     single interval's HITM changed after shipping, are each caught, with
#     the first difference named;
#   - the report says where its numbers come from (parameters.source,
#     rollup_s) and refuses a cluster it cannot reach, saying why.
. "$(dirname "$0")/lib.sh"
# Ports of its own, so test-ship.sh's cluster (18123...) can run beside it.
CH_HTTP1=${CH_HTTP1:-18133}
CH_TCP1=${CH_TCP1:-19010}
CH_HTTP2=${CH_HTTP2:-28133}
CH_TCP2=${CH_TCP2:-29010}
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
HOSTPORT=127.0.0.1:$CH_HTTP1
# never the host's /etc/mmhitm/mmhitm.conf: ship_rollup is its default, 10m
ship() { d=$1; db=$2; shift 2; "$MMHITM" ship --config /dev/null --db "$d" --to "$CH_URL/?database=$db" "$@"; }
report() { "$MMHITM" report --config /dev/null --no-progress --quiet "$@"; }
compare() { "$PY" tests/integration/report-compare.py "$@"; }

for db in mmr real; do
	for url in "$CH_URL" "$CH_URL2"; do
		"$MMHITM" ship --config /dev/null --init --to "$url/?database=$db" 2>/dev/null ||
			{ fail "ship --init $db on $url"; finish; }
	done
done

# --- the databases ----------------------------------------------------------------

"$PY" tests/integration/fleetgen.py mixed "$WORK/fleet" --interval 600 > "$WORK/range" ||
	{ fail "fleetgen.py mixed"; finish; }
RANGE=$(sed 's/since=/--since /; s/ until=/ --until /' "$WORK/range")
PATCHES=$WORK/fleet/patches.conf

# mmhitmd records this machine for a few 1 s intervals.
"$O/mmhitmd" --foreground --db "$WORK/daemon.db" --interval 1s --record-mode continuous \
	--instance "mmhitm-rch-$$" --metrics-file "" --duration 8s 2>"$WORK/daemon.log" ||
	{ cat "$WORK/daemon.log"; fail "mmhitmd"; finish; }
check "mmhitmd wrote intervals" "$(sqlite3 "$WORK/daemon.db" 'SELECT count(*) FROM intervals')" -ge 4
"$MMHITM" analyze --db "$WORK/daemon.db" >/dev/null 2>&1 || fail "analyze daemon.db"
# A real perf.data, imported and analyzed: typed, graded HITM lines.
"$MMHITM" import "$(fixture perfdata_quipper_weight_struct_memloads.perf.data)" --db "$WORK/import.db" \
	>/dev/null 2>&1 || fail "import"
"$MMHITM" analyze --db "$WORK/import.db" >/dev/null 2>&1 || fail "analyze import.db"
check "the imported recording has attributed lines" \
	"$(sqlite3 "$WORK/import.db" 'SELECT count(*) FROM line_attribution')" -gt 0
REAL="$WORK/daemon.db $WORK/import.db"

for d in "$WORK"/fleet/*.db $REAL; do
	ship "$d" mmr > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship $d"; }
done
check_str "the cluster has every host" "$(chq "SELECT count() FROM (SELECT * FROM mmr.hosts FINAL)")" 26
check "... and their 10-minute roll-ups" \
	"$(chq "SELECT count(DISTINCT machine_id) FROM mmr.path_rollup WHERE grain_s = 600")" -ge 24
# Into a second database: everything again (the cursors are the file's).
for d in $REAL; do
	ship "$d" real --rollup 1s --resend > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ship $d --rollup 1s"; }
done
check "the real databases' 1 s roll-ups" \
	"$(chq "SELECT count() FROM real.interval_rollup WHERE grain_s = 1")" -ge 3

# --- the fleet: cluster against files ---------------------------------------------------

CH="clickhouse://$HOSTPORT/mmr"
# shellcheck disable=SC2086
report --source "$CH" $RANGE --patches "$PATCHES" --json --output "$WORK/ch.json" ||
	{ fail "report --source $CH"; finish; }
# shellcheck disable=SC2086
report --source "$WORK/fleet/*.db" --db "$WORK/daemon.db" "$WORK/import.db" --rollup 10m $RANGE \
	--patches "$PATCHES" --json --output "$WORK/files.json" || { fail "report --rollup 10m of the files"; finish; }
if compare "$WORK/ch.json" "$WORK/files.json" > "$WORK/cmp"; then
	pass "the cluster's report equals the files' --rollup 10m: $(cat "$WORK/cmp")"
else
	fail "the cluster's report differs from the files': $(cat "$WORK/cmp")"
fi
verdicts() { "$PY" -c 'import json, sys; print(" ".join(p["path"] + "=" + p["verdict"].replace(" ", "-")
	for p in json.load(open(sys.argv[1]))["paths"]))' "$1"; }
check "... top lines among them" "$("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(len(r["other_lines"]) + sum(len(p["top_lines"]) for p in r["paths"]))' "$WORK/ch.json")" -ge 20
check_str "... with the fleet's constructed verdicts" "$(verdicts "$WORK/ch.json")" \
	"P1=improved P2=improved P3=regressed P4=no-change"
check_str "... and says where they come from" \
	"$("$PY" -c 'import json, sys; p = json.load(open(sys.argv[1]))["parameters"]; print(p["source"], p["rollup_s"])' \
	   "$WORK/ch.json") $("$PY" -c 'import json, sys; p = json.load(open(sys.argv[1]))["parameters"];
print(p["source"], p["rollup_s"])' "$WORK/files.json")" "clickhouse 600 sqlite 600"
# The default grain of a cluster is ship_rollup's, 10m.
# shellcheck disable=SC2086
report --source "$CH" --rollup 10m $RANGE --patches "$PATCHES" --json --output "$WORK/ch10.json" &&
	compare "$WORK/ch.json" "$WORK/ch10.json" >/dev/null && pass "--rollup 10m is the cluster's default" ||
	fail "the cluster's default grain is not 10m"

# --- the comparison can fail ------------------------------------------------------------

# One host fewer on the files' side.
# shellcheck disable=SC2086
report $(ls "$WORK"/fleet/*.db | grep -v rolled-03) $REAL --rollup 10m $RANGE --patches "$PATCHES" \
	--json --output "$WORK/less.json" || fail "report without one host"
if compare "$WORK/ch.json" "$WORK/less.json" > "$WORK/cmp"; then
	fail "a host missing on one side is not caught"
else
	pass "a host missing is caught: $(cat "$WORK/cmp")"
fi
# One interval's HITM changed in one file after it was shipped: one bucket.
d=$WORK/fleet/steady-old-02.db
sqlite3 "$d" "UPDATE path_intervals SET lcl_hitm = lcl_hitm + 7 WHERE path = 'P1' AND interval_id =
	(SELECT max(interval_id) - 200 FROM intervals)" || fail "changing a row"
# shellcheck disable=SC2086
report "$WORK"/fleet/*.db $REAL --rollup 10m $RANGE --patches "$PATCHES" --json --output "$WORK/changed.json" ||
	fail "report of the changed files"
if compare "$WORK/ch.json" "$WORK/changed.json" > "$WORK/cmp"; then
	fail "one bucket's changed HITM is not caught"
else
	pass "one changed bucket is caught: $(cat "$WORK/cmp")"
fi

# --- the windows' statistics, computed in the cluster ----------------------------------
# bench/window-stats.py asks the cluster, per host, path and window of the
# report, for what the report computes from the buckets (issue 30's
# aggregates, on 18.16): every number must equal the report's, and one
# number of the report changed must be found.
if "$PY" bench/window-stats.py "$CH_URL" mmr "$WORK/ch.json" common/paths.conf > "$WORK/ws" 2>&1; then
	pass "the windows' statistics computed in the cluster equal the report's: $(head -1 "$WORK/ws")"
else
	fail "the windows' statistics computed in the cluster: $(head -3 "$WORK/ws")"
fi
check "... over many numbers" "$(sed -n 's/^\([0-9]*\) numbers.*/\1/p' "$WORK/ws")" -ge 1000
"$PY" - "$WORK/ch.json" "$WORK/ws.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = next(c for h in r["hosts"] for p in h["paths"].values() for c in p["comparisons"] if c["before"]["n"])
c["before"]["median"] *= 1.001
json.dump(r, open(sys.argv[2], "w"))
PY
if "$PY" bench/window-stats.py "$CH_URL" mmr "$WORK/ws.json" common/paths.conf > "$WORK/ws" 2>&1; then
	fail "a median changed by 0.1 % is not found"
else
	check_str "... and a median changed by 0.1 % is found" "$(sed -n 's/.* checked, \([0-9]*\) differ.*/\1/p' "$WORK/ws")" 1
fi

# --- real recordings, at 1 s ------------------------------------------------------------------

# Their whole range: the imported recording is years older than this run.
WIDE="--since 2000-01-01 --until @$(( $(date +%s) + 3600 ))"
# shellcheck disable=SC2086
report --source "clickhouse://$HOSTPORT/real" --rollup 1s $WIDE --min-intervals 2 --json --output "$WORK/real-ch.json" ||
	fail "report --source real"
# shellcheck disable=SC2086
report $REAL --rollup 1s $WIDE --min-intervals 2 --json --output "$WORK/real-files.json" || fail "report --rollup 1s"
if compare "$WORK/real-ch.json" "$WORK/real-files.json" > "$WORK/cmp"; then
	pass "real recordings: the cluster's report equals the files' --rollup 1s: $(cat "$WORK/cmp")"
else
	fail "real recordings differ: $(cat "$WORK/cmp")"
fi
check "... which count the recorded intervals" \
	"$("$PY" -c 'import json, sys; print(sum(h["quality"]["intervals"] for h in json.load(open(sys.argv[1]))["hosts"]))' \
	   "$WORK/real-ch.json")" -ge 3

# --- the weekly fleet report's unit --------------------------------------------------------------
# mmhitm-fleet-report.service's ExecStart, with fleet-report.env's
# variables expanded as systemd does (systemd.service(5), "Command lines"):
# ${VAR} one word, $VAR split at spaces. A new file per run, latest.*.
cat >"$WORK/fleet-report.env" <<EOF
MMHITM_SOURCE=$CH
MMHITM_REPORT_DIR=$WORK/fleet-reports
MMHITM_REPORT_ARGS=--config /dev/null --quiet --patches $PATCHES $RANGE
EOF
cmd=$(sed -n 's/^ExecStart=//p' systemd/mmhitm-fleet-report.service.in | sed "s|@BINDIR@|$O|")
(
	MMHITM_REPORT_DIR=/var/lib/mmhitm/fleet-reports	# the unit's Environment=
	set -a
	. "$WORK/fleet-report.env"
	set +a
	eval "set -- $(printf '%s' "$cmd" | sed 's/\${\([A-Z_]*\)}/"$\1"/g')"
	"$@"
) >"$WORK/unit.out" 2>&1 || fail "the fleet report unit's command: $(tail -3 "$WORK/unit.out")"
check "the fleet report unit wrote latest.html" "$(test -s "$WORK/fleet-reports/latest.html" && echo 1)" -eq 1
check_str "... and latest.json: the cluster's hosts" \
	"$("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["parameters"]["source"], len(r["hosts"]))' \
	   "$WORK/fleet-reports/latest.json" 2>&1)" "clickhouse 26"

# --- a cluster that cannot be read ---------------------------------------------------------------

report --source clickhouse://127.0.0.1:1/mmr --json --output "$WORK/x.json" > "$WORK/out" 2>&1
check "no server: report fails" "$?" -ne 0
grep -q "Connection refused\|Couldn't connect\|Failed to connect" "$WORK/out" && pass "... saying so" ||
	{ fail "no server: unclear message"; cat "$WORK/out"; }
report --source "clickhouse://$HOSTPORT/nosuchdb" --json --output "$WORK/x.json" > "$WORK/out" 2>&1
check "a database the cluster lacks: report fails" "$?" -ne 0
grep -q "nosuchdb" "$WORK/out" && pass "... naming it" || { fail "unclear message"; cat "$WORK/out"; }
report --source "$CH" --source "$WORK/daemon.db" > "$WORK/out" 2>&1
check_str "a cluster and files together: usage" "$?" 2

finish
