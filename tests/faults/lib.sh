# SPDX-License-Identifier: GPL-2.0
# Shared by the fault tests: the integration tests' helpers, plus daemon
# start/stop wrappers. Sourced, never run.

. "$(dirname "$0")/../integration/lib.sh"
require_root
require_tracefs
command -v sqlite3 >/dev/null || skip "needs sqlite3"

# Removes our instances should a test die half way (never another's).
cleanup_instances() {
	for i in "$@"; do
		for n in "$i" "$i-win" "$i-flight"; do
			[ -d "$TRACING/instances/$n" ] && rmdir "$TRACING/instances/$n" 2>/dev/null
		done
	done
	true
}

rows() { sqlite3 "$DB" 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0; }
rows_at_least() { [ "$(sqlite3 "$1" 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0)" -ge "$2" ]; }
instances_left() { ls -d "$TRACING/instances/$1" "$TRACING/instances/$1-win" "$TRACING/instances/$1-flight" 2>/dev/null | wc -l; }
# contiguous [FIRST_ID]: gaps between the rows of one daemon's run from FIRST_ID.
contiguous() {
	q "SELECT count(*) FROM intervals a JOIN intervals b ON b.interval_id = a.interval_id + 1
	   WHERE a.interval_id >= ${1:-0} AND b.start_ns != a.end_ns"
}
overlaps() {
	q 'SELECT count(*) FROM intervals a JOIN intervals b ON a.interval_id < b.interval_id
	   AND b.start_ns < a.end_ns AND a.start_ns < b.end_ns'
}

# hold_lock DB SECONDS: holds its write lock in the background ($HOLDER);
# returns once it is held.
hold_lock() {
	rm -f "$WORK/held"
	python3 tests/faults/hold-lock.py "$1" "$2" "$WORK/held" &
	HOLDER=$!
	wait_until 10 test -e "$WORK/held" || fail "could not take the write lock of $1"
}
