# SPDX-License-Identifier: GPL-2.0
# Shared by the integration tests: sourced, never run.
#
# A test exits 0 (pass), 77 after printing "SKIP: reason" (cannot run here)
# or anything else (fail). Checks print what they compared.

O=${O:-build}
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP" || exit 1
TRACING=/sys/kernel/tracing
HELPER=$O/tests/mmhitm-test-helper
FAILURES=0
# The real recordings that ship with the repository (tests/fixtures/PROVENANCE);
# MMHITM_FIXTURES points elsewhere. Missing ones fail a test: see fixture().
FIXTURES=${MMHITM_FIXTURES:-$TOP/tests/fixtures/real}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
pass() { echo "ok: $*"; }

# fixture NAME: the path of a real recording; a broken checkout is a failure,
# never a skip.
fixture() {
	[ -f "$FIXTURES/$1" ] || { echo "FAIL: fixture $FIXTURES/$1 is missing" >&2; exit 1; }
	echo "$FIXTURES/$1"
}

require_root() { [ "$(id -u)" = 0 ] || skip "needs root (tracefs, perf counting)"; }

require_tracefs() {
	if ! mountpoint -q "$TRACING"; then
		mount -t tracefs nodev "$TRACING" 2>/dev/null || skip "tracefs cannot be mounted here"
	fi
	[ -d "$TRACING/instances" ] || skip "tracefs has no instances/ (kernel too old)"
}

# Whether this machine's CPUs contend a spinlock at all: the
# lock:contention_begin events perf counts while the helper's lockstorm
# runs (four threads on one page table lock, 1 s). Prints the count, or
# "unknown" when perf cannot count it. A VM whose vCPUs never run at the
# same time counts 0 or next to it (seen on two build VMs: 0 and 1 where
# others count 40k+/s), and no test can cause lock contention there.
lock_contention_probe() {
	command -v perf >/dev/null && [ -x "$HELPER" ] || { echo unknown; return; }
	_probe=$(mktemp /tmp/mmhitm-probe.XXXXXX)
	if perf stat -a -x, -e lock:contention_begin -o "$_probe" -- "$HELPER" lockstorm 1000 \
		>/dev/null 2>&1; then
		awk -F, '$3 == "lock:contention_begin" { n = $1 } END { print (n == "" ? "unknown" : n) }' "$_probe"
	else
		echo unknown
	fi
	rm -f "$_probe"
}

# True unless the probe counted under 1000 contentions (LOCK_PROBE: its
# count, for the message): a storm can be caused here, or nobody knows.
lock_storms_possible() {
	LOCK_PROBE=$(lock_contention_probe)
	[ "$LOCK_PROBE" = unknown ] || [ "$LOCK_PROBE" -ge 1000 ]
}

# check DESCRIPTION ACTUAL OP EXPECTED (OP as for test(1): -eq -ge -le ...)
check() {
	if [ "$2" "$3" "$4" ] 2>/dev/null; then
		pass "$1: $2 $3 $4"
	else
		fail "$1: got '$2', want $3 '$4'"
	fi
}

check_str() {
	if [ "$2" = "$3" ]; then pass "$1: '$2'"; else fail "$1: got '$2', want '$3'"; fi
}

q() { sqlite3 -batch -noheader "$DB" "$1"; }

# wait_until SECONDS COMMAND...: polls every 0.1 s.
wait_until() {
	t=$(( $1 * 10 )); shift
	while [ $t -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# wait_recording SECONDS LOG: until mmhitmd says "Recording into", which it
# says once its counters and /proc baselines are read. The boot row comes
# before those reads: load started on seeing it runs through them, and what
# it does between the counters' read and /proc/vmstat's (a daemon
# preempted there by the load's own processes) is counted by one and not
# the other. test-daemon once saw 2034 mm_lru_activate events against a
# pgactivate of 2024 that way (processes exiting drain their CPU's batch
# of activations at once).
wait_recording() {
	wait_until "$1" grep -q "Recording into" "$2"
}

# The kernel grows the top-level ring buffer to its default size the first
# time it is used after boot: its buffer_size_kb then reads "1410" where
# it read "7 (expanded: 1408)". Before 6.7 any instance enabling an event
# did it (tracing_update_buffers() was global), though nobody wrote the
# top level, and the first test after boot saw it change: done here first,
# through an instance of our own. From 6.7 only a write to the top level
# itself grows it (an enable or filter file, current_tracer, even of the
# tracer it has), so there the change is what these checks look for:
# trace-cmd extract without -k was caught that way.
top_level_expand() {
	grep -q expanded "$TRACING/buffer_size_kb" 2>/dev/null || return 0
	_x=$TRACING/instances/mmhitm-expand-$$
	mkdir "$_x" 2>/dev/null || return 0
	echo 1 >"$_x/events/sched/sched_process_fork/enable" 2>/dev/null
	echo 0 >"$_x/events/sched/sched_process_fork/enable" 2>/dev/null
	rmdir "$_x"
}

# What other tools own and we must never change: the top-level instance.
# What top_level_state hashes, one "file:value" line each (a failed
# comparison can then say what changed).
top_level_dump() {
	top_level_expand
	(cd "$TRACING" && grep -H '' tracing_on current_tracer trace_clock buffer_size_kb \
		set_event 2>/dev/null; find events -name enable -o -name filter -o -name trigger |
		sort | xargs grep -H '' 2>/dev/null)
}

top_level_state() {
	top_level_expand
	(cd "$TRACING" && cat tracing_on current_tracer trace_clock buffer_size_kb set_event \
		2>/dev/null; find events -name enable -o -name filter -o -name trigger | sort |
		xargs cat 2>/dev/null) | md5sum
}

finish() {
	if [ "$FAILURES" -ne 0 ]; then
		echo "$FAILURES checks failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}
