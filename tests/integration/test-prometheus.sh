#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The fleet export end to end: mmhitmd writes its textfile, Debian's
# prometheus-node-exporter serves it, Debian's prometheus scrapes it on
# loopback, and a PromQL query answers what the database says.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs
command -v prometheus >/dev/null || skip "prometheus is not installed (make deps-test)"
command -v prometheus-node-exporter >/dev/null || skip "prometheus-node-exporter is not installed (make deps-test)"

WORK=$(mktemp -d /tmp/mmhitm-test-prom.XXXXXX)
DB=$WORK/t.db
mkdir "$WORK/textfiles" "$WORK/tsdb"
NE_PORT=$((20000 + $$ % 10000))
PROM_PORT=$((NE_PORT + 1))
trap 'kill $NE $PROM 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

prometheus-node-exporter --web.listen-address=127.0.0.1:$NE_PORT \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$WORK/textfiles" >"$WORK/ne.log" 2>&1 &
NE=$!
cat >"$WORK/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NE_PORT']
EOC
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address=127.0.0.1:$PROM_PORT >"$WORK/prom.log" 2>&1 &
PROM=$!

promql() {	# prints the first value of an instant query
	curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}

# Continuous: the 20,000 flushes below come in a burst of a few hundred
# milliseconds that windows would sample, not count; this checks the export.
"$O/mmhitmd" --foreground --record-mode continuous --db "$DB" --interval 1s \
	--instance mmhitm-test-prom-$$ \
	--metrics-file "$WORK/textfiles/mmhitm.prom" 2>"$WORK/daemon.log" &
DPID=$!
wait_recording 20 "$WORK/daemon.log"
"$HELPER" dontneed 20000 >/dev/null	# TLB flushes: P4's work
# Scraped at three intervals at least: the dashboard's rates need counters
# that moved between two scrapes.
t=300
while [ $t -gt 0 ]; do
	n=$(promql mmhitm_intervals_written_total 2>/dev/null)
	case "$n" in [3-9]|[1-9][0-9]*) break ;; esac
	sleep 0.1
	t=$((t - 1))
done
# Stopped once they are done, however long that took: the last row counts them.
kill -TERM $DPID
wait $DPID || { cat "$WORK/daemon.log"; exit 1; }
check "textfile written" "$(test -s "$WORK/textfiles/mmhitm.prom" && echo yes)" = yes
check "no temporary file left" "$(ls "$WORK/textfiles" | wc -l)" -eq 1

want_switch=$(q "SELECT sum(count) FROM event_rates WHERE event = 'sched:sched_switch'")
want_intervals=$(q 'SELECT count(*) FROM intervals')

# Wait for a scrape after the daemon's last write.
Q='mmhitm_intervals_written_total'
wait_until 30 sh -c "[ \"\$(curl -sf 'http://127.0.0.1:$PROM_PORT/api/v1/query' --data-urlencode 'query=$Q' |
	python3 -c 'import json,sys; r=json.load(sys.stdin)[\"data\"][\"result\"]; print(r[0][\"value\"][1] if r else 0)')\" = '$want_intervals' ]" ||
	{ tail -5 "$WORK/prom.log" "$WORK/ne.log"; }

check_str "PromQL: intervals written" "$(promql "$Q")" "$want_intervals"
check_str "PromQL: sched_switch hits = the database's sum" \
	"$(promql "mmhitm_tracepoint_hits_total{event=\"sched:sched_switch\",kernel=\"$(uname -r)\"}")" "$want_switch"
want_p4=$(q "SELECT CAST(sum(work) AS INTEGER) FROM path_intervals WHERE path = 'P4'")
patch=$(sed -n 's/^mmhitm_path_work_total{.*path="P4",patch="\([a-z]*\)"}.*/\1/p' "$WORK/textfiles/mmhitm.prom")
check_str "PromQL: P4's work (TLB flushes), labelled by patch state" \
	"$(promql "mmhitm_path_work_total{path=\"P4\",patch=\"$patch\",kernel=\"$(uname -r)\"}")" "$want_p4"
check "P4's work is real" "$want_p4" -ge 20000
check_str "PromQL: kernel and PMU labels" \
	"$(promql "count(mmhitm_info{kernel=\"$(uname -r)\",pmu=\"$(q 'SELECT pmu_kind FROM boots')\"})")" 1

# --- the Grafana dashboard (monitoring/mmhitm-dashboard.json) -------------------
# Grafana is not in Debian: its JSON's structure is checked here, and every
# panel's query runs against this Prometheus and must return data. This
# host has no memory-sampling PMU, so its daemon writes no HITM series;
# a stand-in host's file carries some (same HELP and TYPE as the daemon's,
# kernel "stand-in-pmu-host", each path's patch state this host's) so the
# HITM panel's query is run on data too: 1000 HITM per 500,000 units of
# work, 0.002, though this host's work (no HITM) has the same labels.
DASH=monitoring/mmhitm-dashboard.json
patch_of() { sed -n "s/^mmhitm_path_work_total{.*path=\"$1\",patch=\"\([a-z]*\)\".*/\1/p" "$WORK/textfiles/mmhitm.prom"; }
standin() {	# HITM WORK: the stand-in host's counters now
	{
		grep -A1 '^# HELP mmhitm_path_hitm_total ' "$WORK/textfiles/mmhitm.prom"
		for p in P1 P2 P3 P4; do
			echo "mmhitm_path_hitm_total{kernel=\"stand-in-pmu-host\",pmu=\"ibs_op\",lru_gen=\"enabled\",path=\"$p\",patch=\"$(patch_of $p)\",kind=\"local\"} $1"
		done
		grep -A1 '^# HELP mmhitm_path_work_total ' "$WORK/textfiles/mmhitm.prom"
		for p in P1 P2 P3 P4; do
			echo "mmhitm_path_work_total{kernel=\"stand-in-pmu-host\",pmu=\"ibs_op\",lru_gen=\"enabled\",path=\"$p\",patch=\"$(patch_of $p)\"} $2"
		done
	} >"$WORK/standin.tmp" && mv "$WORK/standin.tmp" "$WORK/textfiles/standin.prom"
	wait_until 20 sh -c "[ \"\$(curl -sf 'http://127.0.0.1:$PROM_PORT/api/v1/query' --data-urlencode 'query=max(mmhitm_path_hitm_total{kernel=\"stand-in-pmu-host\"})' |
		python3 -c 'import json,sys; r=json.load(sys.stdin)[\"data\"][\"result\"]; print(r[0][\"value\"][1] if r else 0)')\" = $1 ]" ||
		fail "the stand-in host's HITM $1 was not scraped"
}
standin 1000 500000
standin 2000 1000000
python3 - "$DASH" "$WORK/textfiles/mmhitm.prom" "$PROM_PORT" >"$WORK/dash.out" 2>&1 <<'EOP'
import json, re, sys, urllib.parse, urllib.request
dash, textfile, port = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(dash))
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
for k in ("title", "uid", "panels", "templating", "schemaVersion", "time"):
    need(k in d, "dashboard lacks " + k)
names = [v["name"] for v in d["templating"]["list"]]
need(names == ["datasource", "instance"], "template variables: %s" % names)
ids = [p["id"] for p in d["panels"]]
need(len(ids) == len(set(ids)), "panel ids repeat")
cells = set()
written = set(re.findall(r"^(mmhitm_[a-z_]+)[ {]", open(textfile).read(), re.M))
for p in d["panels"]:
    t = p.get("title", "?")
    for k in ("type", "title", "description", "gridPos", "targets", "datasource"):
        need(k in p, "%s: no %s" % (t, k))
    g = p["gridPos"]
    need(g["x"] + g["w"] <= 24, "%s: wider than the grid" % t)
    for y in range(g["y"], g["y"] + g["h"]):
        for x in range(g["x"], g["x"] + g["w"]):
            need((x, y) not in cells, "%s: overlaps another panel" % t)
            cells.add((x, y))
    need(p["datasource"].get("uid") == "${datasource}", "%s: not on the datasource variable" % t)
    for tg in p["targets"]:
        e = tg["expr"]
        for m in set(re.findall(r"mmhitm_[a-z_]+", e)):
            need(m in written or m == "mmhitm_path_hitm_total", "%s: no daemon writes %s" % (t, m))
        need('instance=~"$instance"' in e, "%s: not filtered by $instance" % t)
        q = e.replace("$instance", ".*").replace("$__rate_interval", "30s")
        url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
        r = json.load(urllib.request.urlopen(url))
        res = r["data"]["result"] if r.get("status") == "success" else []
        vals = [x["value"][1] for x in res]
        print("%-50s %d series %s" % (t[:50], len(res), vals[:3]))
        need(res and any(v not in ("NaN", "+Inf", "-Inf") for v in vals), "%s: no data for %s" % (t, q))
        if "mmhitm_path_hitm_total" in e:
            need(all(abs(float(v) - 0.002) < 1e-9 for v in vals),
                 "%s: %s, not 0.002: work without HITM in the ratio" % (t, vals))
print("panels %d" % len(d["panels"]))
for b in bad:
    print("BAD: " + b)
sys.exit(1 if bad else 0)
EOP
rc=$?
sed 's/^/  /' "$WORK/dash.out"
check "the dashboard's structure, and data for every panel's query" "$rc" -eq 0
finish
