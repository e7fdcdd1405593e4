# SPDX-License-Identifier: GPL-2.0
# Sourced by the test-load-*.sh tests, on top of lib.sh: running
# build/mmhitm-load and reading its one-line JSON result.

. "$(dirname "$0")/lib.sh"

LOAD=$O/mmhitm-load
# Not built is a broken build, not something this machine lacks.
[ -x "$LOAD" ] || { echo "FAIL: $LOAD is not built (make all)"; exit 1; }

# json_get FILE KEY: a scalar of the flat object mmhitm-load prints.
json_get() {
	sed -n "s/.*\"$2\": *\(\"[^\"]*\"\|[^,}]*\).*/\1/p" "$1" | tr -d '"'
}

# Tracepoint counting needs tracefs (perf only reads event ids from it).
need_perf_tracepoints() {
	command -v perf >/dev/null || skip "perf is not installed"
	require_tracefs
	perf stat -x, -e syscalls:sys_enter_getpid -o /dev/null -- true >/dev/null 2>&1 ||
		skip "perf cannot count syscall tracepoints here (root? CONFIG_FTRACE_SYSCALLS?)"
}

# perf_count FILE EVENT: the counts perf stat -x, wrote for EVENT, one a line.
perf_count() {
	awk -F, -v ev="$2" '$3 == ev { print $1 }' "$1"
}

# start_bg OUT ARGS...: mmhitm-load in the background with SIGINT at its
# default (a non-interactive shell may ignore it for background jobs); sets $pid.
start_bg() {
	out=$1; shift
	if env --default-signal=INT true 2>/dev/null; then
		env --default-signal=INT "$LOAD" "$@" >"$out" &
	else
		"$LOAD" "$@" >"$out" &
	fi
	pid=$!
}

# await WHAT COMMAND...: polls until COMMAND succeeds, 20 s at most (a
# liveness bound, not a measurement).
await() {
	what=$1; shift
	wait_until 20 "$@" || { fail "timed out waiting for $what"; return 1; }
}

# tasks_of PID: how many threads the process has.
tasks_of() { ls "/proc/$1/task" 2>/dev/null | wc -l; }
