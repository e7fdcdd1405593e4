#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The flight recorder (daemon/flight.c): during a window, N known forks,
# then SIGUSR1: a trace.dat appears in snapshot_dir, is listed in table
# snapshots (trigger 'SIGUSR1'), trace-cmd report reads it, it holds all
# N forks, and every event in it falls in the snapshot's time range (the
# file's boot-clock times plus trace_offset_ns). `mmhitm snapshot --wait`
# takes another (trigger 'request'). snapshot_max_count keeps the newest
# ones and marks the removed ones; a snapshot_max_size smaller than one
# snapshot removes it at once. A snapshot that fails (a full disk, or a
# directory that cannot be made, the instance gone) is logged and the
# daemon keeps writing intervals. A lock-contention storm seen in a window
# takes a snapshot by itself (trigger 'lock-storm') that holds the
# contention. The daemon writes the trace.dat itself (daemon/tracedat.c):
# under strace, no exec, no namespace, no mount, no tracefs file opened to
# write outside our instances. Killed while it saves, it leaves no partial
# file. The flight instance is gone after each run; the top-level instance
# is never touched.

. "$(dirname "$0")/lib.sh"

require_root
require_tracefs
command -v trace-cmd >/dev/null 2>&1 || skip "trace-cmd is not installed (Debian: trace-cmd)"
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
[ -e "$TRACING/events/sched/sched_process_fork/enable" ] || skip "kernel lacks sched_process_fork"
TMP=$(mktemp -d /tmp/mmhitm-test-snapshot-XXXXXX)
INST=mmhitm-test-snap-$$
N=10
D=
trap '[ -n "$D" ] && kill $D 2>/dev/null; wait 2>/dev/null; mountpoint -q "$TMP/full" && umount "$TMP/full"; rm -rf "$TMP"' EXIT
top_before=$(top_level_state)
FLIGHT_EN=$TRACING/instances/$INST-flight/events/sched/sched_process_fork/enable
STRACE=$(command -v strace || true)

# start_daemon NAME DURATION ARGS...: one learning window of 5 s per 10 s,
# also while this machine is quiet (quiet_cpu 0: no interval without one)
start_daemon() {
	name=$1 dur=$2; shift 2
	DB=$TMP/$name.db
	"$O/mmhitmd" --foreground --db "$DB" --instance "$INST" --interval 10s --window 5s --snapshots yes \
		--window-slices 1 --overhead-budget 100% --quiet-cpu 0 --analyze no --duration "$dur" \
		"$@" 2>"$TMP/$name.log" &
	D=$!
	wait_until 90 sh -c "grep -q 'Recording into' '$TMP/$name.log'" ||
		{ fail "$name: daemon did not start: $(cat "$TMP/$name.log")"; finish; }
}
stop_daemon() {
	kill "$D" 2>/dev/null
	wait "$D"
	rc=$?
	D=
	check "$1: daemon exit status" "$rc" -eq 0
	check_str "$1: flight instance removed" "$(test -d "$TRACING/instances/$INST-flight" && echo left)" ""
	if [ -d "$TRACING/instances/$INST-flight" ]; then
		# seen once in 100 runs of make stress (after "gone"): for the next time
		echo "the flight instance outlived the daemon; the daemon's log:"
		grep -iE 'flight|snapshot|instance|extract' "$TMP/$1.log" | tail -8
		rmdir "$TRACING/instances/$INST-flight" 2>/dev/null
	fi
}
armed() { [ "$(cat "$FLIGHT_EN" 2>/dev/null)" = 1 ]; }
snapshots() { q "SELECT count(*) FROM snapshots" 2>/dev/null || echo 0; }

# --- SIGUSR1 during a window with N known forks ------------------------------------
start_daemon usr1 180s --snapshot-dir "$TMP/snap" --snapshot-max-count 2
# What the daemon and its writer do while they save: under strace from here
# to the third snapshot.
ST=
if [ -n "$STRACE" ]; then
	"$STRACE" -f -qq -p "$D" -e trace=execve,execveat,unshare,setns,mount,openat \
		-o "$TMP/daemon-trace" 2>"$TMP/strace.err" &
	ST=$!
	sleep 1
fi
tries=0 done=0
while [ $tries -lt 4 ] && [ $done = 0 ]; do
	tries=$((tries + 1))
	wait_until 25 armed || continue
	: >"$TMP/pids"
	forks_from=$(cut -d' ' -f1 /proc/uptime)
	i=0
	while [ $i -lt $N ]; do
		/bin/true &
		echo $! >>"$TMP/pids"
		wait $!
		i=$((i + 1))
	done
	# the forks must have happened inside the window: it is still open
	armed || { sleep 1; continue; }
	forks_to=$(cut -d' ' -f1 /proc/uptime)
	kill -USR1 "$D"
	usr1_at=$(cut -d' ' -f1 /proc/uptime)
	done=1
done
check "usr1: a window caught the forks (tries)" "$done" -eq 1
# The SIGUSR1 one: a lock storm in the window (a loaded machine) takes
# one of its own, without the forks, and may be listed first.
wait_until 30 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM snapshots WHERE trigger = 'SIGUSR1'\" 2>/dev/null)\" -ge 1 ]" ||
	fail "usr1: no snapshot listed: $(grep -i snapshot "$TMP/usr1.log")"
row=$(q "SELECT trigger, path, start_ns, end_ns, trace_offset_ns, bytes FROM snapshots WHERE trigger = 'SIGUSR1' ORDER BY snapshot_id LIMIT 1")
IFS='|' read -r trig path start end off bytes <<EOT
$row
EOT
check_str "usr1: trigger" "$trig" "SIGUSR1"
check "usr1: file saved" "$(stat -c %s "$path" 2>/dev/null || echo 0)" -eq "$bytes"
trace-cmd report "$path" >"$TMP/report" 2>"$TMP/report.err" || fail "usr1: trace-cmd report failed: $(cat "$TMP/report.err")"
# "... [cpu] 10824.491048: event: fields": time in ns, the event, the line
awk '{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
	t = $i; sub(/:$/, "", t); split(t, a, "."); printf "%s%06d000 %s\n", a[1], a[2], $(i + 1); break } }' \
	"$TMP/report" >"$TMP/events"
check "usr1: events in the snapshot" "$(wc -l <"$TMP/events")" -ge $N
missing=0
while read -r pid; do
	grep -q "sched_process_fork:.* child_pid=$pid\( \|$\)" "$TMP/report" || missing=$((missing + 1))
done <"$TMP/pids"
check "usr1: the N forks' records in the snapshot (missing)" "$missing" -eq 0
if [ "$missing" -ne 0 ]; then
	# what a failure needs to be understood where it cannot be rerun,
	# printed last (the test runner shows a failed test's tail)
	{ echo "forks at boot-clock $forks_from..$forks_to s, SIGUSR1 at $usr1_at s;" \
		"our pids $(tr '\n' ' ' <"$TMP/pids")"
	echo "the snapshot: $(wc -l <"$TMP/events") events, by kind:" \
		"$(awk '{ print $2 }' "$TMP/events" | sort | uniq -c | tr '\n' ' ')"
	echo "its first and last: $(head -1 "$TMP/events") / $(tail -1 "$TMP/events")"
	echo "its forks: $(grep -o 'child_pid=[0-9]*' "$TMP/report" | tail -12 | tr '\n' ' ')"
	grep -i 'lost' "$TMP/report" | head -5
	echo "report's stderr: $(head -3 "$TMP/report.err")"
	echo "the daemon's log:"
	grep -iE 'snapshot|flight|slice|window|spike|learn' "$TMP/usr1.log" | tail -15
	} >"$TMP/diag"
fi
# report prints microseconds: 1 us of rounding, and 1 ms for the two clocks
# read at the trigger (boot and wall) drifting apart
out=$(awk -v s="$start" -v e="$end" -v o="$off" '
	{ w = $1 + o; if (w < s - 1000000 || w > e + 1000000) n++ }
	END { print n + 0 }' "$TMP/events")
check "usr1: events outside [start_ns, end_ns]" "$out" -eq 0
# mmhitm import reads it through libtracecmd: every record of the file
# (the report's lines) counted or learned from, one interval
if "$O/mmhitm" import "$path" --db "$TMP/imported.db" >"$TMP/import.out" 2>&1; then
	learned=$(sed -n 's/.*learned from \([0-9]*\) records.*/\1/p' "$TMP/import.out")
	check "usr1: mmhitm import learns from the snapshot's records" "${learned:-0}" -ge $N
	check "usr1: ... into one interval" \
		"$(sqlite3 -batch "$TMP/imported.db" 'SELECT count(*) FROM intervals')" -eq 1
else
	fail "usr1: mmhitm import: $(tail -3 "$TMP/import.out")"
fi

# mmhitm snapshot: a request, waited for, while /proc/kallsyms changes: a
# BPF program loaded and freed again and again, as BPF tools on a fleet
# host (and our own daemons' task iterator, under make stress) do.
# trace-cmd 3.1's extract read kallsyms twice, for its size and to copy
# it, and gave up ("error in size of file '/proc/kallsyms'") when they
# differed; the daemon's writer reads it once.
"$HELPER" bpfchurn 30000 >"$TMP/churn" 2>&1 &
churn=$!
"$O/mmhitm" snapshot --db "$DB" --wait 30 >"$TMP/req.out" 2>"$TMP/req.err" ||
	fail "mmhitm snapshot --wait (kallsyms changing): $(cat "$TMP/req.err")"
kill "$churn" 2>/dev/null
wait "$churn" 2>/dev/null
if grep -q '^visible 1' "$TMP/churn"; then
	req=$(q "SELECT path FROM snapshots WHERE trigger = 'request' ORDER BY snapshot_id DESC LIMIT 1")
	trace-cmd report "$req" >/dev/null 2>"$TMP/req-report.err" &&
		pass "request: readable though kallsyms changed under it" ||
		fail "request: trace-cmd report: $(head -3 "$TMP/req-report.err")"
else
	echo "note: kallsyms did not change under the request (no BPF JIT here:" \
		"$(head -1 "$TMP/churn")); the frozen copy is not tested"
fi
check_str "request: trigger of the newest" "$(q "SELECT trigger FROM snapshots ORDER BY snapshot_id DESC LIMIT 1")" "request"
check_str "request: mmhitm snapshot printed its path" \
	"$(cut -d' ' -f1 "$TMP/req.out")" "$(q "SELECT path FROM snapshots ORDER BY snapshot_id DESC LIMIT 1")"
# a third: snapshot_max_count 2 removes the first
kill -USR1 "$D"
wait_until 30 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM snapshots' 2>/dev/null)\" -ge 3 ]" ||
	fail "third snapshot not listed: $(grep -i snapshot "$TMP/usr1.log" | tail -5)"
check "max_count: files kept" "$(ls "$TMP/snap" | grep -c '\.dat$')" -eq 2
check_str "max_count: the first is the one removed" \
	"$(q "SELECT group_concat(snapshot_id) FROM snapshots WHERE removed_ns IS NOT NULL")" "1"
check_str "max_count: its file is gone" "$(test -e "$path" && echo left)" ""
# an interval every 10 s: the snapshots did not hold the recording up
wait_until 25 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null)\" -ge 1 ]"
check "recording went on: intervals" "$(q "SELECT count(*) FROM intervals")" -ge 1
if [ -n "$ST" ]; then
	kill "$ST" 2>/dev/null
	wait "$ST" 2>/dev/null
	# the writers: children that created a snapshot's file
	check "strace: the writers traced" \
		"$(grep -c 'openat(.*flight-[^"]*\.dat\.tmp".*O_CREAT' "$TMP/daemon-trace")" -ge 3
	check_str "strace: no exec, namespace or mount while saving" \
		"$(grep -E '^[0-9]+ +(execve|execveat|unshare|setns|mount)\(' "$TMP/daemon-trace" | head -3)" ""
	written=$(grep -E 'O_WRONLY|O_RDWR' "$TMP/daemon-trace" | grep -o "\"$TRACING/[^\"]*\"" |
		grep -v "^\"$TRACING/instances/$INST" | sort -u | head -5)
	check_str "strace: no tracefs file written outside our instances" "$written" ""
else
	echo "  (no strace: what the daemon does while saving is not checked)"
fi
stop_daemon usr1

# --- a lock-contention storm seen in a window: a snapshot of it -----------------------
# A small ring makes the storm threshold (lock_burst: an eighth of the ring
# in lock records per drain) a few hundred records, which four threads
# faulting and zapping one page reach within a drain.
if lock_storms_possible; then
	start_daemon storm 60s --snapshot-dir "$TMP/storm" --buffer-size-kb 64
	tries=0
	while [ $tries -lt 3 ] && [ "$(snapshots)" -lt 1 ]; do
		tries=$((tries + 1))
		wait_until 25 armed || continue
		"$HELPER" lockstorm 3000 >/dev/null || fail "storm: helper lockstorm"
		wait_until 10 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM snapshots' 2>/dev/null)\" -ge 1 ]"
	done
	check_str "storm: a snapshot taken by the storm" \
		"$(q "SELECT trigger FROM snapshots ORDER BY snapshot_id LIMIT 1")" "lock-storm"
	spath=$(q "SELECT path FROM snapshots ORDER BY snapshot_id LIMIT 1")
	trace-cmd report "$spath" >"$TMP/storm.report" 2>"$TMP/storm.err" ||
		fail "storm: trace-cmd report failed: $(cat "$TMP/storm.err")"
	n=$(grep -c 'contention_begin' "$TMP/storm.report")
	check "storm: the contention is in it" "$n" -gt 100
	if [ "$n" -le 100 ]; then
		# Seen once in 100 runs of make stress (16 records), cause not
		# found: printed for the next time. The suspect: the stress's dd
		# loop fills the page cache while the ring records every LRU
		# insertion, so the ring wraps in well under a second and the
		# storm's records are gone when the snapshot is taken.
		echo "storm snapshot: $n contention_begin of $(grep -c ': [a-z_]*:' "$TMP/storm.report") events," \
			"by kind: $(awk '{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { print $(i + 1); break } }' \
				"$TMP/storm.report" | sort | uniq -c | tr '\n' ' ')"
		echo "the daemon's log:"
		grep -iE 'storm|snapshot|flight|slice|window' "$TMP/storm.log" | tail -12
		q "SELECT interval_id, slices, round(armed_ns / 1e6), armed, window_note FROM intervals" |
			sed 's/^/  interval: /'
	fi
	stop_daemon storm
else
	echo "not on this machine: its CPUs never contend a spinlock (perf counted 0"
	echo "lock:contention_begin in a 1 s lockstorm), so no storm can be caused"
fi

# --- snapshot_max_size under one snapshot: removed at once -------------------------
start_daemon size 30s --snapshot-dir "$TMP/small" --snapshot-max-size 64K
kill -USR1 "$D"
wait_until 30 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM snapshots' 2>/dev/null)\" -ge 1 ]" ||
	fail "size: no snapshot listed: $(grep -i snapshot "$TMP/size.log")"
check_str "max_size: listed and marked removed" "$(q "SELECT removed_ns IS NOT NULL FROM snapshots")" "1"
check "max_size: no file kept" "$(ls "$TMP/small" | grep -c '\.dat$')" -eq 0
stop_daemon size

# --- a failing snapshot leaves the recording alone ------------------------------------
mkdir "$TMP/full"
if mount -t tmpfs -o size=64k tmpfs "$TMP/full" 2>/dev/null; then
	dir=$TMP/full/snap
	why="a full disk"
else
	: >"$TMP/notadir"
	dir=$TMP/notadir/snap
	why="a directory that cannot be made"
fi
start_daemon fail 25s --snapshot-dir "$dir"
before=$(q "SELECT count(*) FROM intervals")
kill -USR1 "$D"
wait_until 20 sh -c "grep -q 'Snapshot (SIGUSR1).*\(failed\|not taken\)' '$TMP/fail.log'" ||
	fail "fail ($why): no failure logged: $(grep -i snapshot "$TMP/fail.log")"
# the daemon writes an interval every 10 s: two more after the failure
wait_until 30 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null)\" -ge $((before + 2)) ]" ||
	fail "fail ($why): intervals stopped after the failed snapshot"
check "fail ($why): intervals after it" "$(q "SELECT count(*) FROM intervals")" -ge $((before + 2))
check "fail ($why): nothing listed" "$(snapshots)" -eq 0
kill -0 "$D" 2>/dev/null || fail "fail ($why): the daemon died"
stop_daemon fail

# --- killed while it saves: no partial file, nothing touched ------------------------
# The writer dies with the daemon (PR_SET_PDEATHSIG): caught and stopped
# mid-save, then the daemon killed, it leaves a partial file that the next
# start removes; the top level is as it was.
start_daemon killed 60s --snapshot-dir "$TMP/killed" --buffer-size-kb 8192
wait_until 25 armed
"$HELPER" fork 2000 >/dev/null 2>&1 || true
kill -USR1 "$D"
writer= n=0
while [ -z "$writer" ] && [ $n -lt 500 ]; do
	writer=$(pgrep -P "$D" | head -1)
	n=$((n + 1))
done
[ -n "$writer" ] && kill -STOP "$writer"
kill -KILL "$D"
wait "$D" 2>/dev/null
D=
wait_until 10 sh -c "! kill -0 '${writer:-0}' 2>/dev/null"
check_str "killed: the writer died with the daemon" "$(kill -0 "${writer:-0}" 2>/dev/null && echo alive)" ""
check_str "killed: top level untouched" "$(top_level_state)" "$top_before"
if [ -n "$writer" ]; then
	check "killed: the stopped writer left a partial file" "$(ls "$TMP/killed" | grep -c '\.dat\.tmp$')" -eq 1
else
	echo "note: the writer was not caught before it finished; its partial file is not tested"
fi
start_daemon killed2 10s --snapshot-dir "$TMP/killed"
left=$(ls "$TMP/killed" | grep -v '\.dat$' | head -3)
check_str "killed: no partial file after the next start" "$left" ""
[ -n "$writer" ] && check "killed: its removal logged" \
	"$(grep -c 'a snapshot its daemon did not finish' "$TMP/killed2.log")" -eq 1
for f in "$TMP"/killed/*.dat; do
	[ -e "$f" ] || continue
	trace-cmd report "$f" >/dev/null 2>&1 || fail "killed: $f kept but unreadable"
done
stop_daemon killed2

# --- the instance gone: a failed snapshot, the top level as it was -----------------
start_daemon gone 25s --snapshot-dir "$TMP/gone"
wait_until 20 sh -c "test -d '$TRACING/instances/$INST-flight'"
rmdir "$TRACING/instances/$INST-flight"
kill -USR1 "$D"
wait_until 20 sh -c "grep -q 'Snapshot (SIGUSR1) \(failed\|saved\)' '$TMP/gone.log'"
check_str "gone: top level after a failing snapshot" "$(top_level_state)" "$top_before"
stop_daemon gone

check_str "top-level tracing instance untouched" "$(top_level_state)" "$top_before"
[ -s "$TMP/diag" ] && cat "$TMP/diag"
finish
