#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make stress (not in make check, whose time is CI's): the tests that have
# flaked, each STRESS_RUNS times (default 100), in turn, beside load, so
# that a failure one run in fifty shows before it reaches CI. The load
# (STRESS_LOAD=no: none, the tests alone):
#   - a CPU hog per online CPU, busy at the daemon's priority;
#   - a dd loop writing 256 MiB and fsyncing it, again and again;
#   - a second tracer: a tracefs instance of its own recording sched_switch,
#     sched_process_fork and the mm events the daemon counts, as another
#     tool on a fleet host would (its tracepoints are armed all along, so
#     the daemon's arming and disarming patch text that stays live).
# STRESS_TESTS names the tests (default: the three the issue "A CI you can
# trust" caused and fixed). Each failed run's output is kept under
# STRESS_KEEP (default /var/tmp/mmhitm-stress); the last lines are a row a
# test (runs, failures, median and longest seconds) and "N passed, N
# failed". Never the top-level tracing instance.

. "$(dirname "$0")/lib.sh"
require_root

STRESS_RUNS=${STRESS_RUNS:-100}
STRESS_LOAD=${STRESS_LOAD:-yes}
STRESS_TESTS=${STRESS_TESTS:-integration/test-quiet integration/test-snapshot integration/test-daemon}
STRESS_KEEP=${STRESS_KEEP:-/var/tmp/mmhitm-stress}
WORK=$(mktemp -d /tmp/mmhitm-stress.XXXXXX)
TRACER=mmhitm-stress-tracer-$$
LOADS=
trap 'stop_load; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

for t in $STRESS_TESTS; do
	[ -f "tests/$t.sh" ] || { echo "stress: no test tests/$t.sh" >&2; exit 2; }
done
mkdir -p "$STRESS_KEEP" || exit 1

start_load() {
	n=$(nproc)
	while [ "$n" -gt 0 ]; do
		sh -c 'while :; do :; done' &
		LOADS="$LOADS $!"
		n=$((n - 1))
	done
	sh -c "while :; do dd if=/dev/zero of='$WORK/dd' bs=1M count=256 conv=fsync 2>/dev/null; done" &
	LOADS="$LOADS $!"
	if mkdir "$TRACING/instances/$TRACER" 2>/dev/null; then
		echo 1024 >"$TRACING/instances/$TRACER/buffer_size_kb"
		for e in sched/sched_switch sched/sched_process_fork pagemap/mm_lru_insertion \
			 pagemap/mm_lru_activate tlb/tlb_flush; do
			[ -e "$TRACING/instances/$TRACER/events/$e/enable" ] &&
				echo 1 >"$TRACING/instances/$TRACER/events/$e/enable"
		done
		echo 1 >"$TRACING/instances/$TRACER/tracing_on"
	else
		echo "stress: no second tracer (cannot make a tracefs instance)"
	fi
	echo "stress: load: $(nproc) CPU hogs, a dd loop, a second tracer ($TRACER)"
}

stop_load() {
	[ -n "$LOADS" ] && kill $LOADS 2>/dev/null
	wait 2>/dev/null
	LOADS=
	# the instance goes once nothing is armed in it
	if [ -d "$TRACING/instances/$TRACER" ]; then
		echo 0 >"$TRACING/instances/$TRACER/tracing_on"
		echo 0 >"$TRACING/instances/$TRACER/events/enable"
		rmdir "$TRACING/instances/$TRACER"
	fi
}

top_before=$(top_level_state)
[ "$STRESS_LOAD" = no ] || start_load
echo "stress: $STRESS_RUNS runs of: $STRESS_TESTS"

i=0
while [ $i -lt "$STRESS_RUNS" ]; do
	i=$((i + 1))
	for t in $STRESS_TESTS; do
		name=$(basename "$t")
		t0=$(date +%s)
		O=$O sh "tests/$t.sh" >"$WORK/out" 2>&1
		rc=$?
		secs=$(($(date +%s) - t0))
		echo "$secs" >>"$WORK/$name.secs"
		case $rc in
		0) r=pass ;;
		77) r=skip ;;
		*) r=FAIL
		   cp "$WORK/out" "$STRESS_KEEP/$name.$i.log"
		   echo "$name" >>"$WORK/failed" ;;
		esac
		echo "$r $name run $i/$STRESS_RUNS (${secs}s)$([ $r = FAIL ] &&
			echo ": $STRESS_KEEP/$name.$i.log")"
		[ $r = FAIL ] && tail -5 "$WORK/out" | sed 's/^/    /'
	done
done

stop_load
check_str "top-level instance untouched" "$(top_level_state)" "$top_before"
passed=0 failed=0
for t in $STRESS_TESTS; do
	name=$(basename "$t")
	f=$(grep -cx "$name" "$WORK/failed" 2>/dev/null)
	f=${f:-0}
	sort -n "$WORK/$name.secs" | awk -v n="$name" -v f="$f" -v load="$STRESS_LOAD" '
		{ s[NR] = $1 }
		END { printf "stress: %-14s %d runs, %d failed, median %ds, longest %ds (load %s)\n",
			n, NR, f, s[int((NR + 1) / 2)], s[NR], load }'
	runs=$(wc -l <"$WORK/$name.secs")
	passed=$((passed + runs - f))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$FAILURES" -eq 0 ]
