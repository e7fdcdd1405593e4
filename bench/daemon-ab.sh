#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench/daemon-ab.sh BASE NEW [MINUTES]: two builds of mmhitmd side by side,
# and BASE a second time as the control, for MINUTES (default 20) under the
# soak's load (tests/faults/soak.sh: the reproducers in turn and heavy
# process churn; AB_LOAD=no: none of its own, for a run beside another
# load). Each runs the soak's configuration (1 s intervals, a window and a
# learning slice in every interval) into a database of its own. The
# intervals are aligned to the wall clock, so each minute all three saw the
# same machine: the ratio of a minute's CPU (the intervals' cpu_user_ns +
# cpu_sys_ns), NEW over BASE and BASE again over BASE, is paired, and the
# table gives its mean with a 95 % interval (Student's t over the minutes)
# and the range. Also each daemon's VmRSS and RssAnon, median and most,
# over the second half, and VmHWM. Root; builds first (make all).
#
#   sh bench/daemon-ab.sh /tmp/mmhitmd-old build/mmhitmd 30
#
# AB_NEW_ARGS="--snapshots yes" gives NEW (only) more options: a setting's
# cost, with BASE and NEW the same build.
#
#   AB_NEW_ARGS="--snapshots yes" sh bench/daemon-ab.sh build/mmhitmd build/mmhitmd 10
#
# AB_IDLE=yes: the default configuration instead (60 s intervals, the
# default budget, quiet intervals as a quiet host has them), no load; each
# minute's one interval is paired, and each daemon's CPU is also given as a
# share of one CPU over the whole minutes. An idle host's cost:
#
#   AB_IDLE=yes sh bench/daemon-ab.sh /tmp/mmhitmd-old build/mmhitmd 60
#
# AB_KEEP=DIR keeps the databases and samples; `daemon-ab.sh --report DIR`
# prints the tables again from them.

set -u
O=${O:-build}

# A minute's CPU per daemon, whole minutes all three wrote (the first one
# is start-up, the last may be cut).
cpu_table() {
	for v in base control new; do
		sqlite3 "$W/$v.db" "SELECT end_ns / 60000000000, sum(cpu_user_ns + cpu_sys_ns), count(*)
			FROM intervals WHERE partial = 0 GROUP BY 1" | sed "s/^/$v|/"
	done >"$W/cpu"
	awk -F'|' -v min_n="$(cat "$W/min_n" 2>/dev/null || echo 50)" '
		BEGIN { vv["base"] = vv["control"] = vv["new"] = 1 }
		{ cpu[$1, $2] = $3; n[$1, $2] = $4; m[$2] = 1 }
		END {
			for (k in m) if ((("base", k) in cpu) && (("control", k) in cpu) && (("new", k) in cpu)) keep[k] = 1
			first = ""; last = ""
			for (k in keep) { if (first == "" || k < first) first = k; if (last == "" || k > last) last = k }
			for (k in keep) {
				if (k == first || k == last) continue
				if (n["base", k] < min_n || n["control", k] < min_n || n["new", k] < min_n) continue
				i++
				r["control", i] = cpu["control", k] / cpu["base", k]
				r["new", i] = cpu["new", k] / cpu["base", k]
				base_ms += cpu["base", k] / 1e6 / n["base", k]
				for (j in vv) { tot[j] += cpu[j, k]; ivs[j] += n[j, k] }
			}
			if (i < 3) { print "daemon-ab: fewer than 3 whole minutes"; exit 1 }
			# Student t, 97.5 %, by degrees of freedom (i - 1); 2.0 past 60.
			split("12.71 4.30 3.18 2.78 2.57 2.45 2.36 2.31 2.26 2.23 2.20 2.18 2.16 2.14 2.13 2.12 2.11 2.10 2.09 2.09 2.08 2.07 2.07 2.06 2.06 2.06 2.05 2.05 2.05 2.04", tt, " ")
			t = i - 1 <= 30 ? tt[i - 1] : (i - 1 <= 60 ? 2.02 : 2.0)
			printf "\n%d whole minutes; the base used %.2f ms of CPU an interval\n", i, base_ms / i
			for (j in vv)
				printf "  %s: %.2f ms an interval, %.4f%% of one CPU\n", j, tot[j] / 1e6 / ivs[j], \
					tot[j] / (i * 60e9) * 100
			print ""
			print "| daemon | CPU against the base, mean [95 % CI] | min .. max |"
			print "|---|---:|---:|"
			split("control new", vs, " ")
			for (j = 1; j <= 2; j++) {
				v = vs[j]; s = 0; ss = 0; lo = 1e9; hi = -1e9
				for (x = 1; x <= i; x++) { y = r[v, x]; s += y; if (y < lo) lo = y; if (y > hi) hi = y }
				mean = s / i
				for (x = 1; x <= i; x++) ss += (r[v, x] - mean) ^ 2
				h = t * sqrt(ss / (i - 1) / i)
				printf "| %s | %+.1f%% [%+.1f%% .. %+.1f%%] | %+.1f%% .. %+.1f%% |\n", v == "control" ? "base again (control)" : "new", \
					(mean - 1) * 100, (mean - h - 1) * 100, (mean + h - 1) * 100, (lo - 1) * 100, (hi - 1) * 100
			}
		}' "$W/cpu"
}

# Memory over the second half: median and most, and the peak.
mem_table() {
	[ -s "$W/mem" ] || return 0
	echo
	echo "| daemon | VmRSS median / most (kB) | RssAnon median / most (kB) | VmHWM (kB) |"
	echo "|---|---:|---:|---:|"
	half=$(( $(wc -l <"$W/mem") / 6 ))
	for v in base control new; do
		awk -v v=$v '$2 == v' "$W/mem" | tail -n "$half" >"$W/mem.$v"
		rss=$(cut -d' ' -f3 "$W/mem.$v" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] " / " a[NR] }')
		anon=$(cut -d' ' -f4 "$W/mem.$v" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] " / " a[NR] }')
		echo "| $v | $rss | $anon | $(awk -v v=$v '$1 == v { print $2 }' "$W/hwm") |"
	done
}

if [ "${1:-}" = --report ]; then
	W=${2:?usage: daemon-ab.sh --report DIR}
	cpu_table && mem_table
	exit
fi

BASE=${1:?usage: daemon-ab.sh BASE NEW [MINUTES]}
NEW=${2:?usage: daemon-ab.sh BASE NEW [MINUTES]}
MINUTES=${3:-20}
AB_IDLE=${AB_IDLE:-no}
AB_LOAD=${AB_LOAD:-yes}
AB_ARGS='--interval 1s --overhead-budget 20%'
MIN_N=50
if [ "$AB_IDLE" = yes ]; then
	AB_LOAD=no
	AB_ARGS=
	MIN_N=1
fi
HELPER=$O/tests/mmhitm-test-helper
[ "$(id -u)" = 0 ] || { echo "daemon-ab: needs root (tracefs)" >&2; exit 2; }
for b in "$BASE" "$NEW"; do
	[ -x "$b" ] || { echo "daemon-ab: no executable $b" >&2; exit 2; }
done
W=$(mktemp -d /tmp/mmhitm-ab.XXXXXX)
PIDS=''
LOADS=''
trap 'kill $LOADS $PIDS 2>/dev/null; wait; [ -n "${AB_KEEP:-}" ] && mkdir -p "$AB_KEEP" && cp -a "$W/." "$AB_KEEP/"; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

# The executables are copied: a rebuild meanwhile changes nothing here.
cp "$BASE" "$W/base" && cp "$BASE" "$W/control" && cp "$NEW" "$W/new" || exit 1
echo "$MIN_N" >"$W/min_n"
for v in base control new; do
	extra=
	[ $v = new ] && extra=${AB_NEW_ARGS:-}
	# shellcheck disable=SC2086 # the options, split as words
	"$W/$v" --foreground --db "$W/$v.db" --instance "mmhitm-ab-$v-$$" \
		--metrics-file "" $AB_ARGS $extra 2>"$W/$v.log" &
	PIDS="$PIDS $!"
	echo $! >"$W/$v.pid"
done
sleep 5
for v in base control new; do
	grep -q "Recording into" "$W/$v.log" || { echo "daemon-ab: $v did not start:"; cat "$W/$v.log"; exit 1; }
done
if [ "$AB_LOAD" != no ]; then
	( while :; do "$HELPER" fork 50 >/dev/null 2>&1; "$HELPER" exec 20 >/dev/null 2>&1; done ) &
	LOADS="$LOADS $!"
	( while :; do for w in ctxswitch pwrite tlbflush; do
		"$O/mmhitm-load" "$w" --threads 1 --duration 20s >/dev/null 2>&1; done; done ) &
	LOADS="$LOADS $!"
fi
echo "daemon-ab: base $BASE, new $NEW${AB_NEW_ARGS:+ $AB_NEW_ARGS}, $MINUTES minutes, load: $AB_LOAD, idle: $AB_IDLE ($W)"

end=$(( $(date +%s) + MINUTES * 60 ))
while [ "$(date +%s)" -lt "$end" ]; do
	sleep 10
	for v in base control new; do
		awk -v v=$v -v t="$(date +%s)" '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 }
			END { print t, v, r, a }' "/proc/$(cat "$W/$v.pid")/status"
	done >>"$W/mem"
done
for v in base control new; do
	echo "$v $(awk '/^VmHWM:/ { print $2 }' "/proc/$(cat "$W/$v.pid")/status")" >>"$W/hwm"
done
# shellcheck disable=SC2086
kill $LOADS 2>/dev/null
LOADS=''
for v in base control new; do
	kill -TERM "$(cat "$W/$v.pid")"
done
wait
PIDS=''

cpu_table && mem_table
