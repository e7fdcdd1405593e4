# SPDX-License-Identifier: GPL-2.0
#
# mmhitm-load --progress lines ("progress T OPS", T on the clock of
# /proc/uptime), for bench/run-bench.sh's awk programs: the rule keeps
# them in t[1..n], o[1..n]; ops_at(x) is the work done by time x,
# interpolated between the lines around it, -1 outside them.

$1 == "progress" { n++; t[n] = $2; o[n] = $3 }

function ops_at(x,    i) {
	for (i = 2; i <= n; i++)
		if (t[i] >= x)
			return o[i - 1] + (o[i] - o[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1])
	return -1
}

# The rate over [a, b], or -1 when the progress lines do not cover it.
function rate_over(a, b,    x, y) {
	if (b <= a || n < 2 || a < t[1])
		return -1
	x = ops_at(a); y = ops_at(b)
	if (x < 0 || y < 0)
		return -1
	return (y - x) / (b - a)
}
