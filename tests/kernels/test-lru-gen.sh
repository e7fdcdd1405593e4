#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Scenario LRU_GEN on Debian's 6.1 cloud kernel (CONFIG_LRU_GEN=y, off at
# boot): the guest enables MGLRU, mmhitmd records while mmhitm-load runs
# ctxswitch (P1) and aging (P2); the DB it leaves on the disk must show the
# boot with LRU_GEN on, mm_struct.lru_gen.bitmap at the offset bpftool
# finds in that kernel's BTF, one max_seq step per aging pass the load
# reported, and sched_switch counts that account for the load's switches.

. "$(dirname "$0")/lib.sh"
. "$KTESTS/checks.sh"
require_tools python3 bpftool sqlite3
programs_or_skip
work_dir lru-gen
t0=$(date +%s)

kernel_fetch 6.1
initramfs_build "$WORK/initramfs-$KVER.cpio" "$O/mmhitmd" "$O/mmhitm-load" "$(command -v sqlite3)"
disk_seed "$WORK/seed" mmhitm-lru-gen
disk_make "$WORK/disk.img" 128 "$WORK/seed"
qemu_boot lru-gen record 6.1 "$WORK/disk.img" $((DURATION + 60))
disk_pull "$WORK/disk.img" /results/6.1 "$WORK/results"
disk_pull_db "$WORK/disk.img" mmhitm.db "$WORK/db"
DB=$WORK/db/mmhitm.db

check_recording "$WORK/results/6.1" 6.1
echo "scenario lru-gen: $(( $(date +%s) - t0 ))s wall (boot ${BOOT_SECS}s), DB $DB"

# P1 and P2 cannot be attributed on the build machine's kernel: check the
# analyzer on this real LRU_GEN recording (HITM samples written at its real
# mm_structs, vmemmap and symbols; see tests/integration/test-analyze-lru-gen.sh).
MMHITM_LRU_GEN_DB=$DB sh "$TOP/tests/integration/test-analyze-lru-gen.sh" >"$WORK/analyze-lru-gen.log" 2>&1
rc=$?
sed 's/^/    /' "$WORK/analyze-lru-gen.log" | tail -n 8
check "P1 and P2 attributed on the 6.1 recording" $rc -eq 0
