#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# top and status read a ClickHouse cluster as they read SQLite files
# (--source clickhouse://HOST:PORT/DB): two real shards on loopback
# (clickhouse-lib.sh), a synthetic fleet of 8 hosts (fleetgen.py) and a
# real perf.data imported and analyzed, shipped with mmhitm ship. Then:
# top from the cluster has exactly the lines top finds in the shipped
# files (whole range and a sub-range; every column the cluster holds);
# status from the cluster lists every shipped host and boot with SQLite's
# interval count and last interval; the JSON and CSV have SQLite's keys;
# an empty range says why; analyze and status --check refuse a cluster;
# credentials come from --credentials or ship_credentials.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse-lib.sh"
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import numpy' 2>/dev/null || skip "python3-numpy is missing (make deps-test)"
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
MMHITM=$O/mmhitm
[ -x "$MMHITM" ] || { echo "FAIL: $MMHITM is not built"; exit 1; }

ch_start
WORK=$CH_DIR/work
mkdir -p "$WORK"
DBNAME=mmread
SRC="clickhouse://127.0.0.1:$CH_HTTP1/$DBNAME"
for url in "$CH_URL" "$CH_URL2"; do
	"$MMHITM" ship --config /dev/null --init --to "$url/?database=$DBNAME" >/dev/null ||
		{ fail "ship --init on $url"; finish; }
done

"$PY" tests/integration/fleetgen.py bench "$WORK/fleet" --hosts 8 --days 1 --interval 600 >/dev/null ||
	{ fail "fleetgen.py"; finish; }
"$MMHITM" import "$(fixture perfdata_quipper_weight_struct_memloads.perf.data)" --db "$WORK/fleet/real.db" \
	>/dev/null 2>&1 || fail "import"
"$MMHITM" analyze --db "$WORK/fleet/real.db" >/dev/null 2>&1 || fail "analyze"
for db in "$WORK"/fleet/*.db; do
	"$MMHITM" ship --config /dev/null --db "$db" --to "$CH_URL/?database=$DBNAME" >"$WORK/out" 2>&1 ||
		{ cat "$WORK/out"; fail "ship $(basename "$db")"; }
done
NDB=$(ls "$WORK"/fleet/*.db | wc -l)
top() { "$MMHITM" top --config /dev/null "$@"; }
status() { "$MMHITM" status --config /dev/null "$@"; }

# --- top ---------------------------------------------------------------------

# The columns both sources have: the host, the line, its boot, counts,
# object and fields, the owner of an mm_struct line, paths with their
# grades (a path's grades sorted: SQLite lists them as it meets them).
# records is loads + stores there.
cat > "$WORK/cols.py" <<'PY'
import csv, re, sys
for r in csv.DictReader(open(sys.argv[1])):
    paths = re.sub(r"\(([a-z,]+)\)", lambda m: "(" + ",".join(sorted(m.group(1).split(","))) + ")", r["paths"])
    owner = r["owner"] if r["object"].startswith("mm_struct") else "-"
    print("|".join([r["host"], r["address"], r["boot"], r["hitm"], r["lcl_hitm"], r["rmt_hitm"],
                    r["peer"], r["loads"], r["stores"], r["object"], r["fields"], owner, paths]))
PY
same_top() {
	top --csv --limit 100000 "$@" --source "$SRC" > "$WORK/top-ch.csv" ||
		{ fail "top from the cluster $*"; return; }
	top --csv --limit 100000 "$@" --source "$WORK/fleet/*.db" > "$WORK/top-sq.csv" ||
		{ fail "top from the files $*"; return; }
	"$PY" "$WORK/cols.py" "$WORK/top-ch.csv" | sort > "$WORK/ch"
	"$PY" "$WORK/cols.py" "$WORK/top-sq.csv" | sort > "$WORK/sq"
	n=$(wc -l < "$WORK/sq")
	if [ "$n" -gt 0 ] && cmp -s "$WORK/ch" "$WORK/sq"; then
		pass "top ${*:-(all)}: the cluster's $n lines are the files' (host, line, boot, counts, types, paths, grades)"
	else
		fail "top ${*:-(all)}: the cluster's lines differ from the files' ($n lines):"
		diff "$WORK/sq" "$WORK/ch" | head -10
	fi
}
same_top
# A day inside the range: the intervals decide, on both sides.
all=$(wc -l < "$WORK/sq")
same_top --since @1741003200 --until @1741060800
check "... fewer lines than the whole range ($all)" "$(wc -l < "$WORK/sq")" -lt "$all"

# The ranking: the cluster's first line is the fleet's hottest.
hot=$(sort -t, -k6,6nr "$WORK/top-sq.csv" | head -1 | cut -d, -f6)
top --csv --limit 1 --source "$SRC" > "$WORK/top1.csv"
check_str "top --limit 1 from the cluster is the fleet's hottest line" \
	"$(tail -1 "$WORK/top1.csv" | cut -d, -f6)" "$(top --csv --limit 100000 --source "$WORK/fleet/*.db" |
	  tail -n +2 | sort -t, -k6,6nr | head -1 | cut -d, -f6)"

# The JSON has the keys SQLite's has.
top --json --all --limit 5 --source "$SRC" > "$WORK/ch.json" || fail "top --json from the cluster"
top --json --all --limit 5 --source "$WORK/fleet/real.db" > "$WORK/sq.json" || fail "top --json from a file"
"$PY" - "$WORK/ch.json" "$WORK/sq.json" <<'PY' && pass "top --json: the cluster's keys are SQLite's" || fail "top --json keys differ"
import json, sys
ch, sq = (json.load(open(f))["databases"] for f in sys.argv[1:])
assert len(ch) == 1 and len(ch[0]["lines"]) == 5, ch
assert set(ch[0]) == set(sq[0]), (set(ch[0]) ^ set(sq[0]))
assert set(ch[0]["lines"][0]) == set(sq[0]["lines"][0]), set(ch[0]["lines"][0]) ^ set(sq[0]["lines"][0])
PY
# Text: the table with a Host column and the per-offset detail.
top --limit 3 --source "$SRC" > "$WORK/top.txt" || fail "top text from the cluster"
check_str "top's text table from the cluster: 3 lines with their hosts" \
	"$(sed '/Pareto/q' "$WORK/top.txt" | grep -c '^  *[0-9]  0x[0-9a-f]\{16\}  [a-z]')" 3
grep -q "Shared Cache Line Distribution Pareto" "$WORK/top.txt" && pass "... and the per-offset detail" ||
	fail "no per-offset detail: $(head -20 "$WORK/top.txt")"

# An empty range says why.
top --source "$SRC" --since 2030-01-01 > "$WORK/empty.txt" 2>&1 || fail "an empty top fails"
grep -q "no intervals in this range; the cluster's run from 2025-" "$WORK/empty.txt" &&
	pass "an empty range from the cluster says why" || fail "empty: $(cat "$WORK/empty.txt")"
top --source "$SRC" --boot 1 > "$WORK/out" 2>&1
check_str "--boot with a cluster: usage error" "$?" 2

# --- status --------------------------------------------------------------------

status --csv --source "$SRC" > "$WORK/st-ch.csv" || fail "status --csv from the cluster"
status --csv --source "$WORK/fleet/*.db" > "$WORK/st-sq.csv" || fail "status --csv from the files"
cut_status() { "$PY" -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print("|".join(r[k] for k in ("hostname", "boot_id", "boot_uuid", "kernel_release", "pmu",
                                  "intervals", "first", "last", "events_lost")))' "$1" | sort; }
cut_status "$WORK/st-ch.csv" > "$WORK/ch"
cut_status "$WORK/st-sq.csv" > "$WORK/sq"
n=$(wc -l < "$WORK/sq")
cmp -s "$WORK/ch" "$WORK/sq" &&
	pass "status: the cluster lists every shipped boot ($n) with the files' intervals and last interval" ||
	{ fail "status from the cluster differs:"; diff "$WORK/sq" "$WORK/ch" | head; }
check_str "... every host" "$(cut -d'|' -f1 "$WORK/ch" | sort -u | wc -l)" "$NDB"
check_str "status --csv: the same header" "$(head -1 "$WORK/st-ch.csv")" "$(head -1 "$WORK/st-sq.csv")"
status --json --source "$SRC" > "$WORK/st.json" || fail "status --json from the cluster"
status --json --source "$WORK/fleet/host-0000.db" > "$WORK/st1.json" || fail "status --json"
"$PY" - "$WORK/st.json" "$WORK/st1.json" <<'PY' && pass "status --json: SQLite's keys, and each boot's events" ||
import json, sys
ch, sq = (json.load(open(f)) for f in sys.argv[1:])
assert set(ch) == set(sq), set(ch) ^ set(sq)
assert set(ch["boots"][0]) == set(sq["boots"][0])
b = [x for x in ch["boots"] if x["boot_uuid"] == sq["boots"][0]["boot_uuid"]][0]
assert b["events"] == sq["boots"][0]["events"], (b["events"], sq["boots"][0]["events"])
assert b["mm_structs"] is None
PY
	fail "status --json from the cluster"
status --source "$SRC" > "$WORK/st.txt" || fail "status text from the cluster"
check_str "status text: one block per shipped boot" "$(grep -c '^boot [0-9]*: ' "$WORK/st.txt")" \
	"$(( $(wc -l < "$WORK/st-sq.csv") - 1 ))"
status --check --source "$SRC" > "$WORK/out" 2>&1
check_str "status --check with a cluster: usage error" "$?" 2

# --- refusals and credentials ---------------------------------------------------

"$MMHITM" analyze --source "$SRC" > "$WORK/out" 2>&1
check_str "analyze --source clickhouse://: exit" "$?" 2
grep -q "the cluster holds rows mmhitm analyze attributed" "$WORK/out" && pass "... saying why" ||
	fail "analyze's refusal: $(cat "$WORK/out")"
top --source "$SRC" --source "$WORK/fleet/real.db" > "$WORK/out" 2>&1
check_str "a cluster and a file together: exit" "$?" 2

printf 'shipper:%s\n' "${CH_PASSWORD:-s3cret}" > "$WORK/cred"
chmod 600 "$WORK/cred"
status --source "clickhouse://shipper@127.0.0.1:$CH_HTTP1/$DBNAME" --credentials "$WORK/cred" --csv \
	> "$WORK/out" 2>&1 && pass "status as the user of --credentials" || fail "--credentials: $(cat "$WORK/out")"
printf 'shipper:wrong\n' > "$WORK/cred"
printf 'ship_credentials = %s\n' "$WORK/cred" > "$WORK/mmhitm.conf"
"$MMHITM" top --config "$WORK/mmhitm.conf" --source "$SRC" > "$WORK/out" 2>&1
check_str "a wrong password from ship_credentials: exit" "$?" 1
grep -qi "password" "$WORK/out" && pass "... ClickHouse's reason" || fail "wrong password: $(cat "$WORK/out")"
chmod 644 "$WORK/cred"
status --source "$SRC" --credentials "$WORK/cred" > "$WORK/out" 2>&1
check_str "credentials others may read: exit" "$?" 1
finish
