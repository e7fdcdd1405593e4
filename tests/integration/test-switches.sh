#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# P1's work unit, same-mm context switches, estimated from sampled
# sched_switch windows: while threads of one process yield to each other
# (mmhitm-load ctxswitch) nearly every sampled switch stays in one mm;
# while two processes ping-pong on one CPU nearly none does. The estimate
# is /proc/stat's count of all switches (kept by the kernel anyway) scaled
# by the sampled share.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs
[ -x "$O/mmhitm-load" ] || { echo "build first: make all"; exit 1; }

WORK=$(mktemp -d /tmp/mmhitm-test-switches.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

share() {	# DB: sampled same-mm share of switches to user tasks, in percent
	sqlite3 "$1" "SELECT CAST(100 * sum(CASE event WHEN 'sample:same_mm_switches' THEN count END) /
		sum(CASE event WHEN 'sample:switches_to_user' THEN count END) AS INTEGER)
		FROM event_rates WHERE interval_id IN (SELECT interval_id FROM intervals WHERE partial = 0)"
}

# The sample is taken by each interval's learning slice; at 1 s intervals
# the default budget (4 ms of CPU an interval here) pays one only every
# ten or more intervals, saving for it (window.h): the budget is not what
# this test is about.
record() {	# DB LOAD...: records 1 s intervals while LOAD runs
	db=$1; shift
	"$O/mmhitmd" --foreground --db "$db" --interval 1s --switch-sample 100ms --window-slices 2 \
		--overhead-budget 20% \
		--instance mmhitm-test-sw-$$ 2>"$db.log" &
	pid=$!
	wait_until 20 sh -c "sqlite3 '$db' 'SELECT count(*) FROM boot_events' 2>/dev/null | grep -qv '^0$'"
	"$@" >/dev/null || fail "load $*"
	kill -TERM $pid
	wait $pid
}

record "$WORK/threads.db" "$O/mmhitm-load" ctxswitch --duration 5 --cpus 0
record "$WORK/procs.db" sh -c "for i in 1 2 3 4 5; do '$HELPER' pingpong 150000; done"

DB=$WORK/threads.db
check "windows sampled" "$(q "SELECT sum(count) FROM event_rates WHERE event = 'sample:sched_switch'")" -ge 100
check "threads of one mm: same-mm share (%)" "$(share "$WORK/threads.db")" -ge 90
check "two processes: same-mm share (%)" "$(share "$WORK/procs.db")" -le 10
check "the estimate is /proc/stat's switches scaled by the share" \
	"$(q "SELECT count(*) FROM (SELECT e.interval_id,
		sum(CASE event WHEN 'derived:same_mm_switches' THEN count END) AS est,
		i.ctxt * sum(CASE event WHEN 'sample:same_mm_switches' THEN count END) * 1.0 /
		sum(CASE event WHEN 'sample:sched_switch' THEN count END) AS want
		FROM event_rates e JOIN intervals i USING (interval_id) GROUP BY e.interval_id)
		WHERE est IS NOT NULL AND abs(est - want) > 1")" -eq 0
check "each estimate states its variance" \
	"$(q "SELECT count(*) FROM event_rates WHERE event = 'derived:same_mm_switches' AND stderr IS NULL")" -eq 0
check "the window costs no learning events" "$(q 'SELECT sum(events_lost) FROM intervals')" -eq 0
finish
