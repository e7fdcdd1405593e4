# SPDX-License-Identifier: GPL-2.0
#
# bench/run-bench.sh's direct cost (mode mmhitmd-direct): what the
# default daemon's windows cost a workload, read from the workload's own
# 100 ms progress lines around each window. Run with bench/progress.awk
# before it:
#
#   awk -f bench/progress.awk -f bench/t975.awk -f bench/direct-cost.awk -v w=WORKLOAD \
#       -v t0=START -v t1=END SPANS PROGRESS
#
# SPANS: the daemon's "Armed span" lines, "from to what" on the progress
# clock (CLOCK_BOOTTIME s): from the start of a window's arming to the end
# of its disarming (the sched_switch sample included), the time the
# workload shares its CPUs with the window. [START, END] is the daemon's
# measured run.
#
# Each span, padded by PAD on both sides so that the whole disturbance
# falls inside it (a progress line every 100 ms: a slowdown near an edge
# is spread over the line's period), is compared with the workload's rate
# over BASE seconds on either side that no other padded span touches
# (clipped where one does; a side under BASE/4 is left out, a span with
# no side is skipped). Its loss is the padded length minus the work done
# in it over that rate: seconds of the workload lost. Then:
#   in-window slowdown  the losses over the spans' summed length;
#   armed share         the spans' summed length over the run's;
#   whole-run cost      the losses over the run's length;
# each with a 95 % interval from the spread of the losses (Student's t
# over the spans: the windows fall at random points and do not overlap).
# The control does the same at a placebo span of the same length midway
# between each span and the next, where nothing is armed: its cost, with
# the spans' count, is this machine's noise at the measurement's scale.
#
# Prints one row: workload spans run_s armed_s slowdown slowdown_half
# cost cost_half control control_half placebos (percentages; halves are
# the 95 % interval's half widths; "nan" where fewer than 2 spans).

BEGIN { PAD = 0.2; BASE = 2.0 }

FILENAME == ARGV[1] {
	if ($1 + 0 >= t0 && $2 + 0 <= t1 && $2 > $1) {
		ns++; sa[ns] = $1 + 0; sb[ns] = $2 + 0
	}
	next
}

# The part of [x, y] no padded span touches, clipped from the side away
# from (a, b); sets lo, hi. side: -1 the base before, +1 after.
function clip(x, y, side,    j, pa, pb) {
	lo = x; hi = y
	for (j = 1; j <= ns; j++) {
		pa = sa[j] - PAD; pb = sb[j] + PAD
		if (pb <= lo || pa >= hi)
			continue
		if (side < 0)
			lo = pb > lo ? pb : lo
		else
			hi = pa < hi ? pa : hi
	}
	if (lo < t0) lo = t0
	if (hi > t1) hi = t1
}

# Seconds lost in [a, b] (padded) against the bases on either side;
# "" when no base is usable or the progress lines do not cover it.
function loss(a, b,    ra, rb, ops, len, bo, bl, x, y) {
	ra = a - PAD; rb = b + PAD
	bo = bl = 0
	clip(ra - BASE, ra, -1)
	if (hi - lo >= BASE / 4) {
		x = ops_at(lo); y = ops_at(hi)
		if (x >= 0 && y >= 0) { bo += y - x; bl += hi - lo }
	}
	clip(rb, rb + BASE, 1)
	if (hi - lo >= BASE / 4) {
		x = ops_at(lo); y = ops_at(hi)
		if (x >= 0 && y >= 0) { bo += y - x; bl += hi - lo }
	}
	x = ops_at(ra); y = ops_at(rb)
	if (bl <= 0 || bo <= 0 || x < 0 || y < 0)
		return ""
	return (rb - ra) - (y - x) / (bo / bl)
}

# mean and 95 % half width of v[1..n], into m and h
function stats(v, n,    i, s, ss) {
	m = h = "nan"
	if (n < 1) return
	s = 0
	for (i = 1; i <= n; i++) s += v[i]
	m = s / n
	if (n < 2) return
	ss = 0
	for (i = 1; i <= n; i++) ss += (v[i] - m) ^ 2
	h = t975(n - 1) * sqrt(ss / (n - 1) / n)
}

END {
	run = t1 - t0
	nl = np = armed = 0
	for (i = 1; i <= ns; i++) {
		l = loss(sa[i], sb[i])
		if (l == "")
			continue
		nl++; lv[nl] = l; armed += sb[i] - sa[i]
		# The placebo: as long, midway to the next span, clear of both.
		if (i == ns)
			continue
		c = (sb[i] + sa[i + 1]) / 2; half = (sb[i] - sa[i]) / 2
		if (c - half - PAD - BASE / 4 < sb[i] + PAD || c + half + PAD + BASE / 4 > sa[i + 1] - PAD)
			continue
		l = loss(c - half, c + half)
		if (l != "") {
			np++; pv[np] = l
		}
	}
	if (nl == 0 || run <= 0) {
		printf "%s\t0\t%.3f\t0\tnan\tnan\tnan\tnan\tnan\tnan\t0\n", w, run
		exit
	}
	# Costs are the losses' sum over the run: n times the mean loss.
	stats(lv, nl)
	cost = m * nl / run * 100; cost_h = h == "nan" ? "nan" : h * nl / run * 100
	slow = m * nl / armed * 100; slow_h = h == "nan" ? "nan" : h * nl / armed * 100
	stats(pv, np)
	ctl = m == "nan" ? "nan" : m * nl / run * 100
	ctl_h = h == "nan" ? "nan" : h * nl / run * 100
	printf "%s\t%d\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", w, nl, run, armed,
		slow, slow_h, cost, cost_h, ctl, ctl_h, np
}
