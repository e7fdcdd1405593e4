# SPDX-License-Identifier: GPL-2.0
# Sourced by the test-load-*.sh tests: running build/mmhitm-load and
# reading its one-line JSON result.

O=${O:-build}
LOAD=$O/mmhitm-load
fails=0

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
finish() { [ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }; exit 0; }

[ -x "$LOAD" ] || skip "$LOAD is not built"

# json_get FILE KEY: a scalar of the flat object mmhitm-load prints.
json_get() {
	sed -n "s/.*\"$2\": \(\"[^\"]*\"\|[^,}]*\).*/\1/p" "$1" | tr -d '"'
}

# expect_eq WHAT GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1: got '$2', want '$3'"; fi
}

# expect_le WHAT A B: A <= B, as integers
expect_le() {
	if [ "$2" -le "$3" ] 2>/dev/null; then pass "$1 ($2 <= $3)"; else fail "$1: $2 > $3"; fi
}

# Tracepoint counting needs tracefs; mount it if it is missing (never
# touching the top-level instance: perf only reads event ids).
need_perf_tracepoints() {
	command -v perf >/dev/null || skip "perf is not installed"
	if [ ! -d /sys/kernel/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
			skip "tracefs is not mounted and cannot be"
	fi
	perf stat -x, -e syscalls:sys_enter_getpid -o /dev/null -- true >/dev/null 2>&1 ||
		skip "perf cannot count syscall tracepoints here (root? CONFIG_FTRACE_SYSCALLS?)"
}

# perf_count FILE EVENT: the count perf stat -x, wrote for EVENT.
perf_count() {
	awk -F, -v ev="$2" '$3 == ev { print $1 }' "$1"
}

# Starts mmhitm-load in the background with SIGINT at its default (a
# non-interactive shell may ignore it for background jobs); sets $pid.
start_bg() {	# OUT ARGS...
	out=$1; shift
	if env --default-signal=INT true 2>/dev/null; then
		env --default-signal=INT "$LOAD" "$@" >"$out" &
	else
		"$LOAD" "$@" >"$out" &
	fi
	pid=$!
}

# wait_for DESCRIPTION COMMAND...: polls until COMMAND succeeds (20 s at most;
# a liveness bound, not a measurement).
wait_for() {
	what=$1; shift
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -lt 200 ] || { fail "timed out waiting for $what"; return 1; }
		sleep 0.1
	done
}

# tasks_of PID: how many threads the process has.
tasks_of() { ls "/proc/$1/task" 2>/dev/null | wc -l; }
