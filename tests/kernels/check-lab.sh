# SPDX-License-Identifier: GPL-2.0
#
# The lab of test-rollout (guest/lab.sh) on the host: two boots of 6.1
# (base) and two of 6.12 (patched), A B A B, each recorded by its own
# mmhitmd into lab.db. The kernels differ in more than a patch, so this
# checks the protocol and the arithmetic, not a verdict:
#  - every boot's lab run and daemon exited 0;
#  - p1 (ctxswitch at 2 CPUs and its private-mm control): four boots, each
#    kernel's two in order and on its side, every run kept with a value,
#    each between interval edges its daemon wrote (intervals of its own);
#  - `mmhitm lab report --json` equals labgen.py's recomputation from the
#    tables (boot medians, values, changes, intervals; HITM none under
#    TCG, and none claimed), and the text table is printed;
#  - p2 (aging at 1 and 2 processes) the same where both kernels ran it.
# Sourced by test-rollout.sh (lib.sh's check, fail; $O, $KVER_61, $KVER_612).

lab_q() {	# db sql
	sqlite3 -batch -noheader "$1" "$2"
}

check_lab_boots() {	# results-dir
	for b in 6.1/lab 6.12/lab lab-6.1 lab-6.12; do
		r=$1/$b
		check "lab $b: mmhitm lab run p1 exit ($(tail -n 1 "$r/p1.out" 2>/dev/null))" \
			"$(cat "$r/p1.rc" 2>/dev/null || echo none)" = 0
		[ -f "$r/p2.rc" ] && check "lab $b: mmhitm lab run p2 exit ($(tail -n 1 "$r/p2.out"))" \
			"$(cat "$r/p2.rc")" = 0
		check "lab $b: its mmhitmd's exit" "$(cat "$r/mmhitmd.rc" 2>/dev/null || echo none)" = 0
	done
}

check_lab_protocol() {	# db lab configs runs
	db=$1 lab=$2
	check "lab $lab: four boots, all done" "$(lab_q "$db" "SELECT count(done_ns) FROM lab_boots
		JOIN labs USING (lab_id) WHERE name = '$lab'")" -eq 4
	check "lab $lab: 6.1 the base twice, 6.12 the patched twice, in order" "$(lab_q "$db" "SELECT
		group_concat(side || ':' || kernel_release || ':' || seq, ' ') FROM (SELECT * FROM lab_boots
		JOIN labs USING (lab_id) WHERE name = '$lab' ORDER BY started_ns)")" = \
		"base:$KVER_61:1 patched:$KVER_612:1 base:$KVER_61:2 patched:$KVER_612:2"
	check "lab $lab: every run kept with a value ($3 configurations x $4 runs x 4 boots)" \
		"$(lab_q "$db" "SELECT count(*) FROM lab_runs JOIN labs USING (lab_id) WHERE name = '$lab'
		AND value > 0")" -eq $(($3 * $4 * 4))
	check "lab $lab: every run has intervals of its own" "$(lab_q "$db" "SELECT count(DISTINCT
		boot_uuid || config || '.' || run) FROM lab_run_intervals JOIN labs USING (lab_id)
		WHERE name = '$lab'")" -eq $(($3 * $4 * 4))
}

check_lab_report() {	# db lab
	"$O/mmhitm" lab report "$2" --db "$1" --json > "$WORK/lab-$2.json" ||
		fail "mmhitm lab report $2 --json"
	"$O/mmhitm" lab report "$2" --db "$1" --html "$WORK/lab-$2.html" > "$WORK/lab-$2.txt" ||
		fail "mmhitm lab report $2"
	sed 's/^/    | /' "$WORK/lab-$2.txt"
	if ${PYTHON:-/usr/bin/python3} -c 'import scipy.stats' 2>/dev/null; then
		out=$(${PYTHON:-/usr/bin/python3} "$TOP/tests/integration/labgen.py" check "$1" \
			"$WORK/lab-$2.json" 2>&1)
		check "lab $2: the report equals the recomputation from the tables ($out)" \
			-n "$(echo "$out" | grep 'as recomputed')"
	else
		echo "SKIP  lab $2: the recomputation needs python3-scipy (make deps-test)"
	fi
	check "lab $2: no HITM claimed under TCG" "$(grep -c '"hitm_per_work"' "$WORK/lab-$2.json")" -eq 0
	check "lab $2: the HTML names $KVER_612" -n "$(grep -F "$KVER_612" "$WORK/lab-$2.html")"
}

check_lab() {	# lab.db results-dir
	[ -s "$1" ] || fail "no lab.db on the disk"
	check_lab_boots "$2"
	check_lab_protocol "$1" p1 2 "$(sed -n 's/.*LAB_RUNS=\([0-9]*\).*/\1/p' "$WORK/seed/params")"
	check_lab_report "$1" p1
	if [ "$(lab_q "$1" "SELECT count(DISTINCT side) FROM lab_boots JOIN labs USING (lab_id)
		WHERE name = 'p2'")" = 2 ]; then
		check_lab_protocol "$1" p2 2 2
		check_lab_report "$1" p2
	else
		echo "note: the aging lab (p2) did not run on both kernels (LRU_GEN)"
	fi
}
