#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# mmhitm-load --progress: the workers' count while they run, on the clock of
# /proc/uptime, which is what make bench's switchback reads slot by slot.
. "$(dirname "$0")/load-lib.sh"

# check_progress FILE TOTAL T0 T1: every line well formed; time rising and
# inside [T0, T1] (uptime read around the run); the count never falling and
# never above TOTAL, the count the run reported at its end.
check_progress() {
	awk -v total="$2" -v t0="$3" -v t1="$4" '
	$1 != "progress" { next }
	NF != 3 || $2 !~ /^[0-9]+\.[0-9]+$/ || $3 !~ /^[0-9]+$/ { print "malformed: " $0; bad = 1; next }
	{
		n++
		if ($2 + 0 < t0 - 0.01 || $2 + 0 > t1 + 0.01) { print "time " $2 " outside " t0 ".." t1; bad = 1 }
		if (n > 1 && $2 + 0 <= t + 0) { print "time went back: " $2 " after " t; bad = 1 }
		if (n > 1 && $3 + 0 < ops + 0) { print "count went back: " $3 " after " ops; bad = 1 }
		if ($3 + 0 > total + 0) { print "count " $3 " above the total " total; bad = 1 }
		if ($3 > 0 && $3 < total) between++
		t = $2; ops = $3
	}
	END {
		if (n < 3) { print "only " n + 0 " progress lines"; bad = 1 }
		# Counted while the workers ran, not only at their end.
		if (!between) { print "no line saw the count between 0 and the total"; bad = 1 }
		exit bad
	}' "$1"
}

# A fixed amount of work: the count climbs to exactly --loops.
t0=$(cut -d ' ' -f 1 /proc/uptime)
"$LOAD" tlbflush --threads 1 --cpus 0 --loops 300 --progress 10ms --json \
	>"$O/progress.json" 2>"$O/progress.err"
check_str "tlbflush --loops --progress exit" $? 0
t1=$(cut -d ' ' -f 1 /proc/uptime)
check_str "tlbflush loops" "$(json_get "$O/progress.json" loops)" 300
check_progress "$O/progress.err" 300 "$t0" "$t1" || fail "tlbflush progress lines"

# Threads and forked groups (one mm per CPU) both report while running, and
# a run without a duration keeps reporting until SIGTERM ends it.
for args in "ctxswitch" "ctxswitch --private-mm"; do
	t0=$(cut -d ' ' -f 1 /proc/uptime)
	# Emptied here, not only by the redirection below: that is done by the
	# background shell, and the wait would otherwise count the last run's
	# lines and signal a process that has not blocked SIGTERM yet.
	: >"$O/progress.err"
	: >"$O/progress.json"
	# shellcheck disable=SC2086
	"$LOAD" $args --duration 0 --progress 20ms --json >"$O/progress.json" 2>"$O/progress.err" &
	pid=$!
	await "progress lines from $args" sh -c "[ \$(grep -c '^progress' '$O/progress.err') -ge 5 ]"
	kill -TERM "$pid"
	wait "$pid"
	check_str "$args --duration 0 stopped by SIGTERM" $? 0
	t1=$(cut -d ' ' -f 1 /proc/uptime)
	check_str "$args interrupted" "$(json_get "$O/progress.json" interrupted)" true
	check_progress "$O/progress.err" "$(json_get "$O/progress.json" yields)" "$t0" "$t1" ||
		fail "$args progress lines"
done

# Without the option, no progress line.
"$LOAD" pwrite --threads 1 --loops 1000 --json >"$O/progress.json" 2>"$O/progress.err"
check_str "pwrite without --progress exit" $? 0
grep -q '^progress' "$O/progress.err" && fail "progress lines without --progress"

usage() {	# DESCRIPTION ARGS...
	what=$1; shift
	"$LOAD" "$@" >/dev/null 2>&1; rc=$?
	check_str "$what" "$rc" 2
}
usage "--progress below 10ms" pwrite --progress 1ms --loops 1
usage "--progress not a time" pwrite --progress often --loops 1
finish
