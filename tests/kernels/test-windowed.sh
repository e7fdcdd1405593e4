#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Scenario windowed on Debian's 6.12 cloud kernel: mmhitmd records in its
# default mode, windows only, under a steady context-switch load
# (guest/windowed.sh), and the estimates it scaled from its slices must be
# honest against what the kernel counted anyway: over the boot, the
# sched_switch estimate within its stated interval (three standard
# errors) and 5 % of /proc/stat's ctxt delta; every full interval armed,
# with a windowed sched_switch estimate, its standard error and raw count
# (each interval's estimate against its ctxt is printed, not asserted:
# with 2-4 slices, Student's t's tails make a 3-se miss in one of six
# intervals a few percent likely); no count scaled for multiplexing. test-lru-gen and test-rollout record continuously
# (guest/record.sh says why).

. "$(dirname "$0")/lib.sh"
RECORD_MODE=windowed
. "$KTESTS/checks.sh"
require_tools sqlite3 python3
programs_or_skip
work_dir windowed
t0=$(date +%s)

kernel_fetch 6.12
initramfs_build "$WORK/initramfs-$KVER.cpio" "$O/mmhitmd" "$O/mmhitm-load" "$(command -v sqlite3)"
disk_seed "$WORK/seed" mmhitm-windowed
disk_make "$WORK/disk.img" 128 "$WORK/seed"
qemu_boot windowed windowed 6.12 "$WORK/disk.img" $((DURATION + 90))
disk_pull "$WORK/disk.img" /results/6.12 "$WORK/results"
disk_pull_db "$WORK/disk.img" mmhitm.db "$WORK/db"
DB=$WORK/db/mmhitm.db
R=$WORK/results/6.12

check "mmhitmd exited 0" "$(cat "$R/mmhitmd.rc" 2>/dev/null)" = 0
check "the load exited 0" "$(cat "$R/load.rc" 2>/dev/null)" = 0
rel=$(cat "$R/release")
check "one boot of $rel recorded" "$(q "SELECT count(*) FROM boots WHERE kernel_release = '$rel'")" -eq 1
boot=$(q "SELECT boot_id FROM boots WHERE kernel_release = '$rel'")
n=$(q "SELECT count(*) FROM intervals WHERE boot_id = $boot AND partial = 0")
check "$n full intervals for ${DURATION}s at ${INTERVAL}s" "$n" -ge $(( DURATION / INTERVAL - 2 ))
check "recorded windowed (no continuous count)" \
	"$(q "SELECT count(*) FROM event_counts WHERE method = 'continuous'")" -eq 0
q "SELECT i.interval_id, i.partial, round(s.armed_share, 3), i.slices, c.count, c.counted,
	  CAST(sqrt(c.variance) AS INTEGER), i.ctxt
   FROM intervals i JOIN interval_summary s USING (interval_id)
   LEFT JOIN event_counts c ON c.interval_id = i.interval_id AND c.event_id =
	(SELECT event_id FROM event_names WHERE name = 'sched:sched_switch')
   WHERE i.boot_id = $boot ORDER BY i.start_ns" |
	sed 's/^/    interval|partial|armed share|slices|sched_switch estimate|counted|stderr|ctxt: /'
check_windows "$boot" windowed
check_switches "$boot" windowed
echo "scenario windowed: $(( $(date +%s) - t0 ))s wall (boot ${BOOT_SECS}s), DB $DB"
