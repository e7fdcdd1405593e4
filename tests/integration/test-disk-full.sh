#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The database's file system fills up while mmhitmd records: it must keep
# running, log the failure once, fold the intervals it could not write into
# the next one, and resume by itself when space returns.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs

WORK=$(mktemp -d /tmp/mmhitm-test-full.XXXXXX)
MNT=$WORK/small
INST=mmhitm-test-full-$$
mkdir "$MNT"
mount -t tmpfs -o size=2m mmhitm-test "$MNT" || skip "cannot mount a small tmpfs"
trap 'kill $DPID 2>/dev/null; umount "$MNT"; rm -rf "$WORK"' EXIT
DB=$MNT/t.db

"$O/mmhitmd" --foreground --record-mode continuous --db "$DB" --interval 1s --drain-interval 100ms --instance "$INST" \
	--metrics-file "" 2>"$WORK/daemon.log" &
DPID=$!
rows() { sqlite3 "$DB" 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0; }
wait_until 20 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0) -ge 2 ]" ||
	{ cat "$WORK/daemon.log"; fail "no intervals"; finish; }

# Fill the file system, and keep it full for several intervals.
dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null
before=$(rows)
"$HELPER" fork 30 >"$WORK/fork.out"	# activity the daemon must not lose
forks=$(awk '/^pid/ { printf "%s%s", n++ ? "," : "", $2 }' "$WORK/fork.out")
sleep 4		# full for several intervals: time the test owns
# A write failed (the first may still fit in the WAL).
wait_until 20 grep -q 'Failed to write the interval' "$WORK/daemon.log"
check "daemon alive while the disk is full" "$(kill -0 $DPID && echo yes)" = yes
check "no interval written while full" "$(rows)" -le $((before + 1))
check "the failure logged once" "$(grep -c 'Failed to write the interval' "$WORK/daemon.log")" -eq 1
# In the user's words, and alone: the statement that failed says nothing
# above debug (the daemon's log here is at info).
check_str "the failure says why" "$(grep -o 'Failed to write the interval.*' "$WORK/daemon.log")" \
	"Failed to write the interval, keeping its data for the next one: the disk is full"
check "no other line says the failure" "$(grep -ci 'SQL\|database or disk is full' "$WORK/daemon.log")" -eq 0

rm -f "$MNT/filler"
wait_until 20 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0) -gt $((before + 1)) ]"
check "writing resumed once space returned" $? -eq 0
grep -q "Writing intervals again after" "$WORK/daemon.log"
check "the recovery logged" $? -eq 0
kill -TERM $DPID
wait $DPID
check "clean exit" $? -eq 0

check "a row says it folded the failed intervals" "$(q 'SELECT max(dropped_intervals) FROM intervals')" -ge 2
check "and covers their time: no gap in the intervals" \
	"$(q 'SELECT count(*) FROM intervals a JOIN intervals b ON b.interval_id = a.interval_id + 1 WHERE b.start_ns != a.end_ns')" -eq 0
check "the children forked while full were learned anyway" \
	"$(q "SELECT count(DISTINCT tgid) FROM mm_objects WHERE learned_from = 'fork' AND tgid IN ($forks)")" -eq 30
check_str "integrity" "$(q 'PRAGMA integrity_check')" ok
finish
