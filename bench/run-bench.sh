#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench: what recording costs the workloads mmhitm watches.
#
# For every reproducer this kernel supports, each round runs the workload
# alone, alone again (the control: the baseline against itself, which shows
# this machine's noise), under mmhitmd as it ships (windowed), under
# mmhitmd --record-mode continuous (the lab mode: everything armed all the
# time) and under `perf stat -a` (the same tracepoints mmhitmd counts), in
# an order rotated every round so that drift on a shared machine spreads
# over all modes. BENCH_MODES can add perf-record (`perf record -a` of the
# same tracepoints) and mmhitmd-count (continuous, learning off). Each
# mode's throughput is compared with the same round's run alone; the table
# gives the median overhead, the mean with its 95 % confidence interval
# (Student's t over the paired rounds) and the spread, plus mmhitmd's own
# CPU time, the share of wall time its windows were armed and its peak RSS.
# The same goes to $BENCH_OUT/bench-<time>.json (and latest.json, latest.txt).
#
# Environment: O (build dir), BENCH_ROUNDS (5), BENCH_SECONDS (5, per run),
# BENCH_INTERVAL (mmhitmd --interval; default: the daemon's own, 60s),
# BENCH_WORKLOADS (default: all),
# BENCH_MODES (default: all of "$MODES" below),
# BENCH_OUT (bench/results), BENCH_INGEST_LEARNED (learned objects per
# ingest flush, see bench/bench-ingest.c).

set -u
O=${O:-build}
ROUNDS=${BENCH_ROUNDS:-5}
SECS=${BENCH_SECONDS:-5}
INTERVAL=${BENCH_INTERVAL:-}
WORKLOADS=${BENCH_WORKLOADS:-"ctxswitch ctxswitch-private pwrite tlbflush aging"}
OUT=${BENCH_OUT:-bench/results}
LOAD=$O/mmhitm-load
DAEMON=$O/mmhitmd
INGEST=$O/bench/bench-ingest
MODES=${BENCH_MODES:-"alone control mmhitmd mmhitmd-continuous perf-stat"}
TRACEFS=/sys/kernel/tracing

die() { echo "bench: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }

[ -x "$LOAD" ] || die "$LOAD is not built (make)"
[ "$(id -u)" = 0 ] || die "needs root: system-wide tracepoints and perf -a"
mkdir -p "$OUT" || die "cannot create $OUT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmhitm-bench.XXXXXX") || die "mktemp failed"
raw=$tmp/raw.tsv	# workload mode round value higher_is_better metric unit
dmn=$tmp/daemon.tsv	# workload mode round cpu_s events seconds hwm_kb rss_kb proc_cpu_s armed_s
rec=$tmp/record.tsv	# workload round bytes lost_chunks
: >"$raw"; : >"$dmn"; : >"$rec"
dpid=
cleanup() {
	[ -n "$dpid" ] && kill -TERM "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
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

# --- one run --------------------------------------------------------------

json_get() {	# FILE KEY
	sed -n "s/.*\"$2\": *\(\"[^\"]*\"\|[^,}]*\).*/\1/p" "$1" | tr -d '"'
}

record_result() {	# WORKLOAD MODE ROUND JSON
	v=$(json_get "$4" value)
	if [ -z "$v" ] || [ "$v" = null ]; then
		note "$1/$2 round $3 gave no result"
		return 1
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$v" \
		"$(json_get "$4" higher_is_better)" "$(json_get "$4" metric)" "$(json_get "$4" unit)" >>"$raw"
}

proc_cpu_s() {	# PID: utime + stime so far, in seconds
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

run_daemon() {	# WORKLOAD MODE ROUND ARGS...
	w=$1 dmode=$2 r=$3; shift 3
	db=$tmp/mmhitmd.db log=$tmp/mmhitmd.log inst=mmhitm-bench-$$-$r
	rm -f "$db" "$db-wal" "$db-shm"
	learn=
	case $dmode in
	mmhitmd-count)	learn="--record-mode continuous --learn-mm false --learn-pages false --learn-locks false" ;;
	mmhitmd-continuous) learn="--record-mode continuous" ;;
	esac
	# --duration only bounds a stuck run: it is stopped with SIGTERM.
	# shellcheck disable=SC2086
	"$DAEMON" --db "$db" ${INTERVAL:+--interval "$INTERVAL"} --duration "$((SECS * 4 + 60))s" \
		--instance "$inst" $learn --foreground 2>"$log" &
	dpid=$!
	i=0
	until grep -q "Recording into" "$log" 2>/dev/null; do
		kill -0 "$dpid" 2>/dev/null || { note "mmhitmd died: $(tail -n 3 "$log")"; dpid=; return 1; }
		i=$((i + 1))
		[ $i -lt 300 ] || { note "mmhitmd not ready after 30 s"; return 1; }
		sleep 0.1
	done
	"$LOAD" "$@" --duration "$SECS" --json >"$tmp/run.json" || note "$w under mmhitmd failed"
	hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$dpid/status")
	pcpu=$(proc_cpu_s "$dpid")
	kill -TERM "$dpid"
	wait "$dpid"
	rc=$? dpid=
	[ $rc -eq 0 ] || note "mmhitmd exited with $rc: $(tail -n 3 "$log")"
	[ -d "$TRACEFS/instances/$inst" ] && note "mmhitmd left its instance $inst behind"
	record_result "$w" "$dmode" "$r" "$tmp/run.json" || return 1
	stats=$(sqlite3 -separator ' ' "$db" \
		"SELECT (SELECT coalesce(sum(cpu_user_ns + cpu_sys_ns), 0) / 1e9 FROM intervals),
			(SELECT coalesce(sum(count), 0) FROM event_rates
				WHERE method IN ('window', 'continuous')),
			(SELECT coalesce(sum(end_ns - start_ns), 0) / 1e9 FROM intervals),
			(SELECT coalesce(max(rss_kb), 0) FROM intervals),
			(SELECT coalesce(sum(coalesce(armed_ns, end_ns - start_ns)), 0) / 1e9 FROM intervals)") ||
		{ note "cannot read $db"; return 1; }
	set -- $stats
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$dmode" "$r" "$1" "$2" "$3" "$hwm" "$4" \
		"$pcpu" "$5" >>"$dmn"
}

run_one() {	# WORKLOAD MODE ROUND
	w=$1 mode=$2 r=$3
	# shellcheck disable=SC2046
	set -- $(args_of "$w")
	case $mode in
	alone|control)
		"$LOAD" "$@" --duration "$SECS" --json >"$tmp/run.json" &&
			record_result "$w" "$mode" "$r" "$tmp/run.json" ;;
	perf-stat)
		# shellcheck disable=SC2086
		perf stat -a -x, $events -o "$tmp/stat.csv" -- \
			"$LOAD" "$@" --duration "$SECS" --json >"$tmp/run.json" &&
			record_result "$w" "$mode" "$r" "$tmp/run.json" ;;
	perf-record)
		# shellcheck disable=SC2086
		perf record -a -q $events -o "$tmp/perf.data" -- \
			"$LOAD" "$@" --duration "$SECS" --json >"$tmp/run.json" 2>"$tmp/record.err" &&
			record_result "$w" "$mode" "$r" "$tmp/run.json" &&
			printf '%s\t%s\t%s\t%s\n' "$w" "$r" "$(stat -c %s "$tmp/perf.data")" \
				"$(sed -n 's/.*lost \([0-9]*\) chunks.*/\1/p' "$tmp/record.err" | head -n 1)" >>"$rec"
		rm -f "$tmp/perf.data" "$tmp/perf.data.old" ;;
	mmhitmd|mmhitmd-continuous|mmhitmd-count)
		run_daemon "$w" "$mode" "$r" "$@" ;;
	esac
}

mode_enabled() {
	case $1 in
	mmhitmd*)		[ -n "$have_daemon" ] ;;
	perf-stat|perf-record)	[ -n "$have_perf" ] ;;
	*)			true ;;
	esac
}

# --- the rounds -------------------------------------------------------------

nmodes=$(echo $MODES | wc -w)
start=$(date +%s)
note "$ROUNDS rounds x ($supported ) x ($MODES), ${SECS}s each; tracepoints:$events"
for r in $(seq 1 "$ROUNDS"); do
	for w in $supported; do
		# Rotate the order: round r starts with mode number r (mod modes).
		order=$(echo $MODES | tr ' ' '\n' | awk -v k=$(((r - 1) % nmodes)) -v n=$nmodes \
			'{ m[NR - 1] = $0 } END { for (i = 0; i < n; i++) print m[(i + k) % n] }')
		for mode in $order; do
			mode_enabled "$mode" || continue
			printf 'bench: round %d/%d %-17s %-12s\r' "$r" "$ROUNDS" "$w" "$mode" >&2
			run_one "$w" "$mode" "$r"
		done
	done
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
command=${BENCH_COMMAND:-"make bench BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECS"}
awk -f bench/summarize.awk \
	-v rounds="$ROUNDS" -v secs="$SECS" -v interval="${INTERVAL:-60s (default)}" \
	-v kernel="$(uname -r)" -v cpus="$(nproc)" -v host="$(hostname)" \
	-v stamp="$stamp" -v elapsed="$(($(date +%s) - start))" -v command="$command" \
	-v events="$(echo $events | sed 's/-e //g')" \
	-v json="$json" -v ingest="$ingest" \
	-v raw="$raw" -v dmn="$dmn" -v rec="$rec" /dev/null >"$txt" || die "summary failed"
cat "$txt"
cp "$json" "$OUT/latest.json"
cp "$txt" "$OUT/latest.txt"
note "wrote $json and $txt"
