# SPDX-License-Identifier: GPL-2.0
#
# bench/run-bench.sh's interval switchback (mode mmhitmd-share): one
# daemon run with --fleet-share 0.3 beside one run of the workload, so
# that three intervals in ten are its turn (windows, learning) and the
# others are not (free counters only), spread evenly in an order the host
# id and the time decide: a turn, then two or three that are not. Run with bench/progress.awk before it:
#
#   awk -f bench/progress.awk -f bench/share-units.awk -v w=WORKLOAD \
#       -v metric=M -v unit=U UNITS PROGRESS
#
# UNITS: the daemon's whole intervals in time order, "start end turn" on
# the progress clock (turn 1: the daemon's turn). PROGRESS: the
# workload's progress lines. Prints run-bench.sh's raw rows (workload
# mode unit rate true metric unit baseline) for every turn (mode
# mmhitmd-share) and for a control (share-control), each against the
# mean rate of the nearest baseline interval before it and after it, at
# most MAXGAP intervals away, so that the machine's drift over minutes
# cancels within seconds; and the baselines themselves (mode alone).
#
# Baselines are the intervals not the daemon's turn whose previous
# interval was not either (a turn's last slice is disarmed, and its switch
# sample streamed, a few tens of milliseconds past its end). Each of them
# is also a control, against the nearest other baselines on either side:
# measured as the turns are, its spread is the noise of one interval
# against its neighbours.

BEGIN { MAXGAP = 4 }

FILENAME == ARGV[1] { nu++; us[nu] = $1; ue[nu] = $2; turn[nu] = $3 + 0; next }

END {
	for (i = 1; i <= nu; i++) {
		r[i] = rate_over(us[i], ue[i])
		kind[i] = "-"
		if (r[i] <= 0)
			continue
		if (turn[i])
			kind[i] = "T"
		else if (i > 1 && !turn[i - 1] && us[i] - ue[i - 1] < 0.5)
			kind[i] = "B"
	}
	for (i = 1; i <= nu; i++) {
		if (kind[i] == "B")	# the workload alone, for the table
			printf "%s\talone\t%d\t%.6f\ttrue\t%s\t%s\t\n", w, i, r[i], metric, unit
		if (kind[i] == "-")
			continue
		before = after = ""
		for (j = i - 1; j >= 1 && j >= i - MAXGAP && before == ""; j--)
			if (kind[j] == "B")
				before = r[j]
		for (j = i + 1; j <= nu && j <= i + MAXGAP && after == ""; j++)
			if (kind[j] == "B")
				after = r[j]
		if (before == "" || after == "")
			continue
		printf "%s\t%s\t%d\t%.6f\ttrue\t%s\t%s\t%.6f\n", w,
			kind[i] == "T" ? "mmhitmd-share" : "share-control", i, r[i], metric, unit,
			(before + after) / 2
	}
}
