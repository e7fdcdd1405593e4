# SPDX-License-Identifier: GPL-2.0
#
# mmhitmd's "Armed span" debug lines (daemon/schedule.c, span_log()) as
# "from to what", CLOCK_BOOTTIME seconds, one window a line: what
# bench/direct-cost.awk reads, and what test-windows checks the daemon
# writes. Other lines are skipped.
#
#   awk -f bench/armed-spans.awk MMHITMD-LOG

{
	i = index($0, "Armed span ")
	if (!i)
		next
	n = split(substr($0, i + 11), f, " ")
	# FROM .. TO s CLOCK_BOOTTIME (X ms): WHAT...
	if (n < 7 || f[2] != ".." || f[4] != "s" || f[5] != "CLOCK_BOOTTIME" || f[1] !~ /^[0-9.]+$/ ||
	    f[3] !~ /^[0-9.]+$/)
		next
	what = f[8]
	for (k = 9; k <= n; k++)
		what = what " " f[k]
	print f[1], f[3], what
}
