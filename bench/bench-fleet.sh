#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench-fleet: the fleet at scale on ClickHouse (not part of make check).
#
#   1. starts two clickhouse-server shards on loopback (the tests'
#      clickhouse-lib.sh: their own data directory, stopped at the end);
#   2. loads a synthetic fleet of BENCH_FLEET_HOSTS (10,000) hosts x a week
#      straight into the cluster with fleetgen.py --clickhouse (10-minute
#      intervals, so one interval per 600 s roll-up bucket), timed;
#   3. writes the first BENCH_FLEET_SUBSET (1,000) hosts of the same fleet
#      as SQLite files and into a database of their own in the cluster;
#   4. times `mmhitm ship` of BENCH_FLEET_SHIP (36) of those files: rows/s
#      and seconds per host;
#   5. times `mmhitm report` BENCH_FLEET_ROUNDS (3) times, interleaved: from
#      the cluster on every host, from the cluster on the subset, and from
#      the subset's SQLite files with --rollup 10m; prints the median wall
#      time and peak RSS (GNU time) with their range, and whether the two
#      sources' verdicts (and fleet changes, to rounding) agree.
#
# Needs clickhouse-server, python3-numpy and GNU time; about 15 minutes and
# a few GB in /tmp on a 2-core machine. The load average before and after
# is printed: on a shared machine the times are what it had to spare.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/clickhouse-lib.sh"
HOSTS=${BENCH_FLEET_HOSTS:-10000}
SUBSET=${BENCH_FLEET_SUBSET:-1000}
DAYS=${BENCH_FLEET_DAYS:-3.5}       # the report's range; the data spans twice that
ROUNDS=${BENCH_FLEET_ROUNDS:-3}
SHIP=${BENCH_FLEET_SHIP:-36}
PY=${PYTHON:-/usr/bin/python3}
MMHITM=$O/mmhitm
[ -x "$MMHITM" ] || { echo "build first: make" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "needs python3-numpy" >&2; exit 1; }

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
load_avg() { cut -d' ' -f1-3 /proc/loadavg; }
echo "bench-fleet: $(nproc) CPUs, load average $(load_avg) at the start"

# A server the size of a small production shard, not of the tests' (1 GiB).
CH_SERVER_MEMORY=${CH_SERVER_MEMORY:-4294967296}
CH_QUERY_MEMORY=${CH_QUERY_MEMORY:-2147483648}
ch_start
W=$CH_DIR/work
mkdir -p "$W"
for url in "$CH_URL" "$CH_URL2"; do
	for d in fleet sub shipped; do
		"$MMHITM" ship --config /dev/null --init --to "$url/?database=$d" >/dev/null 2>&1 ||
			{ echo "ship --init $d on $url failed" >&2; exit 1; }
	done
done
ch() { echo "clickhouse://127.0.0.1:$CH_HTTP1/$1"; }

# --- the fleet, straight into the cluster -------------------------------------

t0=$(now)
"$PY" tests/integration/fleetgen.py bench "$W/none" --hosts "$HOSTS" --days "$DAYS" --interval 600 \
	--sqlite-first 0 --clickhouse "$CH_URL/?database=fleet" > "$W/range" 2> "$W/load.txt" ||
	{ cat "$W/load.txt"; echo "loading the fleet failed" >&2; exit 1; }
t1=$(now)
rows=$(awk '{ n += $2 } END { print n }' "$W/load.txt")
buckets=$(awk '$1 == "interval_rollup:" { print $2 }' "$W/load.txt")
prows=$(awk '$1 == "path_rollup:" { print $2 }' "$W/load.txt")
load_s=$(secs "$t0" "$t1")
range=$(sed 's/since=/--since /; s/ until=/ --until /' "$W/range")
echo "loaded $HOSTS hosts x $(awk -v d="$DAYS" 'BEGIN { print 2 * d }') days: $buckets buckets, $prows path rows" \
	"($rows rows in all) in $load_s s, $(awk -v r="$rows" -v s="$load_s" 'BEGIN { printf "%.0f", r / s }') rows/s"

# --- the subset: SQLite files and a database of its own ------------------------

t0=$(now)
"$PY" tests/integration/fleetgen.py bench "$W/sub" --hosts "$SUBSET" --days "$DAYS" --interval 600 \
	--clickhouse "$CH_URL/?database=sub" > /dev/null 2> "$W/sub.txt" ||
	{ cat "$W/sub.txt"; echo "the subset failed" >&2; exit 1; }
echo "subset: $SUBSET hosts as SQLite files ($(du -sh "$W/sub" | cut -f1)) and into the cluster in" \
	"$(secs "$t0" "$(now)") s"

# --- ship ------------------------------------------------------------------------

: > "$W/ship.txt"
i=0
for db in "$W"/sub/host-*.db; do
	[ $i -lt "$SHIP" ] || break
	i=$((i + 1))
	t0=$(now)
	"$MMHITM" ship --config /dev/null --db "$db" --to "$CH_URL/?database=shipped" > "$W/out" 2>&1 ||
		{ cat "$W/out"; echo "ship $db failed" >&2; exit 1; }
	echo "$(secs "$t0" "$(now)") $(awk '{ n += $2 } END { print n }' "$W/out")" >> "$W/ship.txt"
done
# (medians from sorted input: no gawk needed)
sort -n "$W/ship.txt" | awk '{ s += $1; r += $2; v[NR] = $1 } END {
	n = NR; med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	printf "ship: %d hosts, %d rows in %.1f s: %.0f rows/s, %.2f s per host (median %.2f, %.2f-%.2f)\n",
		n, r, s, r / s, s / n, med, v[1], v[n] }'

# --- the report, interleaved rounds -------------------------------------------------

# run NAME ARGS...: one timed report; appends "wall_s rss_kib" to $W/NAME.runs
run() {
	name=$1; shift
	if /usr/bin/time -f '%e %M' -o "$W/time" "$MMHITM" report --config /dev/null $range \
		--patches "$W/sub/patches.conf" --json --output "$W/$name.json" --quiet --no-progress "$@" \
		> "$W/$name.out" 2>&1; then
		tail -1 "$W/time" >> "$W/$name.runs"
	else
		echo "FAILED" >> "$W/$name.runs"
		cp "$W/$name.out" "$W/$name.err"
	fi
}
: > "$W/cluster-all.runs"; : > "$W/cluster-sub.runs"; : > "$W/sqlite-sub.runs"
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	run cluster-all --source "$(ch fleet)"
	run cluster-sub --source "$(ch sub)"
	run sqlite-sub --rollup 10m --source "$W/sub/host-*.db"
done

# summary NAME LABEL: the median wall time and peak RSS with their range
summary() {
	if grep -q FAILED "$W/$1.runs"; then
		printf "%-34s not available: %s\n" "$2" "$(grep -m1 -v '^$' "$W/$1.err" | cut -c1-100)"
		return
	fi
	# median and range of column $1 of the runs
	med() { sort -n -k"$1","$1" "$W/$2.runs" | awk -v c="$1" '{ v[NR] = $c } END {
		n = NR; printf "%s %s %s", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[1], v[n] }'; }
	set -- "$1" "$2" $(med 1 "$1") $(med 2 "$1")
	awk -v label="$2" -v n="$(wc -l < "$W/$1.runs")" -v wm="$3" -v wl="$4" -v wh="$5" -v mm="$6" -v ml="$7" \
		-v mh="$8" 'BEGIN { printf "%-34s %6d %9.1f s (%5.1f-%5.1f) %8.0f MiB (%4.0f-%4.0f)\n", label, n,
		wm, wl, wh, mm / 1024, ml / 1024, mh / 1024 }'
}
echo
printf "%-34s %6s %24s %25s\n" "report" "rounds" "wall: median (range)" "peak RSS: median (range)"
summary cluster-all "cluster, $HOSTS hosts"
summary cluster-sub "cluster, $SUBSET hosts"
summary sqlite-sub "SQLite --rollup 10m, $SUBSET hosts"

if [ -s "$W/cluster-sub.json" ] && [ -s "$W/sqlite-sub.json" ] && ! grep -q FAILED "$W/cluster-sub.runs"; then
	"$PY" - "$W/cluster-sub.json" "$W/sqlite-sub.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
pa, pb = ({p["path"]: p for p in x["paths"]} for x in (a, b))
bad = []
for k in sorted(set(pa) | set(pb)):
    x, y = pa.get(k), pb.get(k)
    if not x or not y or x["verdict"] != y["verdict"]:
        bad.append("%s: %s vs %s" % (k, x and x["verdict"], y and y["verdict"]))
        continue
    cx, cy = (p["paired"]["change"] if p.get("paired") else None for p in (x, y))
    if (cx is None) != (cy is None) or (cx is not None and abs(cx - cy) > 1e-6 * max(1, abs(cy))):
        bad.append("%s: change %s vs %s" % (k, cx, cy))
print("verdicts, cluster vs SQLite on the subset: %s" % (
      "agree (" + ", ".join("%s %s" % (k, pa[k]["verdict"]) for k in sorted(pa)) + ")"
      if not bad else "DIFFER: " + "; ".join(bad)))
PY
else
	echo "verdicts: not compared (the cluster's report is not available)"
fi
echo "load average $(load_avg) at the end; data in $CH_DIR (removed now)"
