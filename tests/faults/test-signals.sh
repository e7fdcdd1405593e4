#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every signal (issue 15, point 2), with the daemon's stderr on a pipe whose
# reader has left (`mmhitmd --foreground 2>&1 | head -1`): SIGPIPE, SIGUSR1,
# SIGUSR2 and SIGHUP leave it recording (SIGUSR2 writes a partial row at
# once); SIGTERM, SIGINT, SIGQUIT and SIGALRM stop it cleanly: exit 0, the
# partial interval written, no instance left.

. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/mmhitm-test-sig.XXXXXX)
INST=mmhitm-test-sig-$$
trap 'p=$(cat "$WORK"/*.db.lock 2>/dev/null); [ -n "$p" ] && kill $p 2>/dev/null; cleanup_instances "$INST"; rm -rf "$WORK"' EXIT

# start NAME: a daemon whose stderr pipe loses its reader after one line.
# Sets DB and PID (the daemon's, from its lock file).
start() {
	DB=$WORK/$1.db
	rm -f "$WORK/$1.rc"
	( "$O/mmhitmd" --foreground --db "$DB" --interval 1s --drain-interval 100ms \
		--instance "$INST" --metrics-file "" 2>&1; echo $? >"$WORK/$1.rc" ) | head -1 >/dev/null &
	wait_until 30 rows_at_least "$DB" 2 || { fail "$1: no intervals"; return 1; }
	PID=$(cat "$DB.lock")
	# A log line now hits the closed pipe: SIGUSR1 logs one.
	kill -USR1 "$PID"
	next_row
}

# next_row: waits for the daemon's next interval row (it went round its
# loop since the last signal, and was alive to write it).
next_row() {
	wait_until 20 rows_at_least "$DB" $(( $(rows) + 1 ))
}

# stops_cleanly NAME SIGNAL
stops_cleanly() {
	before=$(rows)
	kill -"$2" "$PID"
	wait_until 30 test -s "$WORK/$1.rc"
	check "$1: SIG$2 stopped it with exit 0" "$(cat "$WORK/$1.rc" 2>/dev/null)" = 0
	check "$1: the partial interval was written" "$(rows)" -gt "$before"
	check "$1: the last row is partial" "$(q 'SELECT partial FROM intervals ORDER BY interval_id DESC LIMIT 1')" -eq 1
	check "$1: no instance left" "$(instances_left "$INST")" -eq 0
	check_str "$1: integrity" "$(q 'PRAGMA integrity_check')" ok
}

# Signals it survives, each sent after its stderr reader left.
start survive || finish
for sig in PIPE USR1 HUP; do
	kill -"$sig" "$PID"
	next_row
	check "SIG$sig: still running" "$(kill -0 "$PID" 2>/dev/null && echo yes)" = yes
done
before=$(rows)
kill -USR2 "$PID"
# Only the first row and SIGUSR2's are partial while it runs.
wait_until 5 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals WHERE partial AND interval_id > $before') -ge 1 ]"
check "SIGUSR2 wrote the partial interval at once" $? -eq 0
check "SIGUSR2: still running" "$(kill -0 "$PID" 2>/dev/null && echo yes)" = yes
check "intervals still contiguous" "$(contiguous)" -eq 0
stops_cleanly survive TERM

# Signals that stop it, each like SIGTERM.
for sig in INT QUIT ALRM; do
	start "$sig" || continue
	stops_cleanly "$sig" "$sig"
done
finish
