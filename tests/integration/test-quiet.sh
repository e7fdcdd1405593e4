#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Quiet intervals (plan_quiet() in daemon/schedule.c): an interval that
# follows one in which the host kept its CPUs busy for less than quiet_cpu
# of one CPU takes no window unless nothing has learned for quiet_learn
# (10 minutes; 6 s here), and then one slice, of the configured armed
# time, that learns; its window_note says which. quiet_cpu 10000% (a
# hundred CPUs) makes every interval after the first quiet, whatever this
# machine does; quiet_cpu 0 none; a quiet daemon wakes a quarter as often
# for the spike check; and under a reproducer that keeps a CPU busy the
# default (5%) makes none quiet.
# 3 s intervals with 600 ms windows, a budget that never shortens them.
#
# What the daemon promises of a window's timing, and all this test asks
# of it: a slice is counted for as long as planned from the moment its
# counters are enabled, however late it opens (the loop woke late, the
# last slice's disarming held it back); only the interval's end can cut
# it or leave it unopened, and then the interval's window_note says so;
# the armed time recorded is what was counted, and every window estimate
# is its count scaled by it. Not that a slice opens on time: on a shared
# 2-CPU VM the loop wakes late and a disarming takes 100-200 ms. The old
# contract (each quiet interval armed 600 +- 12 ms) failed two runs in
# five: a quiet interval's one slice planned within the last interval's
# disarming was skipped (0 ms armed, no note), and a loop woken 74 ms
# late counted 526 ms. The `held` run below makes that disarming last
# 2 s, so the old code skips a slice in most of its intervals.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs
[ -x "$O/mmhitmd" ] && [ -x "$O/mmhitm-load" ] || { echo "build first: make all"; exit 1; }

WORK=$(mktemp -d /tmp/mmhitm-test-quiet.XXXXXX)
INST=mmhitm-test-quiet-$$
D=
trap '[ -n "$D" ] && kill $D 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; for i in busy quiet; do [ -d "$TRACING/instances/$INST-$i" ] && rmdir "$TRACING/instances/$INST-$i"; done' EXIT

record() {	# NAME SECONDS ARGS...
	DB=$WORK/$1.db
	secs=$2
	shift 2
	"$O/mmhitmd" --foreground --db "$DB" --instance "$INST" --interval 3s --window 600ms \
		--overhead-budget 100% --spike-factor 0 --analyze no --duration "${secs}s" \
		${SLICES:---window-slices 4} "$@" 2>"$WORK/$(basename "$DB" .db).log"
	rc=$?
	check "$(basename "$DB" .db): daemon exit status" "$rc" -eq 0
	q "SELECT interval_id, partial, slices, round(armed_ns / 1e6), armed, window_note FROM intervals" |
		sed "s/^/  $(basename "$DB" .db): interval|partial|slices|armed ms|armed|note: /"
}
# Whole intervals, but the first (planned before anything was measured)
# and the last before the stop (--duration may cut its slice short).
FULL="partial = 0 AND interval_id > (SELECT min(interval_id) FROM intervals)
	AND interval_id < (SELECT max(interval_id) - 1 FROM intervals)"
# ... whose note says the interval's end cut or left out a slice
NOTED="(coalesce(window_note, '') LIKE '%cut % ms short by the interval''s end%'
	OR coalesce(window_note, '') LIKE '%slices not opened before the interval''s end%')"

# The window planned for an interval: 600 ms of 3 s, scaled to the time
# from its start (the last flush, as late as the loop woke for it) to the
# clock's next 3 s boundary (schedule_plan()), less 1 ms of rounding.
PLAN="600000000 * ((start_ns / 3000000000 + 1) * 3000000000 - start_ns) / 3000000000 - 1000000"

# armed_as_planned NAME: in $DB's whole intervals, the planned window armed
# unless the note says why not (a slice that ends late is longer: the loop
# wakes late; twice the window would be slices counted twice), and every
# window estimate its count scaled by the armed time (the ratio estimator).
armed_as_planned() {
	check "$1: whole intervals armed under the plan without a note saying why" \
		"$(q "SELECT count(*) FROM intervals WHERE $FULL AND armed_ns < $PLAN AND NOT $NOTED")" -eq 0
	check "$1: whole intervals armed twice the window" \
		"$(q "SELECT count(*) FROM intervals WHERE $FULL AND armed_ns >= 1200000000")" -eq 0
	check "$1: window estimates that are not the count scaled by the armed time" \
		"$(q "SELECT count(*) FROM event_counts JOIN intervals USING (interval_id)
			WHERE method = 'window' AND
			abs(count - counted * 1.0 * (end_ns - start_ns) / armed_ns) > 1")" -eq 0
	q "SELECT interval_id, window_note FROM intervals WHERE $NOTED" | sed "s/^/  $1: noted: /"
}

# --- quiet_cpu 10000%: every interval after the first is quiet ----------
# quiet_learn 6s: a window, one learning slice, in every second or third
# interval; none in the others.
record always 19 --quiet-cpu 10000% --quiet-learn 6s
DB=$WORK/always.db
n=$(q "SELECT count(*) FROM intervals WHERE $FULL")
check "always: whole intervals after the first" "$n" -ge 3
check "always: each of them quiet" \
	"$(q "SELECT count(*) FROM intervals WHERE $FULL AND window_note LIKE 'quiet (host busy % of a CPU, quiet_cpu 10000%%): %'")" -eq "$n"
NONE="window_note LIKE '%: no window (learned % s ago, every 6 s)%'"
ONE="window_note LIKE '%: one slice, learning%'"
none=$(q "SELECT count(*) FROM intervals WHERE $FULL AND $NONE")
one=$(q "SELECT count(*) FROM intervals WHERE $FULL AND $ONE")
echo "  always: $none whole intervals without a window, $one with one"
check "always: quiet intervals without a window" "$none" -ge 1
check "always: ... and with one, learning" "$one" -ge 1
check "always: each one or the other" "$((none + one))" -eq "$n"
check "always: those without a window armed nothing" \
	"$(q "SELECT count(*) FROM intervals WHERE $FULL AND $NONE AND (slices > 0 OR armed_ns > 0 OR armed IS NOT NULL)")" -eq 0
check "always: ... counted nothing in a window" \
	"$(q "SELECT count(*) FROM event_counts JOIN intervals USING (interval_id)
		WHERE $FULL AND $NONE AND method = 'window'")" -eq 0
# The sched_switch sample of a learning slice that ends near an interval's
# end can be read after that interval's flush and is then written with the
# next one (a misattribution by one interval, seen under CI load; to be
# fixed in the daemon): sample counts in an interval without a window only
# right after an interval that learned.
check "always: ... and sample counts only right after an interval that learned" \
	"$(q "SELECT count(*) FROM event_counts JOIN intervals i USING (interval_id)
		WHERE $FULL AND $NONE AND method IN ('sample', 'derived') AND NOT EXISTS
		(SELECT 1 FROM intervals p WHERE p.interval_id = i.interval_id - 1 AND p.slices > 0)")" -eq 0
check "always: ... but wrote sched_switch from ctxt (method free)" \
	"$(q "SELECT count(*) FROM event_counts JOIN event_names USING (event_id) JOIN intervals USING (interval_id)
		WHERE $FULL AND $NONE AND name = 'sched:sched_switch' AND method = 'free'")" -eq "$none"
check "always: ... and said when it learned last, under 6 s ago" \
	"$(q "SELECT count(*) FROM intervals WHERE $FULL AND $NONE
		AND CAST(substr(window_note, instr(window_note, 'learned ') + 8) AS INTEGER) > 6")" -eq 0
# Learning at most every 6 s: never in two intervals (3 s) in a row.
check "always: no two learning windows in consecutive intervals" \
	"$(q "SELECT count(*) FROM intervals a JOIN intervals b ON b.interval_id = a.interval_id + 1
		WHERE a.armed LIKE '%learn%' AND b.armed LIKE '%learn%'")" -eq 0
# (one slice wrapped around the interval's stratum is two pieces; none
# only when held back past the interval's end, which the note says)
check "always: each window in one slice" \
	"$(q "SELECT count(*) FROM intervals WHERE $FULL AND $ONE AND (slices BETWEEN 1 AND 2 OR $NOTED)")" -eq "$one"
ALL=$FULL FULL="$FULL AND $ONE"
armed_as_planned always
FULL=$ALL
check "always: the snapshot still in every slice" \
	"$(q "SELECT count(*) FROM intervals WHERE $FULL AND slices > 0 AND armed NOT LIKE '%snapshot%'")" -eq 0
# a one-slice estimate states the wide variance of window_estimate()
check "always: each quiet estimate states its variance" \
	"$(q "SELECT count(*) FROM event_counts JOIN intervals USING (interval_id)
		WHERE $FULL AND method = 'window' AND variance IS NULL")" -eq 0

# --- quiet_cpu 0: none ----------------------------------------------------
# not_quiet NAME: no quiet interval in $WORK/NAME.db. Four slices planned
# in each; two closer together than a disarming (100-200 ms) lose the
# second, so not every interval has all four.
not_quiet() {
	DB=$WORK/$1.db
	n=$(q "SELECT count(*) FROM intervals WHERE $FULL")
	check "$1: whole intervals after the first" "$n" -ge 2
	check "$1: none quiet" "$(q "SELECT count(*) FROM intervals WHERE window_note LIKE 'quiet%'")" -eq 0
	check "$1: slices in whole intervals (more than one each)" \
		"$(q "SELECT sum(slices) FROM intervals WHERE $FULL")" -gt "$n"
}
record never 13 --quiet-cpu 0
not_quiet never
armed_as_planned never
check "never: every window learned" "$(q "SELECT count(*) FROM intervals WHERE $FULL AND armed LIKE '%learn%'")" -eq "$n"

# --- a slice the last one's disarming holds back -------------------------
# A 2 s sched_switch sample after every learning slice keeps its disarming
# busy for 2 s, and the second of two slices most often falls in it: it
# opens when the disarming is over, keeps its 300 ms, and what the
# interval's end then cuts off or leaves unopened its note says (the old
# code skipped it: 300 ms armed and no word why).
SLICES="--window-slices 2" record held 16 --quiet-cpu 0 --switch-sample 2s
DB=$WORK/held.db
check "held: whole intervals" "$(q "SELECT count(*) FROM intervals WHERE $FULL")" -ge 2
armed_as_planned held

# --- spike checks a quarter as often while quiet -------------------------
# No window either way (fleet_share 0: never this host's turn, which
# neither spike windows nor the quiet rule look past). Each daemon counts
# its readings of the free counters (mmhitm_spike_checks_total in its
# metrics file, written at each interval's end): every 100 ms, every
# 400 ms while quiet, on a grid, so a late wake-up does not push the next
# one later. Over its own intervals 2 to 4 (all quiet for one
# daemon, none for the other) the quiet one takes about a quarter as many,
# and under half. Not the daemons' voluntary context switches, as
# this check once counted: they count every sleep, not only the timer's,
# and a loaded machine adds its own (make stress beside a package build:
# 61 quiet against 76, a ratio of 0.80, though the daemons did as told).
wake_start() {	# NAME QUIET_CPU
	"$O/mmhitmd" --foreground --db "$WORK/wake-$1.db" --instance "$INST-$1" --interval 3s \
		--fleet-share 0 --spike-check 100ms --quiet-cpu "$2" \
		--learn-pages no --learn-locks no --switch-sample 0 --analyze no \
		--metrics-file "$WORK/wake-$1.prom" \
		--duration 13s >/dev/null 2>"$WORK/wake-$1.log" &
}
# "WRITTEN CHECKS" of daemon $1 in one read (the file is replaced whole)
metric() { awk '/^mmhitm_intervals_written_total / { w = $2 } /^mmhitm_spike_checks_total / { c = $2 }
	END { if (w != "") print w, c }' "$WORK/wake-$1.prom" 2>/dev/null; }
wake_start busy 0
WB=$!
wake_start quiet 10000%
WQ=$!
D="$WB $WQ"
# Each daemon's count when it had written 1, then 4 intervals: its own
# intervals 2 to 4 (intervals end on the clock's 3 s boundaries, and the
# two may start on either side of one).
b0= q0= b1= q1= t=400
while [ $t -gt 0 ] && { [ -z "$b1" ] || [ -z "$q1" ]; }; do
	for w in busy quiet; do
		read -r n c <<EOT
$(metric $w)
EOT
		case "$w:$n" in
		busy:1) b0=${b0:-$c} ;; busy:4) b1=${b1:-$c} ;;
		quiet:1) q0=${q0:-$c} ;; quiet:4) q1=${q1:-$c} ;;
		esac
	done
	sleep 0.1
	t=$((t - 1))
done
wait $WB $WQ
D=
[ -n "$b0" ] && [ -n "$b1" ] && [ -n "$q0" ] && [ -n "$q1" ] ||
	fail "spike checks: a daemon's intervals 1 and 4 not both seen: busy ${b0:--}..${b1:--}," \
		"quiet ${q0:--}..${q1:--}; $(tail -1 "$WORK/wake-busy.log"); $(tail -1 "$WORK/wake-quiet.log")"
busy_checks=$((${b1:-0} - ${b0:-0})) quiet_checks=$((${q1:-0} - ${q0:-0}))
echo "  spike checks in intervals 2-4: quiet_cpu 0: $busy_checks, quiet_cpu 10000%: $quiet_checks"
check "spike checks: the daemon with quiet_cpu 0 checked" "$busy_checks" -gt 0
check "spike checks: the quiet daemon checked" "$quiet_checks" -gt 0
check "spike checks: quiet checks x 2 under those with quiet_cpu 0" \
	"$((quiet_checks * 2))" -lt "$busy_checks"

# --- the default under a reproducer: a busy host is never quiet -----------
"$O/mmhitm-load" ctxswitch --duration 16 >/dev/null 2>&1 &
LOAD=$!
record busy 13
wait $LOAD
not_quiet busy
finish
