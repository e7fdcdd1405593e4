#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The BTF field layouts mmhitmd records per boot, against bpftool's dump
# of the same kernel's BTF.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs
[ -r /sys/kernel/btf/vmlinux ] || skip "this kernel has no BTF (/sys/kernel/btf/vmlinux)"
command -v bpftool >/dev/null || skip "bpftool is not installed"

WORK=$(mktemp -d /tmp/mmhitm-test-btf.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/t.db
"$O/mmhitmd" --foreground --db "$DB" --interval 1s --duration 1s --instance mmhitm-test-btf-$$ \
	--learn-mm no --learn-pages no --learn-locks no 2>"$WORK/log" || { cat "$WORK/log"; exit 1; }
python3 tests/integration/btf_check.py "$DB" /sys/kernel/btf/vmlinux
check "layouts match bpftool's" $? -eq 0
# With nothing to stream the loop must still sleep: a spin would burn the
# whole second (it did, once). Loose on purpose: 0.5 s of 1 s.
check "the daemon sleeps with learning off" \
	"$(sqlite3 "$DB" 'SELECT sum(cpu_user_ns + cpu_sys_ns) FROM intervals')" -lt 500000000
finish
