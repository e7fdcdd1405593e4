# SPDX-License-Identifier: GPL-2.0
#
# Guest side of make-layout-fixtures.sh: what `mmhitm import` needs of a
# kernel to attribute a foreign recording, copied out as the kernel shows
# it: its BTF, its /proc/kallsyms (as root: real addresses) and, read
# from /proc/kcore, the values of page_offset_base and vmemmap_base.

out=$1
set -u
uname -r > "$out/release"
cp /sys/kernel/btf/vmlinux "$out/vmlinux.btf" || echo "no /sys/kernel/btf/vmlinux"
echo 0 > /proc/sys/kernel/kptr_restrict
cat /proc/kallsyms > "$out/kallsyms"
grep -wE 'page_offset_base|vmemmap_base|vmalloc_base' /proc/kallsyms > "$out/bases.sym"
