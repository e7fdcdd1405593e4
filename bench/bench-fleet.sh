#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench-fleet: the fleet at scale on ClickHouse (not part of make check).
#
#   1. starts two clickhouse-server shards on loopback (the tests'
#      clickhouse-lib.sh: their own data directory, stopped at the end);
#   2. loads a synthetic fleet of BENCH_FLEET_HOSTS (100,000) hosts x a week
#      straight into the cluster with fleetgen.py --clickhouse (10-minute
#      intervals, so one interval per 600 s roll-up bucket), timed, and
#      waits for the servers' merges to finish before anything is timed;
#   3. times what the report's statistics need, computed in the cluster
#      (per host, path and day or block, BENCH_FLEET_AGG_BATCH hosts a
#      query), against every path row as the report reads them today;
#      BENCH_FLEET_REPORTS=no stops here;
#   4. loads BENCH_FLEET_MIDDLE (10,000; 0: none) hosts into a database of
#      their own, and writes the first BENCH_FLEET_SUBSET (1,000) hosts as
#      SQLite files and into a third database;
#   5. times `mmhitm ship` of BENCH_FLEET_SHIP (36) of those files: rows/s
#      and seconds per host;
#   6. times `mmhitm report` interleaved: from the cluster on every host
#      (BENCH_FLEET_BIG_ROUNDS: 1 above 20,000 hosts), on the middle fleet
#      and on the subset, and from the subset's SQLite files with --rollup
#      10m, BENCH_FLEET_ROUNDS (3) times each; prints the median wall time,
#      peak RSS (GNU time) and the report's own CPU time with their range,
#      a table of how they grow with hosts, and whether the two sources'
#      verdicts (and fleet changes, to rounding) agree;
#   7. times bench/window-stats.py, the report's window statistics computed
#      in the cluster, on the middle fleet's report (with FINAL and
#      without) and checks them against it.
#
# Needs clickhouse-server, python3-numpy and GNU time. At 100,000 hosts
# about 75 minutes and 40 GB in /tmp on a 2-core machine (checked before
# the load); BENCH_FLEET_HOSTS=10000 BENCH_FLEET_MIDDLE=0 is the 15-minute
# run. The load average before and after is printed: on a shared machine
# the times are what it had to spare.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/clickhouse-lib.sh"
HOSTS=${BENCH_FLEET_HOSTS:-100000}
MIDDLE=${BENCH_FLEET_MIDDLE:-10000}
SUBSET=${BENCH_FLEET_SUBSET:-1000}
DAYS=${BENCH_FLEET_DAYS:-3.5}       # the report's range; the data spans twice that
ROUNDS=${BENCH_FLEET_ROUNDS:-3}
BIG_ROUNDS=${BENCH_FLEET_BIG_ROUNDS:-$([ "$HOSTS" -gt 20000 ] && echo 1 || echo "$ROUNDS")}
SHIP=${BENCH_FLEET_SHIP:-36}
PY=${PYTHON:-/usr/bin/python3}
MMHITM=$O/mmhitm
[ -x "$MMHITM" ] || { echo "build first: make" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "needs python3-numpy" >&2; exit 1; }
# the middle fleet lies strictly between the subset and the big one, or is none
{ [ "$MIDDLE" -lt "$HOSTS" ] && [ "$MIDDLE" -gt "$SUBSET" ]; } || MIDDLE=0
# About 300 KB a host on disk once merged (the 10,000-host week: 2.9 GB),
# more while parts wait for merges; the servers' data go to /tmp (ch_start).
need_mb=$(( (HOSTS + MIDDLE + SUBSET) * 35 / 100 ))
free_mb=$(df -Pm /tmp | awk 'NR == 2 { print $4 }')
[ "$free_mb" -ge "$need_mb" ] || { echo "bench-fleet: $HOSTS hosts need about $need_mb MB in" \
	"/tmp, which has $free_mb MB free (BENCH_FLEET_HOSTS sizes the fleet)" >&2; exit 1; }

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
	for d in fleet mid sub shipped; do
		"$MMHITM" ship --config /dev/null --init --to "$url/?database=$d" >/dev/null 2>&1 ||
			{ echo "ship --init $d on $url failed" >&2; exit 1; }
	done
done
ch() { echo "clickhouse://127.0.0.1:$CH_HTTP1/$1"; }
# settle: waits (at most 20 minutes) until neither server merges parts, so
# no background merge shares the CPUs with what is timed next; a server
# that does not answer with a count is said, not taken for an idle one
settle() {
	t0=$(now) i=0 m=
	while [ $i -lt 1200 ]; do
		m=0
		for url in "$CH_URL" "$CH_URL2"; do
			c=$(curl -fsS --max-time 30 "$url/" --data-binary "SELECT count() FROM system.merges" 2>&1)
			case $c in
			''|*[!0-9]*) echo "bench-fleet: $url did not say its merges: $(echo "$c" | head -c 200)" >&2
				m=unknown; break ;;
			esac
			m=$((m + c))
		done
		[ "$m" != 0 ] && [ "$m" != unknown ] || break
		sleep 5; i=$((i + 5))
	done
	if [ "$m" = 0 ]; then
		echo "merges done $(secs "$t0" "$(now)") s after the load (load average $(load_avg))"
	else
		echo "merges not seen done after $(secs "$t0" "$(now)") s (load average $(load_avg)): times may include them"
	fi
}

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
settle

# --- the statistics' inputs, computed in the cluster ----------------------------
#
# What the report could ask the cluster for instead of every bucket, timed
# against every path row as the report reads them (one query, all hosts;
# the report asks the same rows in batches of 256 hosts): per host, path and day the count, median and
# quartiles of the bucket rates, with FINAL (ReplacingMergeTree's
# de-duplication, as the report reads) and without; per host, path and
# half-week block around each host's change time, sent along as an
# external table (what the report's first pass would know), the count,
# median and 10 % trimmed mean (scipy's trim_mean). The Distributed table
# shards by machine_id, so each shard aggregates its own hosts
# (distributed_group_by_no_merge). BENCH_FLEET_AGG_ROUNDS (3) rounds,
# interleaved; BENCH_FLEET_REPORTS=no stops after this stage.

AGG_ROUNDS=${BENCH_FLEET_AGG_ROUNDS:-$([ "$HOSTS" -gt 20000 ] && echo 1 || echo 3)}
# The GROUP BY de-duplication takes minutes and spills at 10,000 hosts: not above 20,000.
DEDUP=$([ "$HOSTS" -gt 20000 ] && echo no || echo yes)
set -- $(sed 's/since=@//; s/ until=@/ /' "$W/range")
# (the report reads a week before the range's start too, warm-up included)
lo=$(( ($1 - 7 * 86400 - 600) * 1000000000 )) hi=$(( $2 * 1000000000 ))
# the rate of a bucket, as collect_bucket_rate(): HITM x per / work
per=$(awk '$1 == "path" { p = $2 } $1 == "per" { printf "%s%s", n++ ? "," : "", p ":" $2 }' \
	"$TOP/common/paths.conf")
paths=$(echo "$per" | tr ',' '\n' | sed "s/:.*//; s/.*/'&'/" | paste -sd, -)
pers=$(echo "$per" | tr ',' '\n' | sed 's/.*://; s/$/./' | paste -sd, -)
RATE="assumeNotNull(hitm) * transform(path, [$paths], [$pers], nan) / assumeNotNull(work)"
OK="hitm IS NOT NULL AND work IS NOT NULL AND work != 0"
WHERE="grain_s = 600 AND bucket_ns >= $lo AND bucket_ns < $hi AND path IN ($paths)"
# Each aggregate is asked for BENCH_FLEET_AGG_BATCH (10,000) hosts at a
# time, a range of the primary key: an exact quantile holds every value of
# its group until the group ends, and 100,000 hosts in one query would need
# over 2 GiB (the limit here, CH_QUERY_MEMORY).
AGG_BATCH=${BENCH_FLEET_AGG_BATCH:-10000}
range_of() { echo "machine_id >= '$1' AND machine_id <= '$2'"; }
agg_day() {	# FIRST LAST, FINAL or nothing
	echo "SELECT machine_id, path, intDiv(bucket_ns, 86400000000000) AS day, countIf($OK) AS n,
		quantilesExactIf(0.25, 0.5, 0.75)($RATE, $OK) AS q
	FROM fleet.path_rollup ${3:-} WHERE $WHERE AND $(range_of "$1" "$2")
	GROUP BY machine_id, path, day HAVING n > 0 FORMAT RowBinary"
}
agg_day_final() { agg_day "$1" "$2" FINAL; }
# the same, de-duplicated by a GROUP BY on the table's key instead of FINAL
# (over 2 GiB at 10,000 hosts: it may spill to disk past 1 GB)
agg_dedup() {	# FIRST LAST
	echo "SELECT machine_id, path, intDiv(bucket_ns, 86400000000000) AS day, countIf($OK) AS n,
		quantilesExactIf(0.25, 0.5, 0.75)($RATE, $OK) AS q
	FROM (SELECT machine_id, boot_uuid, bucket_ns, path, argMax(hitm, batch) AS hitm,
		argMax(work, batch) AS work FROM fleet.path_rollup WHERE $WHERE AND $(range_of "$1" "$2")
		GROUP BY machine_id, boot_uuid, bucket_ns, path)
	GROUP BY machine_id, path, day HAVING n > 0 FORMAT RowBinary"
}
# blocks of 2 days, 4 a side, from each host's change time
agg_block() {	# FIRST LAST
	echo "SELECT machine_id, path, intDiv(bucket_ns - change_ns + 345600000000000, 172800000000000) - 2 AS blk,
		countIf($OK) AS n,
		if(n % 2 = 1, s[intDiv(n, 2) + 1], (s[intDiv(n, 2)] + s[intDiv(n, 2) + 1]) / 2) AS med,
		arrayReduce('avg', arraySlice(arraySort(groupArrayIf($RATE, $OK)) AS s,
			(toUInt64(floor(0.1 * n)) AS k) + 1, n - 2 * k)) AS tmean
	FROM fleet.path_rollup FINAL GLOBAL ANY INNER JOIN changes USING machine_id
	WHERE $WHERE AND $(range_of "$1" "$2")
		AND bucket_ns >= change_ns - 345600000000000 AND bucket_ns < change_ns + 345600000000000
	GROUP BY machine_id, path, blk HAVING n > 0 FORMAT RowBinary"
}
# what the report reads today: every path row (other:mm_struct and
# unresolved too), its host and boot as a hash, in batches of 256 hosts
# (collect-ch.c's pass 2; one answer for all hosts stops at 2 GiB here)
all_rows() {	# FIRST LAST machine_id
	echo "SELECT cityHash64(machine_id, boot_uuid), bucket_ns, path, hitm, samples, work, work_seconds
	FROM (SELECT * FROM fleet.path_rollup FINAL WHERE grain_s = 600 AND bucket_ns >= $lo
	AND bucket_ns < $hi AND machine_id >= '$1' AND machine_id <= '$2') FORMAT RowBinary"
}
# each host's change time: its last boot's start, else the range's middle
curl -sS "$CH_URL/" --data-binary "SELECT machine_id, if(count() > 1, max(first_seen_ns),
	toInt64($(( (lo + hi) / 2 )))) FROM (SELECT * FROM fleet.boots FINAL) GROUP BY machine_id FORMAT TabSeparated" \
	-f > "$W/changes.tsv" || { echo "the change times failed" >&2; exit 1; }
echo "change times of $(wc -l < "$W/changes.tsv") hosts, e.g. $(head -1 "$W/changes.tsv")"
# agg NAME SQL [external] [SETTINGS]: appends "wall_s bytes" to $W/agg-NAME.runs;
# the result is counted, not kept (every path row is gigabytes)
agg() {
	u="$CH_URL/?distributed_group_by_no_merge=1${4:-}"
	if [ -n "${3:-}" ]; then	# multipart: the table as a file, the query in the URL
		set -- "$1" -F "changes=@$W/changes.tsv" "$u&changes_format=TabSeparated&changes_structure=$(
			urlenc 'machine_id String, change_ns Int64')&query=$(urlenc "$2")"
	else
		set -- "$1" --data-binary "$2" "$u"
	fi
	name=$1; shift
	curl -sS -w '%{stderr}%{http_code} %{time_total}\n' "$@" 2> "$W/agg.res" | wc -c > "$W/agg.bytes"
	read -r code wall < "$W/agg.res"
	if [ "$code" = 200 ]; then
		echo "$wall $(cat "$W/agg.bytes")" >> "$W/agg-$name.runs"
	else	# again, for what the server said
		curl -sS "$@" 2>&1 | head -c 300 > "$W/agg.err"
		echo "FAILED $code $(cat "$W/agg.err")" >> "$W/agg-$name.runs"
	fi
}
urlenc() { "$PY" -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
# batches N FILE: the hosts' machine_id ranges of N hosts, "first last" a line
batches() {	# in ClickHouse's order of the key: bytes
	cut -f1 "$W/changes.tsv" | LC_ALL=C sort | awk -v n="$1" 'NR % n == 1 { f = $1 } { l = $1 }
		NR % n == 0 { print f, l; f = "" } END { if (f != "") print f, l }' > "$2"
}
batches 256 "$W/batches"
batches "$AGG_BATCH" "$W/agg-batches"
# agg_batched NAME FUNC BATCHES [external] [SETTINGS]: FUNC FIRST LAST is a
# batch's query; the batches' walls and bytes summed into $W/agg-NAME.runs
agg_batched() {
	: > "$W/agg-batch.runs"
	while read -r first last; do
		agg batch "$($2 "$first" "$last")" "${4:-}" "${5:-}"
		! grep -q FAILED "$W/agg-batch.runs" || break	# one failure says it
	done < "$3"
	awk '$1 == "FAILED" { print; bad = 1; exit } { t += $1; b += $2 } END { if (!bad) printf "%.3f %.0f\n", t, b }' \
		"$W/agg-batch.runs" >> "$W/agg-$1.runs"
}
for n in all day day-nofinal day-dedup block; do : > "$W/agg-$n.runs"; done
r=0
while [ $r -lt "$AGG_ROUNDS" ]; do
	r=$((r + 1))
	agg_batched all all_rows "$W/batches"
	agg_batched day agg_day_final "$W/agg-batches"
	agg_batched day-nofinal agg_day "$W/agg-batches"
	[ "$DEDUP" = no ] ||
		agg_batched day-dedup agg_dedup "$W/agg-batches" "" "&max_bytes_before_external_group_by=1000000000"
	agg_batched block agg_block "$W/agg-batches" external
done
echo
printf "%-52s %6s %24s %12s\n" "in the cluster, $HOSTS hosts, $AGG_BATCH a query" "rounds" "wall: median (range)" "bytes out"
for n in all:"every path row, as the report reads (FINAL)" day:"per host, path and day (FINAL)" \
	day-nofinal:"per host, path and day (no FINAL)" \
	day-dedup:"per host, path and day (GROUP BY, no FINAL)" block:"per host, path and block, trimmed mean (FINAL)"; do
	if [ ! -s "$W/agg-${n%%:*}.runs" ]; then
		printf "%-52s not run (BENCH_FLEET_AGG_ROUNDS; the GROUP BY: not above 20,000 hosts)\n" "${n#*:}"
		continue
	fi
	if grep -q FAILED "$W/agg-${n%%:*}.runs"; then
		printf "%-52s failed: %s\n" "${n#*:}" "$(grep -m1 FAILED "$W/agg-${n%%:*}.runs" | cut -c1-120)"
		continue
	fi
	sort -n "$W/agg-${n%%:*}.runs" | awk -v label="${n#*:}" '{ v[NR] = $1; b = $2 } END {
		printf "%-52s %6d %9.1f s (%5.1f-%5.1f) %12.0f\n", label, NR,
			NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR], b }'
done
if [ "${BENCH_FLEET_REPORTS:-yes}" = no ]; then
	echo "load average $(load_avg) at the end; data in $CH_DIR (removed now)"
	exit 0
fi

# --- the middle fleet and the subset: SQLite files and databases of their own -----

if [ "$MIDDLE" -gt 0 ]; then
	t0=$(now)
	"$PY" tests/integration/fleetgen.py bench "$W/none" --hosts "$MIDDLE" --days "$DAYS" --interval 600 \
		--sqlite-first 0 --clickhouse "$CH_URL/?database=mid" > /dev/null 2> "$W/mid.txt" ||
		{ cat "$W/mid.txt"; echo "loading the middle fleet failed" >&2; exit 1; }
	echo "middle fleet: $MIDDLE hosts into the cluster in $(secs "$t0" "$(now)") s"
fi

t0=$(now)
"$PY" tests/integration/fleetgen.py bench "$W/sub" --hosts "$SUBSET" --days "$DAYS" --interval 600 \
	--clickhouse "$CH_URL/?database=sub" > /dev/null 2> "$W/sub.txt" ||
	{ cat "$W/sub.txt"; echo "the subset failed" >&2; exit 1; }
echo "subset: $SUBSET hosts as SQLite files ($(du -sh "$W/sub" | cut -f1)) and into the cluster in" \
	"$(secs "$t0" "$(now)") s"
settle

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
	if /usr/bin/time -f '%e %M %U %S' -o "$W/time" "$MMHITM" report --config /dev/null $range \
		--patches "$W/sub/patches.conf" --json --output "$W/$name.json" --quiet --no-progress "$@" \
		> "$W/$name.out" 2>&1; then
		tail -1 "$W/time" | awk '{ print $1, $2, $3 + $4 }' >> "$W/$name.runs"
	else
		echo "FAILED" >> "$W/$name.runs"
		cp "$W/$name.out" "$W/$name.err"
	fi
}
: > "$W/cluster-all.runs"; : > "$W/cluster-mid.runs"; : > "$W/cluster-sub.runs"; : > "$W/sqlite-sub.runs"
r=0
while [ $r -lt "$ROUNDS" ] || [ $r -lt "$BIG_ROUNDS" ]; do
	r=$((r + 1))
	[ $r -gt "$BIG_ROUNDS" ] || run cluster-all --source "$(ch fleet)"
	[ $r -gt "$ROUNDS" ] && continue
	[ "$MIDDLE" -eq 0 ] || run cluster-mid --source "$(ch mid)"
	run cluster-sub --source "$(ch sub)"
	run sqlite-sub --rollup 10m --source "$W/sub/host-*.db"
done

# summary NAME LABEL: the median wall time and peak RSS with their range
summary() {
	if [ ! -s "$W/$1.runs" ]; then
		printf "%-34s not run\n" "$2"
		return
	fi
	if grep -q FAILED "$W/$1.runs"; then
		printf "%-34s not available: %s\n" "$2" "$(grep -m1 -v '^$' "$W/$1.err" | cut -c1-100)"
		return
	fi
	# median and range of column $1 of the runs
	med() { sort -n -k"$1","$1" "$W/$2.runs" | awk -v c="$1" '{ v[NR] = $c } END {
		n = NR; printf "%s %s %s", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[1], v[n] }'; }
	set -- "$1" "$2" $(med 1 "$1") $(med 2 "$1") $(med 3 "$1")
	awk -v label="$2" -v n="$(wc -l < "$W/$1.runs")" -v wm="$3" -v wl="$4" -v wh="$5" -v mm="$6" -v ml="$7" \
		-v mh="$8" -v cm="$9" 'BEGIN { printf "%-34s %6d %9.1f s (%5.1f-%5.1f) %8.0f MiB (%4.0f-%4.0f) %8.1f s\n",
		label, n, wm, wl, wh, mm / 1024, ml / 1024, mh / 1024, cm }'
	echo "$3 $6 $9" > "$W/$1.med"
}
echo
printf "%-34s %6s %24s %25s %10s\n" "report" "rounds" "wall: median (range)" "peak RSS: median (range)" \
	"its CPU"
summary cluster-all "cluster, $HOSTS hosts"
[ "$MIDDLE" -eq 0 ] || summary cluster-mid "cluster, $MIDDLE hosts"
summary cluster-sub "cluster, $SUBSET hosts"
summary sqlite-sub "SQLite --rollup 10m, $SUBSET hosts"

# How the cluster's report grows: per 1,000 hosts, and each step against the one below.
echo
printf "%8s %10s %12s %10s %14s %14s %12s\n" "hosts" "wall" "s/1k hosts" "peak RSS" "KiB/host" \
	"its CPU" "server+wait"
for x in sub:$SUBSET mid:$MIDDLE all:$HOSTS; do
	f=$W/cluster-${x%%:*}.med
	[ -s "$f" ] || continue
	read -r wall rss cpu < "$f"
	awk -v n="${x#*:}" -v w="$wall" -v m="$rss" -v c="$cpu" -v pn="${pn:-0}" -v pm="${pm:-0}" 'BEGIN {
		printf "%8d %8.1f s %12.2f %6.0f MiB %14s %12.1f s %10.1f s\n", n, w, 1000 * w / n, m / 1024,
			pn ? sprintf("%.1f", (m - pm) / (n - pn)) : sprintf("%.1f", m / n), c, w - c }'
	pn=${x#*:} pm=$rss
done
echo "(KiB/host: above the row before; server+wait: wall minus the report's CPU)"

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

# --- the windows' statistics, computed in the cluster -----------------------------
# bench/window-stats.py on the middle fleet (else the big one, up to 20,000
# hosts): per host, path and window of its report, what the verdicts use,
# computed by the servers and checked against the report; with FINAL and
# without (the merges are done, so both must agree with the report).
ws_db= ws_json=
if [ "$MIDDLE" -gt 0 ] && [ -s "$W/cluster-mid.json" ]; then
	ws_db=mid ws_json=$W/cluster-mid.json
elif [ "$HOSTS" -le 20000 ] && [ -s "$W/cluster-all.json" ]; then
	ws_db=fleet ws_json=$W/cluster-all.json
fi
for final in ${ws_db:+yes no}; do
	echo "the windows' statistics in the cluster ($ws_db, FINAL: $final):"
	FINAL=$final "$PY" "$TOP/bench/window-stats.py" "$CH_URL" "$ws_db" "$ws_json" "$TOP/common/paths.conf" 2>&1 |
		sed 's/^/  /'
done

echo "load average $(load_avg) at the end; data in $CH_DIR (removed now)"
