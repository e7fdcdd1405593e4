#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Regenerates tests/fixtures/kernels/: boots Debian's 6.1 and 6.12 cloud
# kernels (the ones make check-kernels uses) and extracts from each
# booted kernel what attribution of a foreign recording rests on: a small
# BTF with the real layouts of mm_struct, page, folio and lruvec
# (tests/integration/btf_extract.py) and the kallsyms lines of the
# functions and data symbols the attribution tests use. Not part of any
# test run: the fixtures are committed, with their provenance.

. "$(dirname "$0")/lib.sh"
require_tools python3 bpftool
work_dir layouts
dest=$TOP/tests/fixtures/kernels

for series in 6.1 6.12; do
	kernel_fetch $series
	initramfs_build "$WORK/initramfs-$KVER.cpio"
	disk_make "$WORK/disk-$series.img" 64
	qemu_boot "layouts-$series" layouts "$series" "$WORK/disk-$series.img" 60
	disk_pull "$WORK/disk-$series.img" "/results/$series" "$WORK/results"
	r=$WORK/results/$series
	check "$series: the guest ran $KVER" "$(cat "$r/release")" = "$KVER"
	mkdir -p "$dest/$KVER"
	python3 "$TOP/tests/integration/btf_extract.py" "$r/vmlinux.btf" "$dest/$KVER/layout.btf" ||
		fail "btf_extract.py failed"
	python3 "$TOP/tests/integration/btf_extract.py" --kallsyms "$r/kallsyms" \
		"$dest/$KVER/kallsyms" || fail "kallsyms extraction failed"
	echo "$KPKG ($(basename "$(ls "$KERNEL_CACHE/${KPKG}_"*.deb | tail -n1)"))" > "$dest/$KVER/package"
	echo "$series: $dest/$KVER"
done
