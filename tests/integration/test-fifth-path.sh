#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The path table is the one place a path is defined: a fifth path added in
# a test table (tests/fixtures/paths/five.conf, the shipped four plus P5,
# the i_mmap_rwsem of munmap) with one rule (five.rules) flows end to end.
# The analyzer attributes the perf c2c cases' i_mmap_rwsem lines (12 HITM,
# tests/integration/c2c_cases.py) to P5 and writes its path rows and its
# row of the paths table; top shows it; the report judges five paths and
# the patch map names P5; mmhitmd counts P5's unit of work. Without the
# table the same rule is refused: P5 is no path.

. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
FIVE=$TOP/tests/fixtures/paths/five.conf
RULES=$TOP/tests/fixtures/paths/five.rules
K=$TOP/tests/fixtures/kernels/6.12.117+deb12-cloud-amd64
[ -f "$K/layout.btf" ] || K=$(ls -d "$TOP"/tests/fixtures/kernels/*/ | tail -n1)
TMP=$(mktemp -d /tmp/mmhitm-test-fifth-XXXXXX)
DB=$TMP/five.db
trap 'rm -rf "$TMP"' EXIT

python3 tests/integration/c2c_cases.py write "$K" "$TMP/c2c.data" "$TMP/c2c.json" >/dev/null ||
	{ fail "c2c_cases.py write"; finish; }
"$O/mmhitm" import "$TMP/c2c.data" --db "$DB" --btf "$K/layout.btf" --kallsyms "$K/kallsyms" \
	--interval 1s >/dev/null 2>&1 || { fail "import"; finish; }

# Without the table, P5 is no path: the rule is refused.
"$O/mmhitm" analyze --db "$DB" --rules "$RULES" >/dev/null 2>"$TMP/err"
check "the built-in table refuses a rule for P5" $? -ne 0
grep -q "P5" "$TMP/err" || fail "the refusal does not name P5: $(cat "$TMP/err")"

export MMHITM_PATHS=$FIVE
"$O/mmhitm" analyze --db "$DB" --rules "$RULES" >"$TMP/analyze.out" 2>&1 || fail "analyze: $(cat "$TMP/analyze.out")"
want=$(python3 -c 'import json, sys
print(sum(g["n"] for g in json.load(open(sys.argv[1]))["groups"] if g["want"] == "none:i_mmap_rwsem"))' \
	"$TMP/c2c.json")
got=$(q "SELECT coalesce(sum(l.lcl_hitm + l.rmt_hitm), 0) FROM line_attribution a
	 JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id) WHERE a.path = 'P5'")
check "the cases hold i_mmap_rwsem HITM" "${want:-0}" -gt 0
check "HITM attributed to P5: exactly the i_mmap_rwsem cases'" "$got" -eq "${want:-0}"
check "... by its rule" "$(q "SELECT count(DISTINCT rule) FROM line_attribution WHERE path = 'P5'")" -eq 1
check "P5 has its rows in path_intervals" \
	"$(q "SELECT count(*) FROM path_intervals WHERE path = 'P5'")" -ge 1
check_str "the paths table has P5's title" \
	"$(q "SELECT title FROM paths WHERE path = 'P5'")" "test: i_mmap_rwsem taken on every munmap of a shared file"
check "the four shipped paths lost nothing" \
	"$(q "SELECT count(*) FROM line_attribution WHERE path IN ('P1', 'P2', 'P3', 'P4')")" -gt 0

"$O/mmhitm" top --db "$DB" --since @0 --limit 50 >"$TMP/top.out" 2>&1 || fail "top"
check "top shows P5 lines" "$(grep -c 'P5' "$TMP/top.out")" -ge 1

# The report judges the paths of the table, and the patch map names P5.
printf 'carries P5 release *\nlacks P1-P5 release 0.*\n' >"$TMP/patches.conf"
"$O/mmhitm" report --db "$DB" --since @0 --patches "$TMP/patches.conf" --json "$TMP/r.json" \
	--html "$TMP/r.html" \
	--quiet --no-progress 2>"$TMP/report.err" || fail "report: $(cat "$TMP/report.err")"
# Its words come from the table too: the span of ids, what each path needs.
check "the HTML names what is outside the table's paths" "$(grep -c 'outside P1\.\.P5' "$TMP/r.html")" -eq 1
check_str "the HTML says what each path needs, from the table's needs" \
	"$(grep -o 'Runs only with LRU_GEN [a-z ]*:\|Runs on any kernel' "$TMP/r.html" | tr '\n' ';')" \
	"Runs only with LRU_GEN on or off:;Runs only with LRU_GEN on:;Runs only with LRU_GEN off or absent:;Runs on any kernel;Runs on any kernel;"
check_str "the report's paths" "$(python3 -c 'import json, sys
print(" ".join(p["path"] for p in json.load(open(sys.argv[1]))["paths"]))' "$TMP/r.json")" "P1 P2 P3 P4 P5"
check_str "P5's title and unit in the report" "$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["paths"][4]
print(p["title"] + " / " + p["work_unit"])' "$TMP/r.json")" \
	"test: i_mmap_rwsem taken on every munmap of a shared file / munmap calls"
check "the report's P5 verdict rests on P5's HITM, graded" "$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["paths"][4]
print(sum(p["grades"].values()))' "$TMP/r.json")" -eq "$got"
check_str "... and says by what" "$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join("%s=%d" % (p["path"], p["grades"]["path"]) for p in r["paths"] if p["path"] == "P1"))' \
	"$TMP/r.json")" "P1=$(q "SELECT coalesce(sum(l.lcl_hitm + l.rmt_hitm), 0) FROM line_attribution a
	 JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)
	 WHERE a.path = 'P1' AND a.grade = 'path'")"
check_str "the patch map says the kernel carries P5" "$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["hosts"][0]["kernels"][0]["patches"]["P5"]["state"])' "$TMP/r.json")" carries

# mmhitmd counts each path's unit of work: P5's is a tracepoint.
if [ "$(id -u)" = 0 ] && [ -d "$TRACING/instances" ] && [ -d "$TRACING/events/syscalls/sys_enter_munmap" ]; then
	D=$TMP/daemon.db
	"$O/mmhitmd" --foreground --db "$D" --interval 1s --record-mode continuous \
		--instance "mmhitm-fifth-$$" --metrics-file "$TMP/metrics.prom" >"$TMP/daemon.log" 2>&1 &
	dpid=$!
	wait_until 30 grep -q "Recording into" "$TMP/daemon.log" || fail "mmhitmd did not start"
	# munmap calls of our own: every dynamically linked start unmaps
	for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done
	kill -TERM $dpid	# once they ran, however long that took
	wait $dpid || fail "mmhitmd: $(tail -3 "$TMP/daemon.log")"
	DB=$D
	check "mmhitmd counted P5's work: our 10 munmap calls at least" "$(q "SELECT coalesce(sum(c.count), 0)
		FROM event_counts c JOIN event_names n USING (event_id)
		WHERE n.name = 'syscalls:sys_enter_munmap'")" -ge 10
	check "the metrics export P5" "$(grep -c 'path="P5"' "$TMP/metrics.prom")" -ge 1
else
	echo "not run here: mmhitmd counting P5's work (needs root and syscalls tracepoints)"
fi
finish
