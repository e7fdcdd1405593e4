#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# aging (P2). Without CONFIG_LRU_GEN it must say so and exit 3, having
# touched nothing. With it (e.g. Debian's 6.1 under QEMU) a short real run:
# every pass creates a generation, every process reads every page each
# round, lru_gen/enabled is restored and no mount is left.
. "$(dirname "$0")/load-lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
res=$tmp/res.json
mounts_before=$(wc -l </proc/self/mountinfo)

if [ ! -e /sys/kernel/mm/lru_gen/enabled ]; then
	"$LOAD" aging --duration 1s --json >"$res" 2>"$tmp/err"
	check_str "exit without CONFIG_LRU_GEN" $? 3
	grep -q "CONFIG_LRU_GEN" "$tmp/err" || fail "the message does not name CONFIG_LRU_GEN"
	check_str "stdout" "$(wc -c <"$res")" 0
	check_str "mounts" "$(wc -l </proc/self/mountinfo)" "$mounts_before"
	finish
fi

[ "$(id -u)" = 0 ] || skip "aging needs root (debugfs, mounts)"
enabled_before=$(cat /sys/kernel/mm/lru_gen/enabled)
if [ $((enabled_before & 1)) -eq 0 ]; then
	"$LOAD" aging --loops 1 >/dev/null 2>&1
	check_str "exit with MGLRU off" $? 4
fi

size=$((16 * 1048576)) procs=2 passes=3
"$LOAD" aging --enable-lru-gen --procs $procs --size $size --loops $passes --json >"$res"
check_str "exit" $? 0
pages=$((size / $(getconf PAGESIZE 2>/dev/null || echo 4096)))
check_str "passes" "$(json_get "$res" passes)" $passes
check_str "processes" "$(json_get "$res" processes)" $procs
check_str "pages read" "$(json_get "$res" pages_read)" $((procs * pages * passes))
[ "$(json_get "$res" value)" != null ] || fail "no median pass time"
check_str "lru_gen/enabled afterwards" "$(cat /sys/kernel/mm/lru_gen/enabled)" "$enabled_before"
check_str "mounts" "$(wc -l </proc/self/mountinfo)" "$mounts_before"
finish
