#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A full file system at start and at stop (issue 15, point 3; mid-run
# folding is tests/integration/test-disk-full.sh): a start on a full disk
# waits, leaves no empty database file when stopped meanwhile, and records
# once space returns; a stop while full retries for stop_retry, then says
# how many intervals it lost and which time range, once.

. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/mmhitm-test-full2.XXXXXX)
MNT=$WORK/small
INST=mmhitm-test-full2-$$
mkdir "$MNT"
mount -t tmpfs -o size=2m mmhitm-test "$MNT" || skip "cannot mount a small tmpfs"
trap 'kill $DPID 2>/dev/null; wait $DPID 2>/dev/null; cleanup_instances "$INST"; umount "$MNT"; rm -rf "$WORK"' EXIT
DB=$MNT/t.db
fill() { dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null; }
start() {	# LOG [flags]
	log=$1; shift
	"$O/mmhitmd" --foreground --db "$DB" --interval 1s --drain-interval 100ms --instance "$INST" \
		--metrics-file "" "$@" 2>"$WORK/$log" &
	DPID=$!
}

# Full at start, stopped while it waits.
fill
start wait.log
wait_until 15 grep -q "Cannot open the database yet" "$WORK/wait.log"
check "start on a full disk: waits, says why" $? -eq 0
sleep 1.5
check "start on a full disk: still running" "$(kill -0 $DPID 2>/dev/null && echo yes)" = yes
kill -TERM $DPID
wait $DPID
check "stopped while waiting: exit 0" $? -eq 0
check "stopped while waiting: no empty database file left" "$(ls "$MNT" | grep -Ec '^t\.db(-.*)?$')" -eq 0

# Full at start, then space returns.
start resume.log
wait_until 15 grep -q "Cannot open the database yet" "$WORK/resume.log"
check "start on a full disk again: waits" $? -eq 0
rm -f "$MNT/filler"
wait_until 60 rows_at_least "$DB" 2
check "start: recording once space returned" $? -eq 0
grep -q "Could open the database after waiting" "$WORK/resume.log"
check "start: says it could" $? -eq 0
check "start: the retries repeated no error" "$(grep -c 'disk is full' "$WORK/resume.log")" -le 1
kill -TERM $DPID
wait $DPID
check "clean stop" $? -eq 0

# Full at stop: stop_retry 2s, then the loss is said exactly.
start stop.log --stop-retry 2s
wait_until 30 rows_at_least "$DB" $(( $(rows) + 2 ))
fill
before=$(rows)
sleep 3
kill -TERM $DPID
wait $DPID
check "stop while full: exit 1 (data lost)" $? -eq 1
grep -Eq "Lost [0-9]+ intervals that could not be written \(No space left on device\): .* to .* \([0-9.]+ s, start_ns [0-9]+ to [0-9]+\)" \
	"$WORK/stop.log"
check "stop while full: says how many intervals and which time range" $? -eq 0
grep "Lost " "$WORK/stop.log"
lost=$(sed -n 's/.*Lost \([0-9]*\) intervals.*/\1/p' "$WORK/stop.log")
check "stop while full: the 3 s full and the partial one" "${lost:-0}" -ge 3
check "stop while full: the failure logged once" "$(grep -c 'Failed to write the interval' "$WORK/stop.log")" -eq 1
check "no instance left" "$(instances_left "$INST")" -eq 0
rm -f "$MNT/filler"
check "no row written while full" "$(rows)" -le $((before + 1))
check_str "integrity" "$(q 'PRAGMA integrity_check')" ok
finish
