#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Windowed recording (the default): nothing of mmhitmd's is armed in the
# kernel between windows; the windows take the configured share of each
# interval; the counts scaled from them are honest (the sched_switch
# estimate agrees within its stated error with the same tracepoint counted
# all along, by a second mmhitmd in continuous mode beside it, whose
# intervals have the same clock-aligned bounds; /proc/stat's ctxt is
# printed too, but this kernel's sched_switch count falls short of it by
# up to a third when CPUs idle, in perf stat -a as well, so it is not the
# yardstick); fleet_share leaves the stated share of intervals without
# windows; P1's switches, windowed, are ctxt's change with nothing armed
# for them (paths.conf: free ... exact), the sched_switch counter coming
# back only with --count-events, the cross-check section 1 runs; and the
# main loop sleeps between its deadlines, whatever is turned off.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs
[ -x "$O/mmhitmd" ] && [ -x "$O/mmhitm-load" ] || { echo "build first: make all"; exit 1; }

WORK=$(mktemp -d /tmp/mmhitm-test-windows.XXXXXX)
INST=mmhitm-test-win-$$
PIDS=
trap 'kill $PIDS 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
BEFORE=$(top_level_state)

# --- 1. a steady reproducer, 6 s intervals with 1 s of windows ----------
DB=$WORK/steady.db
REF=$WORK/reference.db
"$O/mmhitm-load" ctxswitch --duration 120s >/dev/null 2>&1 &
LOAD=$!
PIDS="$PIDS $LOAD"
"$O/mmhitmd" --foreground --db "$REF" --interval 6s --record-mode continuous --learn-mm no \
	--learn-pages no --learn-locks no --switch-sample 0 --instance "$INST-ref" --analyze no \
	2>"$WORK/reference.log" &
REFD=$!
PIDS="$PIDS $REFD"
# --count-events: the cross-check, sched_switch counted in the windows
# (windowed, P1's switches are otherwise ctxt's, nothing armed for them).
"$O/mmhitmd" --foreground --db "$DB" --interval 6s --window 1s --window-slices 4 \
	--count-events sched:sched_switch --instance "$INST" --analyze no 2>"$WORK/steady.log" &
D=$!
PIDS="$PIDS $D"
wait_recording 20 "$WORK/steady.log"

# Poll what is armed: perf fds of the daemon, enabled events of its instances.
EVENTS=
for i in "$INST" "$INST-win"; do
	for e in kmem/kmem_cache_alloc kmem/kmem_cache_free sched/sched_process_fork \
		 sched/sched_process_exec mmap_lock/mmap_lock_acquire_returned pagemap/mm_lru_insertion \
		 pagemap/mm_lru_activate lock/contention_begin sched/sched_switch; do
		EVENTS="$EVENTS $i/events/$e/enable"
	done
done
armed_now() {
	[ "$(ls -l /proc/$D/fd 2>/dev/null | grep -c 'perf_event')" -gt 0 ]
}
idle_now() {
	[ "$(ls -l /proc/$D/fd 2>/dev/null | grep -c 'perf_event')" -eq 0 ] &&
		[ "$(cd "$TRACING/instances" && cat $EVENTS 2>/dev/null | grep -c 1)" -eq 0 ]
}
# A window's counters open, then nothing armed between windows (how long
# each lasts is the database's to say, below).
wait_until 30 armed_now
check "in a window: the counters are open" $? -eq 0
wait_until 30 idle_now
check "between windows: no perf event open, no event enabled" $? -eq 0

wait $LOAD
# A learning slice after the first window: the balance saves for it at half
# a budget an interval, for longer the dearer this machine's load made it.
wait_until 120 sh -c "[ \$(sqlite3 '$DB' \"SELECT count(*) FROM intervals WHERE armed LIKE '%learn%'
	AND interval_id > (SELECT min(interval_id) FROM intervals WHERE slices > 0)\") -ge 1 ]"
# Enough to check (below): ten full intervals with windows (the budget may
# skip some), eight with the reference's bounds within 50 ms (a late main
# loop of either daemon misses them).
enough() {
	[ "$(q 'SELECT count(*) FROM intervals WHERE partial = 0 AND slices > 0')" -ge 10 ] &&
	sqlite3 "$DB" "ATTACH '$REF' AS ref" "SELECT count(*) >= 8 FROM event_rates e
		JOIN intervals i USING (interval_id) JOIN ref.intervals r ON r.partial = 0
		AND abs(r.start_ns - i.start_ns) < 50000000 AND abs(r.end_ns - i.end_ns) < 50000000
		WHERE e.event = 'sched:sched_switch' AND e.method = 'window' AND i.partial = 0" | grep -qx 1
}
wait_until 120 enough
kill -TERM $D
wait $D
check "daemon exit status" $? -eq 0
kill -TERM $REFD
wait $REFD

FULL="partial = 0 AND slices > 0"
n=$(q "SELECT count(*) FROM intervals WHERE $FULL")
check "full intervals with windows" "$n" -ge 10
# The overhead budget (0.2 % of 2 CPUs over 6 s: 24 ms) shortens a window,
# says so and keeps the estimated cost under it.
BUDGET_NS=$((6000000000 / 500 * $(nproc)))
# A slice is counted at least as long as planned unless the note says it
# was cut or not opened; a late main loop may only lengthen it. The plan:
# 1/6 of the time from the interval's start (the last flush, as late as it
# came) to its clock boundary (not the first: its row starts before its plan).
SHORT="armed_ns < ((start_ns / 6000000000 + 1) * 6000000000 - start_ns) / 6 - 1000000
	AND interval_id > (SELECT min(interval_id) FROM intervals)"
check "full intervals the budget left alone: armed at least the 1/6 planned" \
	"$(q "SELECT count(*) FROM intervals WHERE partial = 0 AND slices > 0
		AND window_note IS NULL AND $SHORT")" -eq 0
# Armed for less says why: the budget planned a shorter window, the
# interval's end cut a slice or came before one opened (held back for a
# disarming or a late main loop: this machine's load), or it was quiet.
TURNS="(window_note LIKE '%not opened before%' OR window_note LIKE '%short by the interval''s end%')"
check "windows armed for less than the 1/6 planned say why" \
	"$(q "SELECT count(*) FROM intervals WHERE partial = 0 AND slices > 0 AND $SHORT
		AND NOT coalesce(window_note LIKE '%overhead_budget%' OR $TURNS OR window_note LIKE 'quiet (%', 0)")" -eq 0
# The budget's plan ("window X ms in N slices ... asked") is counted in full
# unless the interval's end took from it (X rounded to the ms).
check "budget-shortened windows armed at least what the budget planned" \
	"$(q "SELECT count(*) FROM intervals WHERE partial = 0 AND window_note LIKE 'window % ms in %'
		AND NOT $TURNS AND armed_ns < 1e6 * (CAST(substr(window_note, 8,
		instr(window_note, ' ms in') - 8) AS REAL) - 1)")" -eq 0
q "SELECT interval_id, round(armed_share, 3), slices, est_cost_s, window_note FROM interval_summary" |
	sed 's/^/  interval|armed share|slices|est. cost s|note: /'
check "shortened windows' estimated cost: within 1.5x the budget (median)" \
	"$(q "SELECT coalesce((SELECT est_cost_ns FROM intervals WHERE partial = 0 AND window_note
		LIKE '%overhead_budget%' ORDER BY est_cost_ns LIMIT 1 OFFSET (SELECT count(*) / 2 FROM
		intervals WHERE partial = 0 AND window_note LIKE '%overhead_budget%')), 0) <= 1.5 * $BUDGET_NS")" -eq 1
# The budget is kept on average: a learning slice dearer than one
# interval's budget is paid from what the intervals before it saved.
# The first window is taken as configured, before any price is known
# (its arming priced in, 0.17-0.34 s under this load), so it is not the
# budget keeper's: the average is over the intervals after it.
check "over the run, the windows' estimated cost on average within 1.5x the budget" \
	"$(q "SELECT avg(est_cost_ns) <= 1.5 * $BUDGET_NS FROM intervals WHERE partial = 0
		AND interval_id > (SELECT min(interval_id) FROM intervals WHERE slices > 0)
		AND window_note IS NOT 'no window: not this host''s turn (fleet_share 1)'")" -eq 1
# Learning costs several budgets under this load (60-90 ms against 24 ms),
# so the balance saves for it over about eight intervals: it must come back
# at least once after the first window (waited for above; the last, partial
# interval counts; the first is taken as configured).
check "learning slices still taken after the first window (intervals that learned)" \
	"$(q "SELECT count(*) FROM intervals WHERE armed LIKE '%learn%'
		AND interval_id > (SELECT min(interval_id) FROM intervals WHERE slices > 0)")" -ge 1
check "what was armed is recorded" "$(q "SELECT count(*) FROM intervals WHERE $FULL AND armed LIKE 'counters%'")" -eq "$n"
check "the windows' cost is recorded" "$(q "SELECT count(*) FROM intervals WHERE $FULL AND est_cost_ns > 0")" -eq "$n"
check "windowed counts carry their raw count and variance" \
	"$(q "SELECT count(*) FROM event_rates WHERE method = 'window' AND (counted IS NULL OR stderr IS NULL)")" -eq 0
check "free counters recorded every interval" \
	"$(q "SELECT count(DISTINCT interval_id) FROM event_rates WHERE method = 'free'")" -ge "$n"

# The scaled sched_switch estimate against the reference's count of the
# same tracepoint over the same interval (bounds within 50 ms).
sqlite3 "$DB" "ATTACH '$REF' AS ref" "CREATE TEMP TABLE truth AS SELECT i.start_ns, i.end_ns, c.count
	FROM ref.event_counts c JOIN ref.event_names n USING (event_id) JOIN ref.intervals i USING (interval_id)
	WHERE n.name = 'sched:sched_switch' AND i.partial = 0" \
	"CREATE TABLE cmp AS SELECT i.interval_id, e.count AS est, e.stderr AS se, t.count AS truth, i.ctxt
	FROM event_rates e JOIN intervals i USING (interval_id) JOIN truth t
	ON abs(t.start_ns - i.start_ns) < 50000000 AND abs(t.end_ns - i.end_ns) < 50000000
	WHERE e.event = 'sched:sched_switch' AND e.method = 'window' AND i.partial = 0"
q "SELECT * FROM cmp" | sed 's/^/  interval|estimate|stderr|counted all along|ctxt: /'
# The reference counted sched_switch all along under the steady load: it
# and ctxt are the same switches (paths.conf: free ... exact), read
# microseconds apart at each flush; over its full intervals they differ
# by a few in a million (-0.0003 % here, 2026-12-07), beyond the few a
# second an idle CPU's count falls short.
REFSW="FROM event_counts c JOIN event_names n USING (event_id) JOIN intervals i USING (interval_id)
	WHERE n.name = 'sched:sched_switch' AND i.partial = 0"
sqlite3 "$REF" "SELECT printf('  counted all along: sched_switch %d, ctxt %d over %d full intervals (%+.4f%%)',
	sum(c.count), sum(i.ctxt), count(*), (sum(c.count) - sum(i.ctxt)) * 100.0 / sum(i.ctxt)) $REFSW"
check "counted all along: sched_switch and ctxt agree (0.1%)" \
	"$(sqlite3 "$REF" "SELECT abs(sum(c.count) - sum(i.ctxt)) * 1000 <= sum(i.ctxt) $REFSW")" -eq 1
m=$(q "SELECT count(*) FROM cmp")
check "intervals compared with the reference" "$m" -ge 8
# 95 % intervals: a few misses allowed (binomial; the slices' variance is
# itself estimated from four, and Student's t is in the stderr).
check "intervals whose 95 % interval misses the all-along count (of $m)" \
	"$(q "SELECT count(*) FROM cmp WHERE abs(est - truth) > 1.96 * se")" -le $(( m / 5 + 1 ))
# Over the run the estimate runs a few percent low, and not by chance:
# while a window is open its own sched_switch counter makes each switch
# dearer, so a load that does nothing but switch runs slower while it is
# watched (sum(est) / sum(all along): 0.958, 0.975, 0.975, 0.980 in four
# runs of this test, on this code and on d5d2506's; the run that failed
# the bare 3-sd bound in CI was 0.975, 2.9 sd). What is checked: within
# 3 sd of the all-along count plus 5 % for that cost, and never above it
# by more than 3 sd (the windows' cost can only slow the load).
check "over the run: sum(est) within 3 sd + 5 % below, 3 sd above, sum(all along)" \
	"$(q "SELECT sum(truth) - sum(est) <= 3 * sqrt(sum(se * se)) + 0.05 * sum(truth)
		AND sum(est) - sum(truth) <= 3 * sqrt(sum(se * se)) FROM cmp")" -eq 1
q "SELECT printf('  over the run: sum(est) / sum(all along) %.4f, %.1f sd', sum(est) * 1.0 / sum(truth),
	(sum(est) - sum(truth)) / sqrt(sum(se * se))) FROM cmp"
check "the estimate is not the truth copied (it varies around it)" \
	"$(q "SELECT count(*) FROM cmp WHERE est != truth")" -ge 5

# The analyzer carries each path's precision: P4's work (tlb:tlb_flush) was
# counted in the windows only, with a standard error; not measured is NULL.
"$O/mmhitm" analyze --db "$DB" >/dev/null 2>&1 || fail "mmhitm analyze"
check "P4 rows of windowed intervals carry the armed share and a stderr" \
	"$(q "SELECT count(*) FROM path_rates p JOIN interval_summary s USING (interval_id)
		WHERE p.path = 'P4' AND s.slices > 0 AND s.partial = 0
		AND abs(p.work_share - s.armed_share) < 1e-9 AND p.work_stderr > 0")" -eq "$n"
check "P1's work, the same-mm estimate, carries its error too" \
	"$(q "SELECT count(*) FROM path_rates WHERE path = 'P1' AND work IS NOT NULL AND work_stderr IS NULL")" -eq 0
check "top-level instance untouched" "$(top_level_state)" = "$BEFORE"

# --- 2. fleet_share 0.5: windows in exactly half the intervals -----------
DB=$WORK/share.db
up0=$(cut -d ' ' -f 1 /proc/uptime)
"$O/mmhitmd" --foreground --db "$DB" --interval 1s --duration 16s --fleet-share 0.5 \
	--instance "$INST" --analyze no --log-level debug 2>"$WORK/share.log"
up1=$(cut -d ' ' -f 1 /proc/uptime)
# Active: the host's turn, with or without a window (the budget may still
# have skipped one); the others are the fleet share's.
total=$(q "SELECT count(*) FROM intervals WHERE partial = 0")
active=$(q "SELECT count(*) FROM intervals WHERE partial = 0 AND window_note IS NOT 'no window: not this host''s turn (fleet_share 0.5)'")
echo "  fleet_share 0.5: $active of $total full intervals had windows"
check "half of the intervals, give or take one" "$(( (2 * active - total) * (2 * active - total) ))" -le 4
check "the others say why, and have no window" \
	"$(q "SELECT count(*) FROM intervals WHERE partial = 0 AND slices IS 0 AND window_note LIKE '%fleet_share%'")" \
	-eq "$((total - active))"
# Every window's armed span, as make bench's direct cost reads it
# (bench/armed-spans.awk): one per window at least (slices that touch are
# one span), inside the daemon's life on the progress clock, each ending
# after it began, none overlapping the next.
awk -f bench/armed-spans.awk "$WORK/share.log" >"$WORK/share.spans"
check "armed spans logged, at least one per interval with a window" \
	"$(wc -l <"$WORK/share.spans")" -ge "$(q "SELECT count(*) FROM intervals WHERE slices > 0")"
check "... every one within the daemon's life, in order, none overlapping" \
	"$(awk -v a="$up0" -v b="$up1" '$1 < a || $2 > b || $2 <= $1 || $1 < last { bad++ } { last = $2 }
		END { print bad + 0 }' "$WORK/share.spans")" -eq 0
check "and counted nothing they could not see" \
	"$(q "SELECT count(*) FROM event_counts JOIN intervals USING (interval_id) WHERE slices = 0 AND method = 'window'")" -eq 0
# The default arms nothing for P1's switches: sched:sched_switch is
# ctxt's change over every interval, its turn or not.
check "sched:sched_switch not opened as a counter (boot_events)" \
	"$(q "SELECT count(*) FROM boot_events WHERE event = 'sched:sched_switch' AND role = 'count'")" -eq 0
check "sched:sched_switch is ctxt's change (method free) in every interval" \
	"$(q "SELECT count(*) FROM intervals i WHERE NOT EXISTS (SELECT 1 FROM event_rates e
		WHERE e.interval_id = i.interval_id AND e.event = 'sched:sched_switch'
		AND e.method = 'free' AND e.count = i.ctxt)")" -eq 0
check "... and no other sched:sched_switch row" \
	"$(q "SELECT count(*) FROM event_rates WHERE event = 'sched:sched_switch' AND method != 'free'")" -eq 0
"$O/mmhitm" analyze --db "$DB" >/dev/null 2>&1 || fail "mmhitm analyze"
check "their P4 work is not measured (NULL), not zero" \
	"$(q "SELECT count(*) FROM path_intervals JOIN intervals USING (interval_id)
		WHERE path = 'P4' AND slices = 0 AND partial = 0 AND work IS NOT NULL")" -eq 0

# --- 3. objects on demand: an idle process older than the daemon ----------
# It never allocates, forks, execs or write-locks its mm while a window is
# open; the task iterator must still list it, and close it once it exited.
# The snapshot is taken by learning slices, which the default budget at 1 s
# intervals (4 ms) pays for only every ten or more intervals, fewer on a
# loaded machine: the budget is not this part's subject. Nor are quiet
# intervals, which on this idle machine would take no window for ten
# minutes (quiet_learn).
DB=$WORK/snap.db
sleep 60 &
OLD=$!
PIDS="$PIDS $OLD"
"$O/mmhitmd" --foreground --db "$DB" --interval 1s --instance "$INST" --analyze no \
	--overhead-budget 20% --quiet-cpu 0 2>"$WORK/snap.log" &
D=$!
PIDS="$PIDS $D"
# The idle process listed by a snapshot (a learning slice's) while it lives.
wait_until 60 sh -c "[ \$(sqlite3 '$DB' \"SELECT count(*) FROM mm_objects WHERE tgid = $OLD
	AND learned_from = 'task_iter'\" 2>/dev/null || echo 0) -ge 1 ]"
kill $OLD
wait $OLD 2>/dev/null
wait_until 20 sh -c "[ \$(sqlite3 '$DB' \"SELECT count(*) FROM mm_objects WHERE tgid = $OLD AND free_ns IS NOT NULL\" 2>/dev/null || echo 0) -ge 1 ]"
kill -TERM $D
wait $D
if [ "$(q "SELECT available FROM event_availability WHERE event = 'bpf:task_iter'")" = 1 ]; then
	check "the idle process's mm, from the task iterator" \
		"$(q "SELECT count(*) FROM mm_objects WHERE tgid = $OLD AND comm = 'sleep' AND learned_from = 'task_iter'")" -eq 1
	check "... closed once it was gone" \
		"$(q "SELECT count(*) FROM mm_objects WHERE tgid = $OLD AND free_ns IS NOT NULL")" -eq 1
	check "the daemon's own mm too, alive to the end" \
		"$(q "SELECT count(*) FROM mm_objects WHERE tgid = $D AND free_ns IS NULL")" -eq 1
	check "snapshots are recorded as armed" "$(q "SELECT count(*) FROM intervals WHERE armed LIKE '%snapshot%'")" -ge 2
else
	fail "no task iterator here: $(q "SELECT detail FROM event_availability WHERE event = 'bpf:task_iter'")"
fi

# --- 4. the main loop sleeps: learning off, windowed and continuous -------
for mode in windowed continuous; do
	DB=$WORK/idle-$mode.db
	"$O/mmhitmd" --foreground --db "$DB" --interval 1s --record-mode $mode \
		--learn-mm no --learn-pages no --learn-locks no --switch-sample 0 \
		--instance "$INST" --analyze no 2>"$WORK/idle-$mode.log" &
	D=$!
	# Three intervals written: the loop went through its deadlines a few seconds.
	wait_until 20 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0) -ge 3 ]"
	sw=$(awk '/ctxt_switches/ { n += $2 } END { print n }' /proc/$D/status)
	kill -TERM $D
	wait $D
	# A loop polling with a zero timeout switches ~10^5 times in 3.5 s.
	check "$mode, learning off: context switches of the daemon in its first 3 intervals" "$sw" -le 500
done
check "instances gone" "$(ls -d "$TRACING/instances/$INST"* 2>/dev/null | wc -l)" -eq 0
finish
