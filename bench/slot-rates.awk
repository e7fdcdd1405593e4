# SPDX-License-Identifier: GPL-2.0
#
# bench/run-bench.sh's slot throughputs: run with bench/progress.awk before
# it, -v slots=FILE (workload mode round start end, on the progress
# clock), -v w, metric, unit, over the workload's progress lines. Prints a
# raw row (workload mode round rate true metric unit baseline) for every
# slot alone and for every recorder slot with slots alone on both sides
# (its baseline: their mean rate).

END {
	k = 0
	while ((getline line < slots) > 0) {
		split(line, f, "\t")
		# (the switchback's units are its intervals, the direct cost's its spans)
		if (f[1] != w || f[2] == "mmhitmd-share" || f[2] == "mmhitmd-direct")
			continue
		x = rate_over(f[4], f[5])
		if (x < 0)
			continue
		k++
		mode[k] = f[2]; round[k] = f[3]; rate[k] = x
	}
	for (i = 1; i <= k; i++) {
		base = ""
		if (mode[i] != "alone" && i > 1 && i < k && mode[i - 1] == "alone" && mode[i + 1] == "alone")
			base = (rate[i - 1] + rate[i + 1]) / 2
		if (mode[i] != "alone" && base == "")
			continue
		printf "%s\t%s\t%s\t%.6f\ttrue\t%s\t%s\t%s\n", w, mode[i], round[i], rate[i],
			metric, unit, base
	}
}
