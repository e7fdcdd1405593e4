#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The daemon's sampling pipeline end to end on this PMU-less machine, with
# the one memory-addressed event every kernel has: page-faults (software,
# PERF_SAMPLE_ADDR = the faulting address). Every fault of N fresh pages
# taken in kernel mode must land as its own cache line, in the interval's
# mem_lines, with the symbols of every kernel IP stored for attribution.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs

WORK=$(mktemp -d /tmp/mmhitm-test-sampling.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/t.db
N=300

"$O/mmhitmd" --foreground --record-mode continuous --db "$DB" --interval 1s --duration 60s --instance mmhitm-test-sampling-$$ \
	--sample-events page-faults --sample-period 1 --sample-window 1s --sample-every 1s \
	--sample-budget-ppm 1000000 \
	2>"$WORK/daemon.log" &
DPID=$!
wait_until 20 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0) -ge 1 ]" ||
	{ cat "$WORK/daemon.log"; fail "no intervals"; finish; }
"$HELPER" kfault $N >"$WORK/kfault.out" || fail "helper kfault"
set -- $(awk '/^range/ {print $2, $3}' "$WORK/kfault.out")
lo=$1 hi=$2
# The faults' lines written: the samples drained and an interval flushed.
wait_until 30 sh -c "[ \$(sqlite3 '$DB' \"SELECT count(DISTINCT line_addr) FROM mem_lines WHERE kernel = 1
	AND line_addr >= $lo AND line_addr < $hi AND line_addr % 4096 = 0\") -ge $N ]"
kill -TERM $DPID
wait $DPID
check "clean exit" $? -eq 0

check "every kernel-mode fault of the $N pages is a line of its own" \
	"$(q "SELECT count(DISTINCT line_addr) FROM mem_lines WHERE kernel = 1 AND line_addr >= $lo AND line_addr < $hi AND line_addr % 4096 = 0")" -eq $N
check "sampling described per interval" \
	"$(q "SELECT count(*) FROM sampling WHERE pmu_events LIKE 'page-faults;%'")" -eq "$(q 'SELECT count(*) FROM intervals')"
check "samples counted" "$(q 'SELECT sum(samples_kernel) FROM sampling')" -ge $N
check "lines are the host's cache lines" \
	"$(q "SELECT count(*) FROM mem_lines WHERE line_addr % (SELECT cache_line_size FROM boots) != 0 OR offset >= (SELECT cache_line_size FROM boots)")" -eq 0
check "every sampled kernel IP has its symbol" \
	"$(q 'SELECT count(*) FROM mem_lines m WHERE kernel = 1 AND NOT EXISTS (SELECT 1 FROM ksyms k WHERE m.ip >= k.addr AND m.ip < k.addr + k.size)')" -eq 0
check "kernel callchains interned" "$(q 'SELECT count(*) FROM callchains')" -ge 1
check "PMU-less host still says so" "$(q "SELECT count(*) FROM boots WHERE pmu_kind = 'none'")" -eq 1
finish
