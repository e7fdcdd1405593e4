#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The QEMU harness itself, with busybox as the only payload: both cloud
# kernels boot, load their virtio modules, bring results back on the disk,
# and have what the mmhitmd scenarios take for granted: LRU_GEN that can be
# enabled, BTF with mm_struct.lru_gen.bitmap, one max_seq step per aging
# pass written to /sys/kernel/debug/lru_gen, and tracefs instances.

. "$(dirname "$0")/lib.sh"
require_tools python3 bpftool
work_dir boot

for series in 6.1 6.12; do
	t0=$(date +%s)
	kernel_fetch $series
	initramfs_build "$WORK/initramfs-$KVER.cpio"
	disk_make "$WORK/disk-$series.img" 32
	qemu_boot "boot-$series" boot "$series" "$WORK/disk-$series.img" 60
	disk_pull "$WORK/disk-$series.img" "/results/$series" "$WORK/results"
	r=$WORK/results/$series

	check "$series: the guest ran $KVER" "$(cat "$r/release")" = "$KVER"
	check "$series: the scenario finished" "$(cat "$r/status")" = done
	if grep -q '^CONFIG_LRU_GEN_ENABLED=y' "$KDIR/boot/config-$KVER"; then
		check "$series: LRU_GEN on at boot (CONFIG_LRU_GEN_ENABLED=y)" "$(cat "$r/lru_gen.before")" != 0x0000
	else
		check "$series: LRU_GEN off at boot (CONFIG_LRU_GEN_ENABLED unset)" "$(cat "$r/lru_gen.before")" = 0x0000
	fi
	check "$series: LRU_GEN enabled by writing y" "$(cat "$r/lru_gen.after")" = 0x0007
	before=$(cat "$r/max_seq.before") after=$(cat "$r/max_seq.after")
	echo "    max_seq $before -> $after after $(cat "$r/aging.passes") passes"
	check "$series: 3 aging passes accepted" "$(cat "$r/aging.passes")" -eq 3
	check "$series: max_seq moved once per aging pass" "$((after - before))" -eq 3
	check "$series: tracefs instance saw sched_switch" "$(cat "$r/trace.sched_switch")" -gt 0
	check "$series: /proc/stat ctxt moved" "$(cat "$r/ctxt.delta")" -gt 0
	check "$series: our tracefs instance removed" -z "$(grep -x mmhitm-kt "$r/instances.after")"
	bitmap=$(echo "mm_struct lru_gen.bitmap" | python3 "$KTESTS/btf-layout.py" "$r/vmlinux.btf")
	echo "    BTF: $bitmap"
	check "$series: BTF has mm_struct.lru_gen.bitmap" -z "$(echo "$bitmap" | grep MISSING)"
	for ev in sched:sched_switch pagemap:mm_lru_activate pagemap:mm_lru_insertion \
		  tlb:tlb_flush lock:contention_begin kmem:kmem_cache_alloc kmem:kmem_cache_free; do
		check "$series: tracepoint $ev" -n "$(grep -x "$ev" "$r/available_events")"
	done
	echo "    lru_gen/vmscan/mmap_lock events: $(grep -E '^(vmscan:.*(lru_gen|aging)|mmap_lock:)' \
		"$r/available_events" | tr '\n' ' ')"
	echo "scenario boot-$series: $(( $(date +%s) - t0 ))s wall"
done
