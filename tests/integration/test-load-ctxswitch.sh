#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ctxswitch (P1) end to end: the switches it reports are switches the
# kernel counted (perf's context-switches for its tasks, /proc/stat ctxt
# for the machine), its layout is one process of 2 threads per CPU, or
# with --private-mm one process per CPU, each thread pinned to its CPU,
# and SIGINT prints a partial result.
. "$(dirname "$0")/load-lib.sh"
command -v perf >/dev/null || skip "perf is not installed"
perf stat -x, -e context-switches -o /dev/null -- true >/dev/null 2>&1 ||
	skip "perf cannot count context switches here"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
res=$tmp/res.json
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)

ctxt() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }
before=$(ctxt)
perf stat -x, -o "$tmp/perf" -e context-switches -- \
	"$LOAD" ctxswitch --cpus "$cpu" --loops 20000 --json >"$res"
check_str "exit" $? 0
after=$(ctxt)
reported=$(json_get "$res" context_switches)
counted=$(perf_count "$tmp/perf" context-switches)
check_str "yields" "$(json_get "$res" yields)" 40000
check "some switches" 1 -le "$reported"
check "reported <= perf's count for its tasks" "$reported" -le "$counted"
# The rest is outside the measured window: start, gate, exit, the main
# thread; a bounded number per task (3 tasks), not a rate.
check "perf's count - reported" $((counted - reported)) -le $((3 * 32))
check "reported <= /proc/stat ctxt delta" "$reported" -le $((after - before))

ncpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' '\n' |
	awk -F- '{ n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n }')

# pinned_cpus TASKS...: their Cpus_allowed_list values, sorted.
pinned_cpus() {
	for t in "$@"; do
		sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status"
	done | sort -n | tr '\n' ' '
}
want_pins=$(for c in $(seq 0 $((ncpus - 1))); do echo "$c"; echo "$c"; done |
	sort -n | tr '\n' ' ')
# Only right for a contiguous 0..n-1 affinity; else compare counts only.
contiguous=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
[ "$contiguous" = "0-$((ncpus - 1))" ] || [ "$ncpus" = 1 -a "$contiguous" = 0 ] || want_pins=

# Shared mm: one process, main thread + 2 workers per CPU.
start_bg "$res" ctxswitch --duration 0 --json
if await "the workers" sh -c "[ \$(ls /proc/$pid/task 2>/dev/null | wc -l) -eq $((2 * ncpus + 1)) ]"; then
	check_str "child processes" "$(pgrep -P "$pid" | wc -l)" 0
	workers=$(ls -d /proc/$pid/task/* | grep -v "/task/$pid\$")
	[ -z "$want_pins" ] || check_str "worker pinning" "$(pinned_cpus $workers)" "$want_pins"
fi
kill -INT "$pid"; wait "$pid"
check_str "exit after SIGINT" $? 0
check_str "interrupted" "$(json_get "$res" interrupted)" true
check_str "mm" "$(json_get "$res" mm)" shared

# --private-mm: one process per CPU, two threads each.
start_bg "$res" ctxswitch --private-mm --duration 0 --json
all_up() {
	[ "$(pgrep -P "$pid" | wc -l)" -eq "$ncpus" ] || return 1
	for c in $(pgrep -P "$pid"); do
		[ "$(tasks_of "$c")" -eq 2 ] || return 1
	done
}
if await "the groups" all_up; then
	tasks=
	for c in $(pgrep -P "$pid"); do tasks="$tasks $(ls -d /proc/$c/task/*)"; done
	[ -z "$want_pins" ] || check_str "worker pinning" "$(pinned_cpus $tasks)" "$want_pins"
	check_str "threads in the parent" "$(tasks_of "$pid")" 1
fi
kids=$(pgrep -P "$pid")
kill -INT "$pid"; wait "$pid"
check_str "exit after SIGINT" $? 0
check_str "interrupted" "$(json_get "$res" interrupted)" true
check_str "processes" "$(json_get "$res" processes)" "$ncpus"
for c in $kids; do
	[ ! -d "/proc/$c" ] || fail "group process $c outlived the run"
done
finish
