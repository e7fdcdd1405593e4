#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fleetgen.py --clickhouse loads a synthetic fleet straight into the
# cluster with exactly what `mmhitm ship` sends for the same hosts' SQLite
# files: the mixed fleet (a rollback, a host without PMU, gaps, lost
# events, a hostname with quotes and markup) is loaded into one database
# and its files shipped into another, on two real shards; every table the
# generator fills (hosts, boots, ksyms, hitm_lines, interval_rollup,
# path_rollup) then holds the same rows in both, read with FINAL, batch
# aside. Twice: at the fleet's 10-minute intervals (one per bucket) and
# at 5 minutes (two per bucket). --sqlite-first N writes N files only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse-lib.sh"
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import numpy' 2>/dev/null || skip "python3-numpy is missing (make deps-test)"
MMHITM=$O/mmhitm
[ -x "$MMHITM" ] || { echo "FAIL: $MMHITM is not built"; exit 1; }

ch_start
WORK=$CH_DIR/work
mkdir -p "$WORK"
TABLES="hosts boots ksyms hitm_lines interval_rollup path_rollup"

# same DB_A DB_B WHAT: every generated table has the same rows in both
same() {
	for t in $TABLES; do
		cols=$(chq "DESCRIBE TABLE $1.$t" | awk '$1 != "batch" { printf "%s%s", s, $1; s = ", " }')
		chq "SELECT $cols FROM $1.$t FINAL WHERE 1 ORDER BY $cols" > "$WORK/a"
		chq "SELECT $cols FROM $2.$t FINAL WHERE 1 ORDER BY $cols" > "$WORK/b"
		n=$(wc -l < "$WORK/a")
		if [ "$n" -gt 0 ] && cmp -s "$WORK/a" "$WORK/b"; then
			pass "$3: $t: the load's $n rows are what ship sends"
		else
			fail "$3: $t differs (loaded < > shipped, $n rows):"; diff "$WORK/a" "$WORK/b" | head -6
		fi
	done
}

run=0
for interval in 600 300; do
	run=$((run + 1))
	gen=gen$run shp=shp$run
	for url in "$CH_URL" "$CH_URL2"; do
		for d in $gen $shp; do
			"$MMHITM" ship --config /dev/null --init --to "$url/?database=$d" >/dev/null 2>&1 ||
				{ fail "ship --init $d on $url"; finish; }
		done
	done
	"$PY" tests/integration/fleetgen.py mixed "$WORK/f$run" --interval "$interval" \
		--clickhouse "$CH_URL/?database=$gen" >/dev/null 2>"$WORK/gen.err" ||
		{ cat "$WORK/gen.err"; fail "fleetgen.py --clickhouse"; finish; }
	for db in "$WORK/f$run"/*.db; do
		"$MMHITM" ship --config /dev/null --db "$db" --to "$CH_URL/?database=$shp" >"$WORK/out" 2>&1 ||
			{ cat "$WORK/out"; fail "ship $(basename "$db")"; }
	done
	same $gen $shp "mixed fleet at ${interval}s intervals"
done
check "the 5-minute fleet's buckets hold two intervals" \
	"$(chq "SELECT max(intervals) FROM gen2.interval_rollup FINAL")" -eq 2
check_str "the host without a PMU has buckets with work and no HITM" \
	"$(chq "SELECT count() > 0 FROM gen1.path_rollup FINAL WHERE path = 'P1' AND isNull(hitm) AND work > 0")" 1

"$PY" tests/integration/fleetgen.py bench "$WORK/sub" --hosts 7 --days 1 --interval 600 --sqlite-first 3 \
	--clickhouse "$CH_URL/?database=gen1" >/dev/null 2>&1 || fail "fleetgen.py --sqlite-first"
check_str "--sqlite-first 3: three files" "$(ls "$WORK/sub"/*.db | wc -l)" 3
check_str "... and seven hosts in the cluster" \
	"$(chq "SELECT count() FROM gen1.hosts FINAL WHERE hostname LIKE 'host-%'")" 7
finish
