#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A daemon killed with SIGKILL mid-run: the database keeps every interval
# it had committed and passes integrity_check; the tracefs instance it
# left behind is removed by the next start, which records on.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs

WORK=$(mktemp -d /tmp/mmhitm-test-crash.XXXXXX)
DB=$WORK/t.db
INST=mmhitm-test-crash-$$
trap 'rm -rf "$WORK"; for i in "$INST" "$INST-win"; do [ -d "$TRACING/instances/$i" ] && rmdir "$TRACING/instances/$i"; done' EXIT

"$O/mmhitmd" --foreground --db "$DB" --interval 1s --drain-interval 100ms --instance "$INST" \
	2>"$WORK/daemon.log" &
DPID=$!
committed() { sqlite3 "$DB" 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0; }
wait_until 30 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0) -ge 3 ]" ||
	{ cat "$WORK/daemon.log"; fail "fewer than 3 intervals in 30 s"; finish; }
# Keep the DB busy while we kill: a workload of forks and page-cache writes.
"$HELPER" fork 20 >/dev/null &
before=$(committed)
kill -KILL $DPID
wait $DPID 2>/dev/null
wait

check_str "integrity after SIGKILL" "$(q 'PRAGMA integrity_check')" ok
check "every interval committed before the kill is still there" "$(committed)" -ge "$before"
check "the killed daemon left its instances" "$(test -d "$TRACING/instances/$INST" && test -d "$TRACING/instances/$INST-win" && echo left)" = left
check "intervals still contiguous" "$(q 'SELECT count(*) FROM intervals a JOIN intervals b ON b.interval_id = a.interval_id + 1 WHERE b.start_ns != a.end_ns')" -eq 0

after_kill=$(committed)
"$O/mmhitmd" --foreground --db "$DB" --interval 1s --duration 3s --instance "$INST" 2>"$WORK/daemon2.log"
check "restart on the same DB and instance" $? -eq 0
grep -q "Removing stale tracefs instance $INST" "$WORK/daemon2.log"
check "the restart removed the stale instance first" $? -eq 0
check "the restart recorded on" "$(committed)" -gt "$after_kill"
check "one boot, the same one" "$(q 'SELECT count(*) FROM boots')" -eq 1
check "and its instances are gone after a clean stop" "$(ls -d "$TRACING/instances/$INST"* 2>/dev/null | wc -l)" -eq 0
check_str "integrity after the restart" "$(q 'PRAGMA integrity_check')" ok

finish
