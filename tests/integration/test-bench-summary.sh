#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench's summary (bench/summarize.awk) from slots whose throughputs
# are chosen here, so that every figure it prints is known in advance: the
# overhead of a slot against the mean of its neighbours alone, the median
# and Student's t interval over the rounds, and the amplified daemon's
# overhead divided by its factor, round by round ("from x10 / 10"); and
# the interval switchback's pairing (bench/share-units.awk): every turn
# against the intervals on either side that neither were a turn nor
# followed one; and the direct cost (bench/direct-cost.awk): each armed
# span's work against the rate on either side of it, from 100 ms
# progress lines, and its placebo control. No root, no workload: the
# arithmetic the performance claims rest on.
. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/mmhitm-bench-summary.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Three rounds of ctxswitch. Every slot alone runs at 1000/s; the control
# loses 1 %, 0 % and 2 %, the amplified daemon 3 %, 4 % and 2 %.
raw=$WORK/raw.tsv dmn=$WORK/daemon.tsv
: >"$dmn"
{
	for r in 1 2 3; do
		c=$(echo "$r" | awk '{ split("990 1000 980", v, " "); print v[$1] }')
		a=$(echo "$r" | awk '{ split("970 960 980", v, " "); print v[$1] }')
		printf 'ctxswitch\tcontrol\t%d\t%s\ttrue\tsched_yield_per_s\tyields/s\t1000\n' "$r" "$c"
		printf 'ctxswitch\tmmhitmd-amplified\t%d\t%s\ttrue\tsched_yield_per_s\tyields/s\t1000\n' "$r" "$a"
		printf 'ctxswitch\talone\t%d\t1000\ttrue\tsched_yield_per_s\tyields/s\t\n' "$r"
	done
} >"$raw"
# The amplified daemon's own cost: 0.6 s of CPU over 20 s, 3 s armed.
for r in 1 2 3; do
	printf 'ctxswitch\tmmhitmd-amplified\t%d\t0.6\t6000000\t20\t40000\t20000\t0.6\t3\t1.5\t19\n' "$r" >>"$dmn"
done

awk -f bench/t975.awk -f bench/summarize.awk -v rounds=3 -v secs=20 -v offsecs=10 -v interval=60s \
	-v kernel=test -v cpus=2 -v host=test -v stamp=test -v elapsed=1 -v command=test \
	-v events=sched:sched_switch -v json="$WORK/out.json" -v ingest= \
	-v amplify=10 -v amplified="--interval 6s" \
	-v raw="$raw" -v dmn="$dmn" -v rec=/dev/null /dev/null >"$WORK/out.txt" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "summarize.awk failed"; finish; }
[ -s "$WORK/err" ] && { cat "$WORK/err"; fail "summarize.awk wrote to stderr"; }

# row LABEL: the table row of that recorder.
row() { grep -F "| $1 |" "$WORK/out.txt"; }
expect_row() {	# LABEL MEDIAN MEAN LO HI MIN MAX
	got=$(row "$1" | head -n 1 | awk -F'|' '{ gsub(/ /, ""); print $6, $7, $8 }')
	want="$2 $3[$4..$5] $6..$7"
	if [ "$got" = "$want" ]; then
		pass "$1: $got"
	else
		fail "$1: got '$got', want '$want'"
		cat "$WORK/out.txt"
	fi
}
# Control: 1, 0, 2 -> median 1, mean 1, t(2) = 4.303 * 1/sqrt(3) = 2.484.
expect_row "nothing (control)" +1.0% +1.0% -1.5% +3.5% +0.0% +2.0%
# Amplified: 3, 4, 2 -> the same spread around 3.
expect_row "mmhitmd amplified x10" +3.0% +3.0% +0.5% +5.5% +2.0% +4.0%
# Divided by 10 round by round: 0.3, 0.4, 0.2 -> 0.3 [0.05 .. 0.55].
expect_row "mmhitmd (default), from x10 / 10" +0.3% +0.3% +0.1% +0.5% +0.2% +0.4%

# The JSON carries the same, unrounded.
if command -v python3 >/dev/null; then
	python3 - "$WORK/out.json" <<'EOF' || fail "JSON: derived overheads"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["workloads"][0]["recorders"]["mmhitmd-derived"]
lo, hi = r["overhead_ci95_pct"]
ok = (abs(r["overhead_pct"]["median"] - 0.3) < 1e-9 and abs(r["overhead_mean_pct"] - 0.3) < 1e-9
      and abs(lo - (0.3 - 4.303 * 0.1 / 3 ** 0.5)) < 1e-6 and abs(hi - (0.3 + 4.303 * 0.1 / 3 ** 0.5)) < 1e-6
      and d["amplify"] == 10)
print("JSON derived:", r["overhead_pct"]["values"], r["overhead_ci95_pct"], "amplify", d["amplify"])
sys.exit(0 if ok else 1)
EOF
else
	fail "python3 is missing: the JSON cannot be read"
fi

# The amplified daemon's own cost row: 0.6 s over 20 s is 3 % of one CPU
# in the slot (0.6 / 19), armed 3 / 20 = 15 %.
if row "mmhitmd amplified x10" | grep -q "| 15.0% |"; then
	pass "own cost: armed 15.0 %"
else
	fail "own cost: armed share not 15.0 %"; cat "$WORK/out.txt"
fi

# --- the interval switchback (bench/share-units.awk) ----------------------
# 60 intervals of 3 s, a turn where fleet_share 0.3 puts one (window.c's
# rule at phase 0). The workload runs at 1000/s, 960/s in a turn (4 %
# slower) and 900/s in the interval right after a turn (what a turn's
# disarming spills, made large here): a baseline taken from those would
# shrink the 4 %, and a control drawn from them would not be 0.
awk 'BEGIN {
	t = 100; ops = 0; prev = 0
	for (i = 0; i < 60; i++) {
		turn = int((i + 1) * 0.3) > int(i * 0.3)
		rate = turn ? 960 : (prev ? 900 : 1000)
		printf "%.3f\t%.3f\t%d\n", t, t + 3, turn > "'"$WORK"'/units"
		for (k = 0; k < 12; k++) {
			printf "progress %.3f %.3f\n", t, ops > "'"$WORK"'/progress"
			t += 0.25; ops += rate * 0.25
		}
		prev = turn
	}
	printf "progress %.3f %.3f\n", t, ops > "'"$WORK"'/progress"
}'
awk -f bench/progress.awk -f bench/share-units.awk -v w=ctxswitch -v metric=sched_yield_per_s \
	-v unit=yields/s "$WORK/units" "$WORK/progress" >"$WORK/share.tsv" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "share-units.awk failed"; finish; }
turns=$(grep -c "	mmhitmd-share	" "$WORK/share.tsv")
controls=$(grep -c "	share-control	" "$WORK/share.tsv")
check "turns paired with baselines on both sides (of 18)" "$turns" -ge 16
check "control intervals (a baseline against the others)" "$controls" -ge 16
check "no interval right after a turn is a baseline or a control" \
	"$(awk -F'\t' '$2 != "mmhitmd-share" && $4 + 0 < 950' "$WORK/share.tsv" | wc -l)" -eq 0
awk -f bench/t975.awk -f bench/summarize.awk -v rounds=5 -v secs=20 -v offsecs=10 -v interval=60s \
	-v kernel=test -v cpus=2 -v host=test -v stamp=test -v elapsed=1 -v command=test \
	-v events=sched:sched_switch -v json="$WORK/share.json" -v ingest= -v amplify=10 \
	-v amplified= -v share_amplify=20 -v shared="--interval 3s --fleet-share 0.3" \
	-v raw="$WORK/share.tsv" -v dmn=/dev/null -v rec=/dev/null /dev/null >"$WORK/out.txt" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "summarize.awk failed on the switchback"; finish; }
expect_row "nothing, between its turns (control)" +0.0% +0.0% +0.0% +0.0% +0.0% +0.0%
expect_row "mmhitmd x20, its turns" +4.0% +4.0% +4.0% +4.0% +4.0% +4.0%
expect_row "mmhitmd (default), from turns x20 / 20" +0.2% +0.2% +0.2% +0.2% +0.2% +0.2%
if row "ctxswitch" | grep -q "| 1e+03 yields/s |"; then
	pass "alone: the baselines' median, 1000/s"
else
	fail "alone: not the baselines' 1000/s"; cat "$WORK/out.txt"
fi


# --- the direct cost (bench/direct-cost.awk) -----------------------------
# 100 s at 1000/s, progress every 100 ms; ten armed spans of 0.3 s, one
# every 10 s starting mid-line (5.05 s, 15.05 s, ...), the workload 5 %
# and 15 % slower in them by turns: each loses 0.015 or 0.045 s. Mean
# loss 0.03 s: in-window slowdown 10 % of the 3 s armed (3 % of the run),
# whole-run cost 0.3 %; sd of the losses 0.015811 (n = 10, t(9) = 2.262):
# half widths 0.1131 % of the run, 3.770 % of the spans. The placebos
# fall where nothing slows: 0 exactly. A span outside the run is ignored.
awk -v dir="$WORK" 'BEGIN {
	for (k = 0; k < 10; k++)
		printf "%.3f %.3f counters%s\n", 5.05 + 10 * k, 5.35 + 10 * k, k ? "" : " learn" > dir "/spans"
	printf "200.000 200.300 counters\n" > dir "/spans"
	ops = 0
	for (i = 0; i <= 1000; i++) {
		t = i / 10
		printf "progress %.3f %.6f\n", t, ops > dir "/dprogress"
		# work done in [t, t + 0.1]: 1000/s, slowed inside a span
		x = t - int(t / 10) * 10
		slow = int(t / 10) % 2 ? 0.15 : 0.05
		in_ = 0
		if (x + 0.1 > 5.05 && x < 5.35)
			in_ = (x + 0.1 < 5.35 ? x + 0.1 : 5.35) - (x > 5.05 ? x : 5.05)
		ops += 1000 * (0.1 - in_ * slow)
	}
}'
awk -f bench/progress.awk -f bench/t975.awk -f bench/direct-cost.awk -v w=pwrite -v t0=0 -v t1=100 \
	"$WORK/spans" "$WORK/dprogress" >"$WORK/direct.tsv" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "direct-cost.awk failed"; finish; }
echo "  direct-cost.awk: $(cat "$WORK/direct.tsv")"
# workload spans run armed slowdown half cost half control half placebos
check_str "direct: spans in the run, armed seconds" "$(cut -f 2-4 "$WORK/direct.tsv")" "10	100.000	3.000"
check_str "direct: slowdown, cost and their half widths" \
	"$(awk -F'\t' '{ printf "%.3f %.3f %.4f %.4f", $5, $6, $7, $8 }' "$WORK/direct.tsv")" "10.000 3.770 0.3000 0.1131"
check_str "direct: the placebos' control is 0 (9 placebos)" \
	"$(awk -F'\t' '{ printf "%.4f %.4f %d", $9, $10, $11 }' "$WORK/direct.tsv")" "0.0000 0.0000 9"
printf 'pwrite\tmmhitmd-direct\tdirect\t0.1\t1000\t100\t9000\t8000\t0.1\t0.5\t1.2\t100\n' >"$WORK/ddaemon"
awk -f bench/t975.awk -f bench/summarize.awk -v rounds=1 -v secs=20 -v offsecs=10 -v interval=60s \
	-v kernel=test -v cpus=2 -v host=test -v stamp=test -v elapsed=1 -v command=test \
	-v events=tlb:tlb_flush -v json="$WORK/direct.json" -v ingest= -v amplify=10 -v amplified= \
	-v raw=/dev/null -v dmn="$WORK/ddaemon" -v rec=/dev/null -v direct="$WORK/direct.tsv" \
	-v direct_secs=100 /dev/null >"$WORK/out.txt" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "summarize.awk failed on the direct cost"; finish; }
check_str "direct: the table's row" "$(row pwrite | head -n 1)" \
	"| pwrite | 10 | 3.00% | +10.0% [+6.2% .. +13.8%] | +0.300% [+0.187% .. +0.413%] | +0.000% [+0.000% .. +0.000%] |"
if row "mmhitmd (default), direct" | grep -q "| 0.5% |"; then
	pass "direct: own cost row, armed 0.5 %"
else
	fail "direct: no own cost row"; cat "$WORK/out.txt"
fi
python3 - "$WORK/direct.json" <<'EOF' || fail "JSON: the direct cost"
import json, sys
d = json.load(open(sys.argv[1]))["workloads"][0]["direct"]
lo, hi = d["cost_ci95_pct"]
print("JSON direct:", d)
sys.exit(0 if d["spans"] == 10 and abs(d["cost_pct"] - 0.3) < 1e-6 and abs(hi - lo - 2 * 0.1131) < 1e-3
         and abs(d["armed_pct"] - 3) < 1e-9 and abs(d["control_pct"]) < 1e-9 else 1)
EOF

finish
