#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench: what recording costs the workloads mmhitm watches.
#
# A switchback: for every reproducer this kernel supports, ONE run of the
# workload goes on for the whole measurement (mmhitm-load --progress prints
# its unit of work so far every 100 ms), and the recorders come and go
# around it in slots. Each round gives every mode one slot of
# BENCH_SECONDS, each preceded by a slot of BENCH_OFF_SECONDS with nothing
# running beside the workload ("alone"), in an order rotated every round,
# and one more slot alone closes the sequence. A mode's overhead in a slot
# is the throughput it lost against the mean of the two slots alone on
# either side of it, so that both the drift of a shared machine and the
# difference between one start of a workload and the next (threads placed
# differently: 15 % between 2 s runs on the build VM, against 2-3 % inside
# one run) stay out of the comparison. The modes:
#   control             nothing started: the slot alone against its
#                       neighbours, which shows this machine's noise;
#   mmhitmd             the daemon as it ships (windowed);
#   mmhitmd-amplified   the windowed daemon's timeline compressed
#                       BENCH_AMPLIFY-fold (default 10): its interval,
#                       spike_check and spike_holdoff divided by the factor
#                       and its overhead_budget multiplied by it, from the
#                       configuration the default mode runs with
#                       (--print-config). It does per second what the
#                       default does per interval, times the factor: the
#                       same windows, learning slices, switch samples,
#                       flushes and spike checks, the factor times as often.
#                       Its overhead divided by the factor is the default's,
#                       measured at a scale this machine's noise can
#                       resolve (the summary prints both rows);
#   mmhitmd-share       the interval switchback: after the rounds, one run
#                       of BENCH_SHARE_SECONDS (300) of the daemon with its
#                       clocks BENCH_SHARE_AMPLIFY-fold (20) faster, as
#                       above, and --fleet-share 0.3, so that its turns
#                       (3 s intervals with a default interval's windows)
#                       alternate with intervals that are not. Each turn
#                       is compared with the nearest quiet intervals
#                       before and after it (bench/share-units.awk), not
#                       with a slot half a minute away: the drift that
#                       slots cannot outrun (ctxswitch: 741k to 956k
#                       yields/s within ten minutes on the build VM)
#                       cancels within seconds. Its control is every quiet
#                       interval against its quiet neighbours; the turns'
#                       overhead over the factor is the default's;
#   mmhitmd-direct      the direct cost: after the switchback, one run of
#                       BENCH_DIRECT_SECONDS (420) of the daemon as it
#                       ships, logging each window's armed span (its
#                       "Armed span" debug lines, on the progress clock).
#                       The workload's rate inside each span, padded, is
#                       against its rate just before and after it
#                       (bench/direct-cost.awk): the in-window slowdown,
#                       the armed share and the whole-run cost, each with
#                       its interval over the spans, and a control at
#                       placebo spans between them. It measures the
#                       default at its own scale, no amplification;
#   mmhitmd-continuous  --record-mode continuous (the lab mode);
#   perf-stat           perf stat -a of the tracepoints mmhitmd counts;
# BENCH_MODES can add perf-record (perf record -a of the same tracepoints)
# and mmhitmd-count (continuous, learning off). A recorder is started
# before its slot and stopped after it: its start-up (configuration, BTF,
# the calibration of its per-event price) and its exit are a daemon's
# once-per-boot costs and lie between slots, measured apart (start-up CPU).
# The table gives, per mode, the median overhead over the rounds, the mean
# with its 95 % confidence interval (Student's t over the rounds) and the
# spread, plus mmhitmd's own CPU time, the share of wall time its windows
# were armed and its peak RSS. The same goes to
# $BENCH_OUT/bench-<time>.json (and latest.json, latest.txt).
#
# Environment: O (build dir), BENCH_ROUNDS (5), BENCH_SECONDS (20, per
# recorder slot; the windowed daemon's slot is one whole interval instead),
# BENCH_OFF_SECONDS (10), BENCH_INTERVAL (mmhitmd --interval; default: the
# daemon's own, 60s), BENCH_AMPLIFY (10), BENCH_SHARE_AMPLIFY (20),
# BENCH_SHARE_SECONDS (300), BENCH_DIRECT_SECONDS (420), BENCH_WORKLOADS (default: all),
# BENCH_MODES (default: all of "$MODES" below), BENCH_OUT (bench/results), BENCH_INGEST_LEARNED
# (learned objects per ingest flush, see bench/bench-ingest.c).

set -u
O=${O:-build}
ROUNDS=${BENCH_ROUNDS:-5}
SECS=${BENCH_SECONDS:-20}
OFF=${BENCH_OFF_SECONDS:-10}
INTERVAL=${BENCH_INTERVAL:-}
AMPLIFY=${BENCH_AMPLIFY:-10}
SHARE_AMPLIFY=${BENCH_SHARE_AMPLIFY:-20}
SHARE_SECS=${BENCH_SHARE_SECONDS:-300}
DIRECT_SECS=${BENCH_DIRECT_SECONDS:-420}
WORKLOADS=${BENCH_WORKLOADS:-"ctxswitch ctxswitch-private pwrite tlbflush aging"}
OUT=${BENCH_OUT:-bench/results}
LOAD=$O/mmhitm-load
DAEMON=$O/mmhitmd
INGEST=$O/bench/bench-ingest
MODES=${BENCH_MODES:-"alone control mmhitmd mmhitmd-amplified mmhitmd-share mmhitmd-direct mmhitmd-continuous perf-stat"}
TRACEFS=/sys/kernel/tracing

die() { echo "bench: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }

[ -x "$LOAD" ] || die "$LOAD is not built (make)"
[ "$(id -u)" = 0 ] || die "needs root: system-wide tracepoints and perf -a"
mkdir -p "$OUT" || die "cannot create $OUT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmhitm-bench.XXXXXX") || die "mktemp failed"
slots=$tmp/slots.tsv	# workload mode round start end (CLOCK_BOOTTIME s)
raw=$tmp/raw.tsv	# workload mode round value higher_is_better metric unit baseline
dmn=$tmp/daemon.tsv	# workload mode round cpu_s events seconds hwm_kb rss_kb slot_cpu_s armed_s start_cpu_s slot_s
rec=$tmp/record.tsv	# workload round bytes lost_chunks
direct=$tmp/direct.tsv	# bench/direct-cost.awk's rows
: >"$slots"; : >"$raw"; : >"$dmn"; : >"$rec"; : >"$direct"
dpid= lpid=
cleanup() {
	[ -n "$dpid" ] && kill -TERM "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	[ -n "$lpid" ] && kill -TERM "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	if [ -n "${BENCH_KEEP:-}" ]; then note "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- what this machine can do -------------------------------------------

[ -d "$TRACEFS/events" ] || mount -t tracefs nodev "$TRACEFS" 2>/dev/null ||
	note "tracefs is not mounted and cannot be; perf modes will fail"

# The events mmhitmd counts (its contract), those this kernel has.
events=
for ev in sched:sched_switch pagemap:mm_lru_activate pagemap:mm_lru_insertion \
	  tlb:tlb_flush lock:contention_begin; do
	[ -d "$TRACEFS/events/${ev%%:*}/${ev#*:}" ] && events="$events -e $ev"
done
[ -d "$TRACEFS/events/vmscan" ] && events="$events -e vmscan:*"
[ -n "$events" ] || note "none of mmhitmd's tracepoints exist here"

have_perf=1
if ! command -v perf >/dev/null || ! perf stat -a -e sched:sched_switch -o /dev/null -- true 2>/dev/null; then
	note "perf cannot count tracepoints system-wide: perf modes skipped"
	have_perf=
fi
have_daemon=1
if [ ! -x "$DAEMON" ]; then
	note "$DAEMON is not built (the daemon has not landed?): mmhitmd mode skipped"
	have_daemon=
fi
command -v sqlite3 >/dev/null || { note "sqlite3 missing: mmhitmd mode skipped"; have_daemon=; }

args_of() {
	case $1 in
	ctxswitch)		echo "ctxswitch" ;;
	ctxswitch-private)	echo "ctxswitch --private-mm" ;;
	pwrite)			echo "pwrite" ;;
	tlbflush)		echo "tlbflush" ;;
	aging)			echo "aging" ;;
	*)			return 1 ;;
	esac
}

case " $MODES " in
*" alone "*) ;;
*) die "BENCH_MODES must include alone: every overhead is against it" ;;
esac

supported=
for w in $WORKLOADS; do
	args_of "$w" >/dev/null || die "unknown workload '$w'"
	if [ "$w" = aging ]; then
		"$LOAD" aging --loops 1 --size 4M >/dev/null 2>"$tmp/aging.err"
		case $? in
		0) ;;
		3) note "aging skipped: this kernel has no CONFIG_LRU_GEN"; continue ;;
		4) note "aging skipped: MGLRU is off (echo y > /sys/kernel/mm/lru_gen/enabled)"; continue ;;
		*) note "aging skipped: $(cat "$tmp/aging.err")"; continue ;;
		esac
	fi
	supported="$supported $w"
done
[ -n "$supported" ] || die "no workload can run here"

# --- one slot -------------------------------------------------------------------

# Now on CLOCK_BOOTTIME, the clock of mmhitm-load --progress.
uptime_s() {
	cut -d ' ' -f 1 /proc/uptime
}

proc_cpu_s() {	# PID: utime + stime so far, in seconds
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

# The workload's measured span: SECONDS of it from now, marked in $slots.
measure() {	# WORKLOAD MODE ROUND SECONDS
	a=$(uptime_s)
	sleep "$4"
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$a" "$(uptime_s)" >>"$slots"
}

# The daemon's interval in seconds (its intervals end on multiples of it).
interval_s() {	# DURATION
	case $1 in
	*ms)	echo "${1%ms}" | awk '{ print $1 / 1000 }' ;;
	*s)	echo "${1%s}" ;;
	*m)	echo "$((${1%m} * 60))" ;;
	*)	return 1 ;;
	esac
}
IVL=$(interval_s "${INTERVAL:-60s}") || die "BENCH_INTERVAL wants ms, s or m, not '$INTERVAL'"
case $IVL in
''|*[!0-9.]*|0|0.*) die "BENCH_INTERVAL '$INTERVAL' is not a positive whole interval" ;;
esac
startup_s=5	# the windowed daemon's start-up, as last measured, plus margin

# The amplified daemon's flags: the default configuration's clocks run
# AMPLIFY times faster (interval, spike_check, spike_holdoff) and its
# budget is AMPLIFY times larger, so that each interval gets what a default
# interval gets. Sets AIVL (its interval, s) and AFLAGS.
to_s() {	# VALUE as --print-config prints it: seconds (durations), fraction (%)
	echo "$1" | awk '{
		v = $1 + 0; u = $1; sub(/^[0-9.]+/, "", u)
		if (u == "ms") v /= 1000
		else if (u == "m" || u == "min") v *= 60
		else if (u == "h") v *= 3600
		else if (u == "d") v *= 86400
		else if (u == "%") v /= 100
		else if (u != "s" && u != "") { print "bad"; exit }
		printf "%.9g\n", v }'
}
AIVL= AFLAGS= SIVL= SFLAGS=
amplified_flags() {	# FACTOR MODE: sets FIVL and FFLAGS
	factor=$1 FIVL= FFLAGS=
	conf=$("$DAEMON" --print-config ${INTERVAL:+--interval "$INTERVAL"} 2>/dev/null) ||
		{ note "mmhitmd --print-config failed: $2 skipped"; return 1; }
	val() { echo "$conf" | awk -v k="$1" '$1 == k && $2 == "=" { print $3 }'; }
	ivl=$(to_s "$(val interval)") check=$(to_s "$(val spike_check)")
	hold=$(to_s "$(val spike_holdoff)") budget=$(to_s "$(val overhead_budget)")
	win=$(to_s "$(val window)")
	# shellcheck disable=SC2046
	set -- $(awk -v a="$factor" -v ivl="$ivl" -v check="$check" -v hold="$hold" \
		-v budget="$budget" -v win="$win" 'BEGIN {
		if (a !~ /^[0-9]+$/ || a < 2) { print "bad factor"; exit }
		if (ivl / a < 1) { print "interval under 1 s"; exit }
		if (hold / a < 1) hold = a
		if (ivl / a < 2 * win) { print "interval under twice the window"; exit }
		if (budget * a > 1) { print "budget over 100 %"; exit }
		printf "ok %.6g %.6gs %.6gs %.6g%%\n", ivl / a, check / a, hold / a, budget * a * 100 }')
	[ "${1:-}" = ok ] || { note "amplified x$factor: $*: $2 skipped"; return 1; }
	FIVL=$2
	FFLAGS="--interval ${2}s --spike-check $3 --spike-holdoff $4 --overhead-budget $5"
}

# The windowed daemon's slot is one whole interval of its steady state:
# its intervals end on multiples of the interval (wall clock), and each
# has its slices (one of them learning, with the sched_switch sample) and
# its flush. The slot alone before it runs on until the daemon must start
# to be ready at the next boundary; the measured slot is that boundary to
# the next one, plus a second for the flush. The amplified daemon's slot
# starts one interval later (its first whole interval is its warm-up) and
# spans as many of its intervals as fit in BENCH_SECONDS.
slot_windowed() {	# WORKLOAD ROUND MODE INTERVAL_S WARMUP_INTERVALS INTERVALS
	now=$(date +%s.%N)
	wait_s=$(awk -v now="$now" -v ivl="$4" -v off="$OFF" -v su="$startup_s" 'BEGIN {
		b = (int((now + off + su) / ivl) + 1) * ivl
		print b - su - now }')
	measure "$1" alone "$2" "$wait_s"
	slot_daemon "$1" "$3" "$2" "$4" "$5" "$6"
}

slot_daemon() {	# WORKLOAD MODE ROUND [INTERVAL_S WARMUP_INTERVALS INTERVALS]
	w=$1 dmode=$2 r=$3 align=${4:-} warm=${5:-0} nivl=${6:-1}
	db=$tmp/mmhitmd.db log=$tmp/mmhitmd.log inst=mmhitm-bench-$$-$r
	rm -f "$db" "$db-wal" "$db-shm"
	flags=${INTERVAL:+--interval $INTERVAL}
	case $dmode in
	mmhitmd-count)	flags="$flags --record-mode continuous --learn-mm false --learn-pages false --learn-locks false" ;;
	mmhitmd-continuous) flags="$flags --record-mode continuous" ;;
	mmhitmd-amplified) flags=$AFLAGS ;;
	mmhitmd-share) flags=$SFLAGS ;;
	mmhitmd-direct) flags="$flags --log-level debug" ;;
	esac
	# --duration only bounds a stuck run: it is stopped with SIGTERM.
	t_start=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$DAEMON" --db "$db" --duration "$((SECS * 2 + SHARE_SECS + DIRECT_SECS + 240))s" \
		--instance "$inst" $flags --foreground 2>"$log" &
	dpid=$!
	i=0
	until grep -q "Recording into" "$log" 2>/dev/null; do
		kill -0 "$dpid" 2>/dev/null || { note "mmhitmd died: $(tail -n 3 "$log")"; dpid=; return 1; }
		i=$((i + 1))
		[ $i -lt 600 ] || { note "mmhitmd not ready after 60 s"; return 1; }
		sleep 0.1
	done
	len=$SECS
	[ "$dmode" != mmhitmd-direct ] || len=$DIRECT_SECS
	if [ -n "$align" ]; then
		ready=$(date +%s.%N)
		# shellcheck disable=SC2046
		set -- $(awk -v now="$ready" -v ivl="$align" -v t0="$t_start" -v warm="$warm" \
			-v n="$nivl" 'BEGIN {
			b = (int(now / ivl) + 1 + warm) * ivl
			printf "%.3f %d %d\n", b - now, now - t0 + 1.5, n * ivl + 1 }')
		sleep "$1"	# the start of a whole interval
		startup_s=$2
		len=$3
	fi
	cpu0=$(proc_cpu_s "$dpid")
	measure "$w" "$dmode" "$r" "$len"
	hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$dpid/status")
	cpu1=$(proc_cpu_s "$dpid")
	kill -TERM "$dpid"
	wait "$dpid"
	rc=$? dpid=
	[ $rc -eq 0 ] || note "mmhitmd exited with $rc: $(tail -n 3 "$log")"
	[ -d "$TRACEFS/instances/$inst" ] && note "mmhitmd left its instance $inst behind"
	stats=$(sqlite3 -separator ' ' "$db" \
		"SELECT (SELECT coalesce(sum(cpu_user_ns + cpu_sys_ns), 0) / 1e9 FROM intervals),
			(SELECT coalesce(sum(count), 0) FROM event_rates
				WHERE method IN ('window', 'continuous')),
			(SELECT coalesce(sum(end_ns - start_ns), 0) / 1e9 FROM intervals),
			(SELECT coalesce(max(rss_kb), 0) FROM intervals),
			(SELECT coalesce(sum(coalesce(armed_ns, end_ns - start_ns)), 0) / 1e9 FROM intervals)") ||
		{ note "cannot read $db"; return 1; }
	# shellcheck disable=SC2086
	set -- $stats
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$dmode" "$r" "$1" "$2" "$3" \
		"$hwm" "$4" "$(echo "$cpu1 $cpu0" | awk '{ print $1 - $2 }')" "$5" "$cpu0" "$len" >>"$dmn"
}

slot() {	# WORKLOAD MODE ROUND
	w=$1 mode=$2 r=$3
	case $mode in
	alone)
		measure "$w" alone "$r" "$OFF" ;;
	control)
		measure "$w" control "$r" "$SECS" ;;
	perf-stat)
		# The slot starts once perf has opened its events, and ends before it exits.
		# shellcheck disable=SC2086
		perf stat -a -x, $events -o "$tmp/stat.csv" -- sleep "$((SECS + 2))" &
		ppid=$!
		sleep 1
		measure "$w" "$mode" "$r" "$SECS"
		wait "$ppid" || note "perf stat failed in $w round $r" ;;
	perf-record)
		# shellcheck disable=SC2086
		perf record -a -q $events -o "$tmp/perf.data" -- sleep "$((SECS + 2))" 2>"$tmp/record.err" &
		ppid=$!
		sleep 1
		measure "$w" "$mode" "$r" "$SECS"
		wait "$ppid" || note "perf record failed in $w round $r"
		printf '%s\t%s\t%s\t%s\n' "$w" "$r" "$(stat -c %s "$tmp/perf.data" 2>/dev/null || echo 0)" \
			"$(sed -n 's/.*lost \([0-9]*\) chunks.*/\1/p' "$tmp/record.err" | head -n 1)" >>"$rec"
		rm -f "$tmp/perf.data" "$tmp/perf.data.old" ;;
	mmhitmd)
		slot_windowed "$w" "$r" mmhitmd "$IVL" 0 1 ;;
	mmhitmd-amplified)
		slot_windowed "$w" "$r" mmhitmd-amplified "$AIVL" 1 \
			"$(awk -v s="$SECS" -v i="$AIVL" 'BEGIN { n = int(s / i + 0.5); print n < 1 ? 1 : n }')" ;;
	mmhitmd-continuous|mmhitmd-count)
		slot_daemon "$w" "$mode" "$r" ;;
	esac
}

# The interval switchback (mmhitmd-share): one daemon run of SHARE_SECS,
# the default configuration's clocks SHARE_AMPLIFY times faster and
# --fleet-share 0.3 (a turn, then two or three intervals that are not),
# its whole intervals written to $tmp/WORKLOAD.units on
# the progress clock ("start end turn") for bench/share-units.awk.
share_run() {	# WORKLOAD
	slot_daemon "$1" mmhitmd-share share "$SIVL" 1 \
		"$(awk -v s="$SHARE_SECS" -v i="$SIVL" 'BEGIN { n = int(s / i); print n < 4 ? 4 : n }')" ||
		return 1
	# CLOCK_BOOTTIME minus CLOCK_REALTIME, to 10 ms (/proc/uptime's)
	off=$(awk -v up="$(uptime_s)" -v now="$(date +%s.%N)" 'BEGIN { printf "%.3f", up - now }')
	sqlite3 -separator '	' "$tmp/mmhitmd.db" "SELECT printf('%.3f', start_ns / 1e9 + $off),
		printf('%.3f', end_ns / 1e9 + $off),
		coalesce(window_note NOT LIKE 'no window: not this host''s turn%', 1)
		FROM intervals WHERE partial = 0 ORDER BY start_ns" >"$tmp/$1.units" ||
		{ note "cannot read the switchback's intervals"; return 1; }
}

# The direct cost (mmhitmd-direct): one run of the daemon as it ships,
# its windows' armed spans kept in $tmp/WORKLOAD.spans ("from to what",
# CLOCK_BOOTTIME s, the progress clock) and the measured run in
# $tmp/WORKLOAD.run ("start end"), for bench/direct-cost.awk.
direct_run() {	# WORKLOAD
	slot_daemon "$1" mmhitmd-direct direct || return 1
	awk -v w="$1" '$1 == w && $2 == "mmhitmd-direct" { print $4, $5 }' "$slots" |
		tail -n 1 >"$tmp/$1.run"
	awk -f bench/armed-spans.awk "$tmp/mmhitmd.log" >"$tmp/$1.spans"
	[ -s "$tmp/$1.spans" ] || { note "$1: the daemon logged no armed span"; return 1; }
}

mode_enabled() {
	case $1 in
	mmhitmd-amplified)	[ -n "$have_daemon" ] && [ -n "$AIVL" ] ;;
	mmhitmd-share)		[ -n "$have_daemon" ] && [ -n "$SIVL" ] ;;
	mmhitmd-direct)		[ -n "$have_daemon" ] ;;
	mmhitmd*)		[ -n "$have_daemon" ] ;;
	perf-stat|perf-record)	[ -n "$have_perf" ] ;;
	*)			true ;;
	esac
}

# The throughput of every slot from the workload's progress lines (ops
# interpolated at the slot's edges), each recorder slot with its baseline:
# the mean of the slots alone just before and just after it.
rates() {	# WORKLOAD PROGRESS-FILE METRIC UNIT
	awk -f bench/progress.awk -f bench/slot-rates.awk -v w="$1" -v metric="$3" -v unit="$4" \
		-v slots="$slots" "$2"
}

unit_of() {
	case $1 in
	ctxswitch*)	echo "sched_yield_per_s yields/s" ;;
	pwrite)		echo "pwrite_per_s calls/s" ;;
	tlbflush)	echo "loops_per_s loops/s" ;;
	aging)		echo "pages_read_per_s pages/s" ;;
	esac
}

# --- the rounds -------------------------------------------------------------

case " $MODES " in
*" mmhitmd-amplified "*)
	[ -z "$have_daemon" ] || ! amplified_flags "$AMPLIFY" mmhitmd-amplified ||
		{ AIVL=$FIVL; AFLAGS=$FFLAGS; } ;;
esac
case " $MODES " in
*" mmhitmd-share "*)
	[ -z "$have_daemon" ] || ! amplified_flags "$SHARE_AMPLIFY" mmhitmd-share ||
		{ SIVL=$FIVL; SFLAGS="$FFLAGS --fleet-share 0.3"; } ;;
esac
on_modes= share= direct_on=
for m in $MODES; do
	case $m in
	alone) ;;
	mmhitmd-share) ! mode_enabled "$m" || share=1 ;;
	mmhitmd-direct) ! mode_enabled "$m" || direct_on=1 ;;
	*) ! mode_enabled "$m" || on_modes="$on_modes $m" ;;
	esac
done
nmodes=$(echo $on_modes | wc -w)
[ "$nmodes" -gt 0 ] || [ -n "$share" ] || [ -n "$direct_on" ] || die "no mode to measure in BENCH_MODES='$MODES'"
start=$(date +%s)
[ "$nmodes" -eq 0 ] || note "$ROUNDS rounds x ($supported ) x ($on_modes ), ${SECS} s each after ${OFF} s alone; tracepoints:$events"
[ -z "$share" ] || note "then per workload ${SHARE_SECS} s of the interval switchback (mmhitmd-share: $SFLAGS)"
[ -z "$direct_on" ] || note "then per workload ${DIRECT_SECS} s of the default daemon's direct cost (mmhitmd-direct)"
for w in $supported; do
	# shellcheck disable=SC2046
	set -- $(args_of "$w")
	"$LOAD" "$@" --duration 0 --progress 100ms --json >"$tmp/$w.json" 2>"$tmp/$w.progress" &
	lpid=$!
	sleep 3		# the workload settles; not measured
	[ "$nmodes" -gt 0 ] &&
	for r in $(seq 1 "$ROUNDS"); do
		# Rotate the order: round r starts with mode number r (mod modes).
		order=$(echo $on_modes | tr ' ' '\n' | awk -v k=$(((r - 1) % nmodes)) -v n=$nmodes \
			'{ m[NR - 1] = $0 } END { for (i = 0; i < n; i++) print m[(i + k) % n] }')
		# (slot sets $mode: the loop has a name of its own)
		for next in $order; do
			printf 'bench: round %d/%d %-17s %-18s\r' "$r" "$ROUNDS" "$w" "$next" >&2
			# (the windowed daemon's slot brings its own slot alone)
			case $next in
			mmhitmd|mmhitmd-amplified) ;;
			*) slot "$w" alone "$r" ;;
			esac
			slot "$w" "$next" "$r"
		done
	done
	[ "$nmodes" -eq 0 ] || slot "$w" alone "$ROUNDS"
	[ -z "$share" ] || share_run "$w" || note "$w: the interval switchback failed"
	[ -z "$direct_on" ] || direct_run "$w" || note "$w: the direct cost's run failed"
	sleep 0.5	# a progress line after the last slot's end
	kill -TERM "$lpid"
	wait "$lpid" || note "$w failed: $(grep -v '^progress' "$tmp/$w.progress" | tail -n 3)"
	lpid=
	grep -q '"interrupted":true' "$tmp/$w.json" || note "$w ended before it was stopped"
	# shellcheck disable=SC2046
	rates "$w" "$tmp/$w.progress" $(unit_of "$w") >>"$raw"
	# shellcheck disable=SC2046
	[ ! -s "$tmp/$w.units" ] || awk -f bench/progress.awk -f bench/share-units.awk -v w="$w" \
		$(unit_of "$w" | awk '{ printf "-v metric=%s -v unit=%s", $1, $2 }') \
		"$tmp/$w.units" "$tmp/$w.progress" >>"$raw"
	# shellcheck disable=SC2046
	[ ! -s "$tmp/$w.spans" ] || awk -f bench/progress.awk -f bench/t975.awk -f bench/direct-cost.awk \
		-v w="$w" $(awk '{ printf "-v t0=%s -v t1=%s", $1, $2 }' "$tmp/$w.run") \
		"$tmp/$w.spans" "$tmp/$w.progress" >>"$direct"
done
printf '\n' >&2

# --- ingest -------------------------------------------------------------------

ingest=
if [ -x "$INGEST" ]; then
	"$INGEST" ${BENCH_INGEST_LEARNED:+--learned "$BENCH_INGEST_LEARNED"} --json >"$tmp/ingest.json" ||
		note "the ingest benchmark failed"
	ingest=$tmp/ingest.json
else
	note "$INGEST is not built: no ingest figures"
fi

# --- summary --------------------------------------------------------------------

stamp=$(date -u +%Y%m%dT%H%M%SZ)
json=$OUT/bench-$stamp.json
txt=$OUT/bench-$stamp.txt
command=${BENCH_COMMAND:-"make bench BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECS BENCH_OFF_SECONDS=$OFF${BENCH_MODES:+ BENCH_MODES='$BENCH_MODES'}${BENCH_WORKLOADS:+ BENCH_WORKLOADS='$BENCH_WORKLOADS'}${BENCH_DIRECT_SECONDS:+ BENCH_DIRECT_SECONDS=$BENCH_DIRECT_SECONDS}${BENCH_INTERVAL:+ BENCH_INTERVAL=$BENCH_INTERVAL}"}
awk -f bench/t975.awk -f bench/summarize.awk \
	-v rounds="$ROUNDS" -v secs="$SECS" -v offsecs="$OFF" -v interval="${INTERVAL:-60s (default)}" \
	-v kernel="$(uname -r)" -v cpus="$(nproc)" -v host="$(hostname)" \
	-v stamp="$stamp" -v elapsed="$(($(date +%s) - start))" -v command="$command" \
	-v events="$(echo $events | sed 's/-e //g')" \
	-v json="$json" -v ingest="$ingest" -v amplify="$AMPLIFY" -v amplified="$AFLAGS" \
	-v share_amplify="$SHARE_AMPLIFY" -v shared="$SFLAGS" \
	-v raw="$raw" -v dmn="$dmn" -v rec="$rec" -v direct="$direct" -v direct_secs="$DIRECT_SECS" /dev/null >"$txt" || die "summary failed"
cat "$txt"
cp "$json" "$OUT/latest.json"
cp "$txt" "$OUT/latest.txt"
note "wrote $json and $txt"
