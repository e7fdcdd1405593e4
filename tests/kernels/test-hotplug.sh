#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Scenario CPU hotplug on Debian's 6.1 and 6.12 cloud kernels: mmhitmd counting
# continuously while CPU 1 goes offline and comes back (guest/hotplug.sh).
# CPU 1 leaves twice: once and back between two of the daemon's looks at
# the online CPUs, once for several looks. Every call made on CPU 1 before
# it left and after it returned, and every call on CPU 0, must be counted
# exactly once: what CPU 1 counted before going offline is kept, and it is
# counted again once back, not twice.

. "$(dirname "$0")/lib.sh"
. "$KTESTS/checks.sh"
require_tools sqlite3
programs_or_skip
work_dir hotplug
t0=$(date +%s)

for series in 6.1 6.12; do
	kernel_fetch $series
	initramfs_build "$WORK/initramfs-$KVER.cpio" "$O/mmhitmd" "$O/tests/mmhitm-test-helper" \
		"$(command -v sqlite3)"
	disk_make "$WORK/disk-$series.img" 64
	qemu_boot "hotplug-$series" hotplug $series "$WORK/disk-$series.img" 90
	disk_pull "$WORK/disk-$series.img" /results/$series "$WORK/results"
	r=$WORK/results/$series
	[ -f "$r/skip" ] && skip "$series: $(cat "$r/skip")"

	sed 's/^/    | /' "$r/guest.log" | tail -n 12
	want=0
	for phase in online1 offline online2 offline2 online3 cpu0; do
		check "$series: phase $phase ran" -f "$r/calls.$phase"
		want=$((want + $(cat "$r/calls.$phase" 2>/dev/null || echo 0)))
	done
	check "$series: mmhitmd stopped cleanly" "$(cat "$r/mmhitmd.rc")" -eq 0
	check "$series: it saw CPU 1 leave and return between two looks" \
		-n "$(grep 'CPU 1 went offline and came back since the last look' "$r/mmhitmd.log")"
	check "$series: it saw CPU 1 leave for a while" \
		-n "$(grep 'CPU 1 went offline; its counts so far are kept' "$r/mmhitmd.log")"
	# once per off-and-on spell (tries of them), once after the long one
	check "$series: it counts CPU 1 again each time ($(cat "$r/tries" 2>/dev/null) tries)" \
		"$(grep -c 'CPU 1 came online: counting there too' "$r/mmhitmd.log")" -eq \
		"$(( $(cat "$r/tries" 2>/dev/null || echo 1) + 1 ))"
	check "$series: every call counted once ($want)" "$(cat "$r/counted")" -eq "$want"
done
echo "scenario hotplug: $(( $(date +%s) - t0 ))s wall"
