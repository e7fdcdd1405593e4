#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tlbflush (P4) end to end: every loop is one mmap and one munmap of 1 MiB
# and 256 madvise(4 KiB, MADV_DONTNEED) calls, as the kernel counted them;
# every zapped page was faulted in again (written, then read as zero).
. "$(dirname "$0")/load-lib.sh"
need_perf_tracepoints

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
res=$tmp/res.json
page=$(getconf PAGESIZE)
pages=$((1048576 / page))
loops=25 threads=2

perf stat -x, -o "$tmp/perf" \
	-e syscalls:sys_enter_madvise --filter "behavior == 4 && len_in == $page" \
	-e syscalls:sys_enter_munmap --filter 'len == 1048576' \
	-e syscalls:sys_enter_mmap --filter 'len == 1048576' \
	-e page-faults -- \
	"$LOAD" tlbflush --threads $threads --loops $loops --json >"$res"
check_str "exit" $? 0
n=$((loops * threads))
check_str "reported loops" "$(json_get "$res" loops)" $n
check_str "reported zaps" "$(json_get "$res" madvise_calls)" $((n * pages))
check_str "pages read back" "$(json_get "$res" zero_checks)" $((n * pages))
check_str "pages not zero" "$(json_get "$res" nonzero_reads)" 0
check_str "madvise(MADV_DONTNEED, one page) syscalls" \
	"$(perf_count "$tmp/perf" syscalls:sys_enter_madvise)" $((n * pages))
check_str "munmap(1 MiB) syscalls" "$(perf_count "$tmp/perf" syscalls:sys_enter_munmap)" $n
check_str "mmap(1 MiB) syscalls" "$(perf_count "$tmp/perf" syscalls:sys_enter_mmap)" $n
# Per page and loop: the write faults a page in, the read after the zap
# faults the zero page in. Other faults (loading, stacks) only add.
check "2 faults per zapped page" $((2 * n * pages)) -le "$(perf_count "$tmp/perf" page-faults)"

start_bg "$res" tlbflush --threads 2 --duration 0 --json
await "the workers" sh -c "[ \$(ls /proc/$pid/task 2>/dev/null | wc -l) -ge 3 ]"
kill -INT "$pid"
wait "$pid"
check_str "exit after SIGINT" $? 0
check_str "interrupted" "$(json_get "$res" interrupted)" true
check_str "pages not zero" "$(json_get "$res" nonzero_reads)" 0
finish
