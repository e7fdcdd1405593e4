#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Another writer holds the database's write lock (as a long `mmhitm import`
# does; issue 15, point 3): at start the daemon waits with backoff instead
# of exiting; mid-run the intervals are folded into the next row, whose
# dropped_intervals counts the slots missed, logged once and once on
# recovery; at stop it retries for stop_retry and writes them (what it
# says when it can't: test-disk-full.sh). The lock is held longer than SQLite's 10 s busy
# timeout, so every attempt in the hold fails.

. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3 (holds the lock)"

WORK=$(mktemp -d /tmp/mmhitm-test-locked.XXXXXX)
DB=$WORK/t.db
INST=mmhitm-test-locked-$$
trap 'kill $DPID $HOLDER 2>/dev/null; cleanup_instances "$INST"; [ -n "$KEEP" ] || rm -rf "$WORK"' EXIT

"$O/mmhitmd" --foreground --db "$DB" --interval 1s --instance "$INST" --duration 2s 2>/dev/null
check "a database to hold" "$(rows)" -ge 1

# At start: held until the daemon says it waits (its first attempt gave up
# after the busy timeout), however long its start took.
hold_lock "$DB" 120
"$O/mmhitmd" --foreground --db "$DB" --interval 1s --drain-interval 100ms --instance "$INST" \
	--metrics-file "" 2>"$WORK/start.log" &
DPID=$!
wait_until 60 grep -q "Cannot store the boot yet" "$WORK/start.log"
check "start: says it waits for the database" $? -eq 0
check "start: waiting, not exited" "$(kill -0 $DPID 2>/dev/null && echo yes)" = yes
kill -TERM $HOLDER	# commits and lets go
wait $HOLDER
before=$(rows)
first=$((before + 1))
wait_until 30 rows_at_least "$DB" $((before + 2))
check "start: recording once the lock is released" $? -eq 0

# Mid-run: 13 s without a write.
hold_lock "$DB" 13
wait $HOLDER
wait_until 30 sh -c "grep -q 'Writing intervals again' '$WORK/start.log'"
check "mid-run: writing resumed" $? -eq 0
check "mid-run: the failure logged once" "$(grep -c 'Failed to write the interval' "$WORK/start.log")" -eq 1
check "mid-run: no SQL error repeated per attempt" "$(grep -c 'database is locked' "$WORK/start.log")" -le 2
check "mid-run: one row folds the missed slots" "$(q 'SELECT max(dropped_intervals) FROM intervals')" -ge 8
check "mid-run: and covers their time" "$(contiguous $first)" -eq 0

# SIGTERM in a hold: retried (stop_retry 20 s by default) and written.
hold_lock "$DB" 14
before=$(rows)
kill -TERM $DPID
wait $DPID
check "stop in a hold: clean exit once written" $? -eq 0
grep -q "Lost " "$WORK/start.log"
check "stop in a hold: nothing lost" $? -ne 0
check "stop in a hold: the final row folds the hold" \
	"$(q 'SELECT dropped_intervals FROM intervals ORDER BY interval_id DESC LIMIT 1')" -ge 5
check "stop in a hold: contiguous" "$(contiguous $first)" -eq 0
wait $HOLDER

check "no instance left" "$(instances_left "$INST")" -eq 0
check_str "integrity" "$(q 'PRAGMA integrity_check')" ok
finish
