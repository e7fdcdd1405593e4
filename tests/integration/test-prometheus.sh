#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The fleet export end to end: mmhitmd writes its textfile, Debian's
# prometheus-node-exporter serves it, Debian's prometheus scrapes it on
# loopback, and a PromQL query answers what the database says.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs
command -v prometheus >/dev/null || skip "prometheus is not installed (make deps)"
command -v prometheus-node-exporter >/dev/null || skip "prometheus-node-exporter is not installed (make deps)"

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

# Continuous: the 20,000 flushes below come in a burst of a few hundred
# milliseconds that windows would sample, not count; this checks the export.
"$O/mmhitmd" --foreground --record-mode continuous --db "$DB" --interval 1s \
	--instance mmhitm-test-prom-$$ \
	--metrics-file "$WORK/textfiles/mmhitm.prom" 2>"$WORK/daemon.log" &
DPID=$!
wait_until 20 sh -c "sqlite3 '$DB' 'SELECT count(*) FROM boot_events' 2>/dev/null | grep -qv '^0$'"
"$HELPER" dontneed 20000 >/dev/null	# TLB flushes: P4's work
# Stopped once they are done, however long that took: the last row counts them.
kill -TERM $DPID
wait $DPID || { cat "$WORK/daemon.log"; exit 1; }
check "textfile written" "$(test -s "$WORK/textfiles/mmhitm.prom" && echo yes)" = yes
check "no temporary file left" "$(ls "$WORK/textfiles" | wc -l)" -eq 1

want_switch=$(q "SELECT sum(count) FROM event_rates WHERE event = 'sched:sched_switch'")
want_intervals=$(q 'SELECT count(*) FROM intervals')

promql() {	# prints the first value of an instant query
	curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}
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
finish
