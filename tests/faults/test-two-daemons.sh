#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One daemon per database and per tracefs instance (issue 15, point 1): a
# second one on the same database, or the same instance, refuses naming
# the first's PID and touches neither; the first records on undisturbed.
# After a kill -9 the kernel drops the locks: the next daemon starts and
# removes the stale instance.

. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/mmhitm-test-two.XXXXXX)
DB=$WORK/a.db
INST=mmhitm-test-two-$$
trap 'kill $D1 2>/dev/null; cleanup_instances "$INST" "$INST-b"; rm -rf "$WORK"' EXIT

# Continuous: every fork below must reach the first daemon's learning.
"$O/mmhitmd" --foreground --record-mode continuous --db "$DB" --interval 1s --drain-interval 100ms \
	--instance "$INST" \
	--metrics-file "" 2>"$WORK/d1.log" &
D1=$!
wait_until 30 rows_at_least "$DB" 2 || { cat "$WORK/d1.log"; fail "no intervals"; finish; }
check_str "the database lock file holds the daemon's PID" "$(cat "$DB.lock")" "$D1"

"$O/mmhitmd" --foreground --db "$DB" --interval 1s --instance "$INST-b" --duration 5s 2>"$WORK/d2.log"
check "a second daemon on the same database refuses" $? -ne 0
grep -q "Another mmhitmd (PID $D1) is recording into $DB" "$WORK/d2.log"
check "and names the running PID" $? -eq 0
check "it created no instance" "$(instances_left "$INST-b")" -eq 0

"$O/mmhitmd" --foreground --db "$WORK/b.db" --interval 1s --instance "$INST" --duration 5s 2>"$WORK/d3.log"
check "a second daemon on the same instance refuses" $? -ne 0
grep -q "Another mmhitmd (PID $D1) owns the tracefs instance $INST" "$WORK/d3.log"
check "and names the running PID" $? -eq 0
check "it created no database" "$(test -e "$WORK/b.db" && echo made || echo none)" = none
grep -q "Removing stale tracefs instance" "$WORK/d3.log"
check "it did not take the live instance for stale" $? -ne 0

# The first daemon records on at its rate: the forks made now are all
# learned through its instance, and it is still the only writer.
before=$(rows)
"$HELPER" fork 30 >/dev/null
wait_until 20 rows_at_least "$DB" $((before + 2))
check "the first daemon kept writing intervals" $? -eq 0
check "the first daemon is alive" "$(kill -0 $D1 && echo yes)" = yes
check "its learning lost nothing to a second reader" \
	"$(q "SELECT count(*) FROM mm_objects WHERE learned_from = 'fork' AND comm = 'mmhitm-test-hel'")" -ge 30
check "no overlapping intervals" "$(overlaps)" -eq 0

kill -KILL $D1
wait $D1 2>/dev/null
check "kill -9 left the instances" "$(instances_left "$INST")" -eq 2
"$O/mmhitmd" --foreground --db "$DB" --interval 1s --instance "$INST" --duration 3s 2>"$WORK/d4.log"
check "after kill -9 a new daemon starts on the same database and instance" $? -eq 0
grep -q "Removing stale tracefs instance $INST left" "$WORK/d4.log"
check "and removes the stale instance" $? -eq 0
grep -q "Failed to remove stale instance" "$WORK/d4.log"
check "successfully" $? -ne 0
check "no instance after its clean stop" "$(instances_left "$INST")" -eq 0
check "no overlapping intervals" "$(overlaps)" -eq 0
check_str "integrity" "$(q 'PRAGMA integrity_check')" ok
finish
