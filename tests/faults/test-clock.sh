#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The wall clock set forward a day and back an hour while mmhitmd records
# ("Hours of faults", point 1), here through libfaketime, which moves the
# wall clock only the daemon sees (CLOCK_REALTIME; FAKETIME_DONT_FAKE_MONOTONIC
# leaves CLOCK_MONOTONIC and CLOCK_BOOTTIME alone): the host's is never
# touched. tests/kernels/test-windowed sets a real kernel's clock in its
# guest the same way. 1 s intervals, each step in the midst of one, then a
# restart while the clock is still an hour behind the rows. After it:
#   - no row starts before the one before it ended, none is negative or
#     longer than two intervals, the day is the one gap of the first run,
#     and the restart's first row starts where the last one ended;
#   - no slot counted missed, nothing lost, the rows' ctxt no more than
#     /proc/stat's over the daemons' lives;
#   - both steps in the rows' window_note and the log, and the restart's
#     going on from the last row in its log.

. "$(dirname "$0")/lib.sh"

FAKETIME_LIB=
for f in /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1; do
	[ -f "$f" ] && FAKETIME_LIB=$f && break
done
[ -n "$FAKETIME_LIB" ] || skip "needs libfaketime (make deps-test)"

WORK=$(mktemp -d /tmp/mmhitm-test-clock.XXXXXX)
INST=mmhitm-test-clock-$$
DB=$WORK/clock.db
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; cleanup_instances "$INST"; rm -rf "$WORK"' EXIT

ctxt() { awk '/^ctxt / { print $2 }' /proc/stat; }
# The daemon's wall clock: libfaketime's offset, read at every call.
set_clock() { echo "$1" > "$WORK/offset"; }
# Half an interval after the row count reached N: the midst of the next.
midst_after_rows() {
	wait_until 30 rows_at_least "$DB" "$1" || fail "no row $1"
	sleep 0.5
}
# daemon NAME SECONDS: mmhitmd under the faked clock, in the background.
daemon() {
	LD_PRELOAD=$FAKETIME_LIB FAKETIME_TIMESTAMP_FILE=$WORK/offset FAKETIME_NO_CACHE=1 \
	FAKETIME_DONT_FAKE_MONOTONIC=1 \
		"$O/mmhitmd" --foreground --db "$DB" --interval 1s --duration "$2s" --instance "$INST" \
		--metrics-file "" 2>"$WORK/$1.log" &
	PID=$!
}
finish_daemon() {
	wait "$PID"
	check "$1: clean stop" $? -eq 0
	PID=
}

set_clock +0
c0=$(ctxt)
daemon first 12
midst_after_rows 3
set_clock +1d
midst_after_rows 6
set_clock +23h
finish_daemon first
before=$(rows)
last_end=$(q "SELECT max(end_ns) FROM intervals")
daemon restart 4
finish_daemon restart
c1=$(ctxt)

q "SELECT interval_id, partial, (end_ns - start_ns) / 1000000, ctxt, dropped_intervals, window_note
   FROM intervals ORDER BY interval_id" | sed 's/^/  interval|partial|ms|ctxt|dropped|note: /'
next_rows="FROM intervals a JOIN intervals b ON b.interval_id = a.interval_id + 1"
check "no row starts before the last one ended" "$(q "SELECT count(*) $next_rows WHERE b.start_ns < a.end_ns")" -eq 0
check "no two rows overlap" "$(overlaps)" -eq 0
check "none negative" "$(q 'SELECT count(*) FROM intervals WHERE end_ns <= start_ns')" -eq 0
check "none longer than two intervals" "$(q 'SELECT count(*) FROM intervals WHERE end_ns - start_ns > 2e9')" -eq 0
check "the day a gap between two rows" \
	"$(q "SELECT count(*) $next_rows WHERE b.start_ns - a.end_ns BETWEEN 86399e9 AND 86401e9")" -eq 1
check "no other gap in the first run" \
	"$(q "SELECT count(*) $next_rows WHERE b.interval_id <= $before AND b.start_ns - a.end_ns BETWEEN 1 AND 86399e9")" -eq 0
check "the restart's first row starts where the last one ended" \
	"$(q "SELECT start_ns FROM intervals WHERE interval_id = $((before + 1))")" = "$last_end"
check "no slot counted missed" "$(q 'SELECT coalesce(sum(dropped_intervals), 0) FROM intervals')" -eq 0
check "nothing lost" "$(q 'SELECT coalesce(sum(events_lost), 0) FROM intervals')" -eq 0
all=$(q 'SELECT sum(ctxt) FROM intervals')
check "the rows' ctxt no more than the daemons' lives' ($((c1 - c0)))" "${all:-0}" -le $((c1 - c0))
check "a row says the day's step" \
	"$(q "SELECT count(*) FROM interval_summary WHERE window_note LIKE '%wall clock stepped +86400 s; the next row starts 86400 s after%'")" -eq 1
check "a row says the hour's, and that rows run ahead" \
	"$(q "SELECT count(*) FROM interval_summary WHERE window_note LIKE '%wall clock stepped -3600 s; rows run 3600 s ahead%'")" -eq 1
check "the log says both" "$(grep -c 'wall clock stepped' "$WORK/first.log")" -eq 2
grep -q "last row ends 3[56][0-9][0-9] s after the wall clock" "$WORK/restart.log"
check "the restart says it goes on from the last row" $? -eq 0
check "no instance left" "$(instances_left "$INST")" -eq 0
finish
