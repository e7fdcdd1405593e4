#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The multiplexing share of each count (event_counts.run_share): recorded
# for every row, windowed and continuous, and 1.0 here, where every count
# is a tracepoint's and tracepoints never multiplex (this VM has no
# hardware PMU to crowd, nor does QEMU's TCG, so no real multiplexing can
# be caused; tests/unit/test-counter-share.c checks the arithmetic with
# synthetic readings). What a user sees of a share below 1 (event_rates'
# scaled, mmhitm status) is checked on a copy whose shares are set so.
. "$(dirname "$0")/lib.sh"
require_root
require_tracefs
[ -x "$O/mmhitmd" ] && [ -x "$O/mmhitm" ] || { echo "build first: make all"; exit 1; }

WORK=$(mktemp -d /tmp/mmhitm-run-share.XXXXXX)
INST=mmhitm-run-share-$$
trap 'kill $P1 $P2 2>/dev/null; rm -rf "$WORK"' EXIT

# Context switches to count: two sleepers' wake-ups.
( i=0; while [ $i -lt 400 ]; do sleep 0.01; i=$((i + 1)); done ) &
"$O/mmhitmd" --foreground --db "$WORK/cont.db" --interval 1s --duration 4s \
	--record-mode continuous --instance "$INST-c" --analyze no --metrics-file "" \
	2>"$WORK/cont.log" &
P1=$!
# (--count-events: windowed, sched_switch is otherwise read from ctxt,
# not counted; here its window rows are the subject)
"$O/mmhitmd" --foreground --db "$WORK/win.db" --interval 2s --duration 5s --count-events sched:sched_switch \
	--instance "$INST-w" --analyze no --metrics-file "" 2>"$WORK/win.log" &
P2=$!
wait $P1 || { cat "$WORK/cont.log"; fail "continuous daemon failed"; }
wait $P2 || { cat "$WORK/win.log"; fail "windowed daemon failed"; }
P1= P2=

for mode in cont win; do
	DB=$WORK/$mode.db
	method=$([ $mode = cont ] && echo continuous || echo window)
	check_str "$mode: event_counts has run_share" \
		"$(q "SELECT count(*) FROM pragma_table_info('event_counts') WHERE name = 'run_share'")" 1
	check "$mode: $method rows of sched:sched_switch" \
		"$(q "SELECT count(*) FROM event_rates WHERE method = '$method' AND event = 'sched:sched_switch'")" -ge 1
	check "$mode: sched:sched_switch counted" \
		"$(q "SELECT coalesce(sum(count), 0) FROM event_rates WHERE method = '$method'
		      AND event = 'sched:sched_switch'")" -gt 0
	check_str "$mode: rows without a run_share" \
		"$(q "SELECT count(*) FROM event_counts WHERE run_share IS NULL")" 0
	check_str "$mode: rows not counted all the time (tracepoints never multiplex)" \
		"$(q "SELECT count(*) FROM event_counts WHERE run_share != 1.0")" 0
	check_str "$mode: event_rates rows said scaled" \
		"$(q "SELECT count(*) FROM event_rates WHERE scaled OR run_share IS NOT 1.0")" 0
	"$O/mmhitm" status --db "$DB" >"$WORK/status.$mode" || fail "$mode: status failed"
	grep -q "multiplexed" "$WORK/status.$mode" && fail "$mode: status says multiplexed: $(cat "$WORK/status.$mode")"
	"$O/mmhitm" status --json --db "$DB" >"$WORK/status.$mode.json" || fail "$mode: status --json failed"
	python3 -c 'import json, sys; b = json.load(open(sys.argv[1]))["boots"][0]; assert b["multiplexed"] == {}, b' \
		"$WORK/status.$mode.json" || fail "$mode: status --json multiplexed is not {}"
done

# A counter that ran 62 % of the time, as a PMU short of counters would
# leave it: event_rates says scaled, status names it.
DB=$WORK/copy.db
sqlite3 "$WORK/cont.db" ".backup '$DB'"
q "UPDATE event_counts SET run_share = 0.62 WHERE event_id =
	(SELECT event_id FROM event_names WHERE name = 'sched:sched_switch')"
check_str "scaled rows in event_rates" \
	"$(q "SELECT count(*) FROM event_rates WHERE scaled AND event = 'sched:sched_switch'")" \
	"$(q "SELECT count(*) FROM event_rates WHERE event = 'sched:sched_switch'")"
"$O/mmhitm" status --db "$DB" >"$WORK/status.copy" || fail "status of the copy failed"
grep -q "^  counters multiplexed: sched:sched_switch ran 62 % of the time" "$WORK/status.copy" ||
	fail "status does not say the counter was multiplexed: $(cat "$WORK/status.copy")"
grep -c "multiplexed" "$WORK/status.copy" | grep -qx 1 || fail "status names more than one: $(cat "$WORK/status.copy")"
"$O/mmhitm" status --json --db "$DB" >"$WORK/status.copy.json" || fail "status --json of the copy failed"
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["boots"][0]["multiplexed"]
assert list(m) == ["sched:sched_switch"] and abs(m["sched:sched_switch"] - 0.62) < 1e-9, m' \
	"$WORK/status.copy.json" || fail "status --json multiplexed is wrong"
pass "a multiplexed counter is named by status and event_rates"
finish
