#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pwrite (P3) end to end: the writes it reports are the pwrite64(fd, buf,
# 1024, 0) syscalls the kernel saw, the file is 1 KiB while it runs, and
# SIGINT prints a partial result and leaves no file behind.
. "$(dirname "$0")/load-lib.sh"
need_perf_tracepoints

dir=$(mktemp -d /dev/shm/mmhitm-test-load.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$dir"' EXIT
res=$dir.json

# N loops on T threads are exactly N*T syscalls of 1 KiB at offset 0.
perf stat -x, -o "$dir.perf" -e syscalls:sys_enter_pwrite64 --filter 'count == 1024 && pos == 0' \
	-e syscalls:sys_enter_pwrite64 -- \
	"$LOAD" pwrite --dir "$dir" --threads 3 --loops 4000 --json >"$res"
check_str "exit" $? 0
check_str "reported ops" "$(json_get "$res" ops)" 12000
counts=$(perf_count "$dir.perf" syscalls:sys_enter_pwrite64 | tr '\n' ' ')
check_str "pwrite64(1024 bytes at 0) calls, all pwrite64 calls" "$counts" "12000 12000 "
check_str "file size at the end" "$(json_get "$res" file_bytes)" 1024
check_str "not interrupted" "$(json_get "$res" interrupted)" false
rm -f "$dir.perf"

# While it runs: 1 KiB, and no name in the directory.
start_bg "$res" pwrite --dir "$dir" --threads 2 --duration 0 --json
fd_of_file() {
	for f in /proc/$pid/fd/*; do
		case $(readlink "$f" 2>/dev/null) in
		*mmhitm-load-pwrite*) echo "$f"; return 0 ;;
		esac
	done
	return 1
}
if await "the file to be open" fd_of_file >/dev/null; then
	f=$(fd_of_file)
	for i in 1 2 3; do
		check_str "size while running ($i)" "$(stat -L -c %s "$f")" 1024
	done
	check_str "names in $dir while running" "$(ls -A "$dir" | wc -l)" 0
fi
kill -INT "$pid"
wait "$pid"
check_str "exit after SIGINT" $? 0
check_str "interrupted" "$(json_get "$res" interrupted)" true
check_str "file size at the end" "$(json_get "$res" file_bytes)" 1024
[ "$(json_get "$res" ops)" -ge 0 ] 2>/dev/null || fail "no ops count in the partial result"
check_str "names left in $dir" "$(ls -A "$dir" | wc -l)" 0
rm -f "$res"
finish
