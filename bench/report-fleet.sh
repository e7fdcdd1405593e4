#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Times `mmhitm report` on a generated fleet and prints its wall time and
# peak RSS (GNU time's "Maximum resident set size").
#
#   sh bench/report-fleet.sh [HOSTS [DAYS [INTERVAL_S [JOBS]]]]
#
# Defaults: 1000 hosts, a 7-day report range, 60 s intervals, 2 generator
# processes. Each host gets one database holding 2 x DAYS days of intervals
# (the range, and the 7-day before-windows ahead of it): at 60 s that is
# 20160 intervals and about 6 MB per host. A third of the hosts roll onto
# the patched kernel inside the range; one in 50 has no PMU.
# The fleet is generated once into $BENCH_CACHE (default
# ~/.cache/mmhitm/bench) and reused while the schema stays the same (the
# report refuses a database of an older schema); generating 1000 x 60 s
# takes minutes and some 6 GB.
set -eu
hosts=${1:-1000}
days=${2:-7}
interval=${3:-60}
jobs=${4:-2}
O=${O:-build}
PY=${PYTHON:-/usr/bin/python3}
cache=${BENCH_CACHE:-$HOME/.cache/mmhitm/bench}
schema=$(basename "$(ls schema/[0-9]*.sql | tail -n1)" | cut -d- -f1)
fleet=$cache/s$schema-h$hosts-d$days-i$interval
out=$O/bench
mkdir -p "$out"

[ -x "$O/mmhitm" ] || { echo "build first: make" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }

if [ ! -f "$fleet/range" ]; then
	echo "generating $hosts hosts x $((2 * days)) days at ${interval}s into $fleet ($jobs jobs)"
	rm -rf "$fleet"
	mkdir -p "$fleet"
	start=$(date +%s)
	i=0
	pids=
	while [ $i -lt "$jobs" ]; do
		"$PY" tests/integration/fleetgen.py bench "$fleet" --hosts "$hosts" --days "$days" \
			--interval "$interval" --first $i --step "$jobs" > "$fleet/range.$i" &
		pids="$pids $!"
		i=$((i + 1))
	done
	for p in $pids; do
		wait "$p"
	done
	mv "$fleet/range.0" "$fleet/range"
	echo "generated in $(( $(date +%s) - start )) s, $(du -sh "$fleet" | cut -f1)"
fi
range=$(sed 's/since=/--since /; s/ until=/ --until /' "$fleet/range")
n=$(ls "$fleet"/*.db | wc -l)

# shellcheck disable=SC2086
/usr/bin/time -v -o "$out/time.txt" "$O/mmhitm" report $range --patches "$fleet/patches.conf" \
	--html "$out/report.html" --json --output "$out/report.json" --no-progress "$fleet"/*.db > "$out/summary.txt"
cat "$out/summary.txt"
echo
echo "command: $O/mmhitm report $range --patches $fleet/patches.conf --html $out/report.html --json --output $out/report.json $fleet/*.db"
echo "databases: $n ($(du -sh "$fleet" | cut -f1)), HTML $(du -h "$out/report.html" | cut -f1), JSON $(du -h "$out/report.json" | cut -f1)"
grep -E 'Elapsed|Maximum resident|User time|System time' "$out/time.txt"
