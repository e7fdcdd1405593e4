# SPDX-License-Identifier: GPL-2.0
#
# bench/run-bench.sh's summary: Markdown tables on stdout, the same as JSON
# into the file named by -v json=. POSIX awk (Debian's default is mawk).
#
# Inputs (-v): raw (workload mode round value higher_is_better metric unit
# baseline), dmn (workload mode round cpu_s events seconds hwm_kb rss_kb
# slot_cpu_s armed_s start_cpu_s slot_s), rec (workload round bytes lost_chunks),
# ingest (a JSON object file or ""), secs and offsecs (the slot lengths),
# amplify and amplified (the amplified daemon's factor and flags),
# share_amplify and shared (the interval switchback's factor and flags;
# its rows' "round" is the interval, see bench/share-units.awk), direct
# (bench/direct-cost.awk's rows, one per workload) and direct_secs. Run
# with bench/t975.awk before it.
#
# Overhead of a mode in a round = throughput lost against its baseline, the
# workload alone in the slots on either side of it, in %: (1 - mode/alone)
# * 100 for rates, (1 - alone/mode) * 100 for times (lower is better), so
# positive is always slower. The control mode starts nothing: its overhead
# is this machine's noise. The 95 % confidence interval of the mean
# overhead is Student's t over the rounds.

function sort_(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--)
			a[j + 1] = a[j]
		a[j + 1] = t
	}
}

# Quantile q of sorted a[1..n], linear between order statistics.
function quant(a, n, q,    h, lo) {
	if (n == 0)
		return "nan"
	h = (n - 1) * q + 1
	lo = int(h)
	if (lo >= n)
		return a[n]
	return a[lo] + (h - lo) * (a[lo + 1] - a[lo])
}

# Splits the space-separated list s into sorted v[1..n]; returns n.
function load_sorted(s, v,    n, i, parts) {
	n = split(s, parts, " ")
	for (i = 1; i <= n; i++)
		v[i] = parts[i] + 0
	sort_(v, n)
	return n
}

function jnum(x) {
	return (x == "nan" || x == "") ? "null" : sprintf("%.9g", x)
}

function jstr(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	return "\"" s "\""
}

# {"median": .., "min": .., "max": .., "q1": .., "q3": .., "n": .., "values": [...]}
function jstats(s,    v, n, i, out) {
	n = load_sorted(s, v)
	out = sprintf("{\"median\": %s, \"min\": %s, \"max\": %s, \"q1\": %s, \"q3\": %s, \"n\": %d, \"values\": [",
		jnum(quant(v, n, 0.5)), jnum(n ? v[1] : "nan"), jnum(n ? v[n] : "nan"),
		jnum(quant(v, n, 0.25)), jnum(quant(v, n, 0.75)), n)
	for (i = 1; i <= n; i++)
		out = out (i > 1 ? ", " : "") jnum(v[i])
	return out "]}"
}

# 97.5 % quantile of Student's t with df degrees of freedom.
# Mean and half-width of the 95 % CI of the list s: sets ci_mean, ci_half.
function ci(s,    v, n, i, m, ss) {
	n = split(s, v, " ")
	ci_mean = "nan"; ci_half = "nan"
	if (n < 2)
		return
	m = 0
	for (i = 1; i <= n; i++)
		m += v[i]
	m /= n
	ss = 0
	for (i = 1; i <= n; i++)
		ss += (v[i] - m) * (v[i] - m)
	ci_mean = m
	ci_half = t975(n - 1) * sqrt(ss / (n - 1) / n)
}

function human(x) {
	if (x == "nan")
		return "n/a"
	if (x >= 1e6)
		return sprintf("%.2fM", x / 1e6)
	if (x >= 1e4)
		return sprintf("%.1fk", x / 1e3)
	return sprintf("%.3g", x)
}

function pct(x) {
	return x == "nan" ? "n/a" : sprintf("%+.1f%%", x)
}

# m - h (side -1) or m + h (side 1); "nan" when either is
function lohi(m, h, side) {
	return (m == "nan" || h == "nan") ? "nan" : m + side * h
}

function pct2(x) {
	return x == "nan" ? "n/a" : sprintf("%+.1f%%", x)
}

function pct3(x) {
	return x == "nan" ? "n/a" : sprintf("%+.3f%%", x)
}

# The direct cost's table: one row per workload (bench/direct-cost.awk).
function direct_table(    i, w, f) {
	printf "\n### The default's direct cost\n\n"
	printf "One run of the daemon as it ships (%d s; mmhitmd --interval %s) beside the\n", direct_secs, interval
	printf "workload, which prints its work every 100 ms. Each window's armed span (its arming\n"
	printf "to the end of its disarming, from the daemon's \"Armed span\" lines) is padded by\n"
	printf "0.2 s and its work compared with the workload's rate in the 2 s on either side\n"
	printf "(bench/direct-cost.awk). In-window slowdown: the work lost over the spans' length;\n"
	printf "armed: the spans' share of the run; whole-run cost: the work lost over the run.\n"
	printf "Intervals: 95 %%, Student's t over the spans. The control does the same at placebo\n"
	printf "spans midway between windows, scaled to the spans' count: this machine's noise at\n"
	printf "the measurement's scale.\n\n"
	printf "| workload | spans | armed | in-window slowdown [95 %% CI] | whole-run cost [95 %% CI] | control [95 %% CI] |\n"
	printf "|---|---:|---:|---:|---:|---:|\n"
	for (i = 1; i <= nw; i++) {
		w = order[i]
		if (!(w in dline))
			continue
		split(dline[w], f, "\t")
		printf "| %s | %d | %s | %s [%s .. %s] | %s [%s .. %s] | %s [%s .. %s] |\n", w, f[2],
			(f[3] > 0 ? sprintf("%.2f%%", f[4] / f[3] * 100) : "n/a"),
			pct2(f[5]), pct2(lohi(f[5], f[6], -1)), pct2(lohi(f[5], f[6], 1)),
			pct3(f[7]), pct3(lohi(f[7], f[8], -1)), pct3(lohi(f[7], f[8], 1)),
			pct3(f[9]), pct3(lohi(f[9], f[10], -1)), pct3(lohi(f[9], f[10], 1))
	}
}

BEGIN {
	nw = 0
	while ((getline line < raw) > 0) {
		split(line, f, "\t")
		w = f[1]; m = f[2]; r = f[3]
		if (!(w in seen)) {
			seen[w] = 1
			order[++nw] = w
		}
		val[w, m, r] = f[4]
		if (r + 0 > maxr[w, m] + 0)
			maxr[w, m] = r + 0
		if (f[8] != "")
			base[w, m, r] = f[8]
		hib[w] = f[5]
		metric[w] = f[6]
		unit[w] = f[7]
		vals[w, m] = vals[w, m] " " f[4]
		have_mode[m] = 1
	}
	while ((getline line < dmn) > 0) {
		split(line, f, "\t")
		k = f[1] SUBSEP f[2]	# workload, daemon mode
		if (f[5] > 0)
			cpm[k] = cpm[k] " " (f[4] / f[5] * 1e6)
		if (f[6] > 0) {
			evs[k] = evs[k] " " (f[5] / f[6])
			cpupct[k] = cpupct[k] " " (f[4] / f[6] * 100)
		}
		if (f[7] + 0 > hwm[k] + 0)
			hwm[k] = f[7]
		if (f[8] + 0 > dbrss[k] + 0)
			dbrss[k] = f[8]
		pcpu[k] = pcpu[k] " " f[9]
		if (f[12] > 0)
			slotpct[k] = slotpct[k] " " (f[9] / f[12] * 100)
		startcpu[k] = startcpu[k] " " f[11]
		dcpu[k] = dcpu[k] " " f[4]
		if (f[6] > 0 && f[10] != "")
			armed[k] = armed[k] " " (f[10] / f[6] * 100)
		if (f[2] == "mmhitmd-direct")
			have_mode[f[2]] = 1
	}
	while ((getline line < direct) > 0) {
		split(line, f, "\t")
		dline[f[1]] = line
		if (!(f[1] in seen)) {
			seen[f[1]] = 1
			order[++nw] = f[1]
		}
	}
	while ((getline line < rec) > 0) {
		split(line, f, "\t")
		w = f[1]
		recbytes[w] = recbytes[w] " " f[3]
		if (f[4] + 0 > reclost[w] + 0)
			reclost[w] = f[4]
	}
	ningest = 0
	if (ingest != "") {
		while ((getline line < ingest) > 0)
			ingest_json = ingest_json line
	}

	nm = split("control mmhitmd mmhitmd-amplified mmhitmd-derived share-control mmhitmd-share mmhitmd-share-derived mmhitmd-continuous mmhitmd-count perf-stat perf-record", modes, " ")
	nd = split("mmhitmd mmhitmd-amplified mmhitmd-share mmhitmd-direct mmhitmd-continuous mmhitmd-count", dmodes, " ")
	label["control"] = "nothing (control)"
	label["mmhitmd"] = "mmhitmd (default, windowed)"
	label["mmhitmd-amplified"] = sprintf("mmhitmd amplified x%d", amplify)
	label["mmhitmd-derived"] = sprintf("mmhitmd (default), from x%d / %d", amplify, amplify)
	label["share-control"] = "nothing, between its turns (control)"
	label["mmhitmd-share"] = sprintf("mmhitmd x%d, its turns", share_amplify)
	label["mmhitmd-share-derived"] = sprintf("mmhitmd (default), from turns x%d / %d", share_amplify, share_amplify)
	label["mmhitmd-direct"] = "mmhitmd (default), direct"
	label["mmhitmd-continuous"] = "mmhitmd, continuous"
	label["mmhitmd-count"] = "mmhitmd, continuous, counting only"
	label["perf-stat"] = "perf stat -a"
	label["perf-record"] = "perf record -a"

	# Overheads per (workload, mode), paired by round.
	for (i = 1; i <= nw; i++) {
		w = order[i]
		for (k = 1; k <= nm; k++) {
			m = modes[k]
			for (r = 1; r <= maxr[w, m]; r++) {
				if (!((w, m, r) in val))
					continue
				if ((w, m, r) in base)
					va = base[w, m, r]
				else if ((w, "alone", r) in val)
					va = val[w, "alone", r]
				else
					continue
				vm = val[w, m, r]
				if (va <= 0 || vm <= 0)
					continue
				ov = (hib[w] == "true") ? (1 - vm / va) * 100 : (1 - va / vm) * 100
				ovh[w, m] = ovh[w, m] " " ov
				# The amplified daemon does per second what the
				# default does, amplify times: its overhead over
				# amplify is the default's, round by round.
				if (m == "mmhitmd-amplified" && amplify > 0) {
					ovh[w, "mmhitmd-derived"] = ovh[w, "mmhitmd-derived"] " " ov / amplify
					have_mode["mmhitmd-derived"] = 1
				}
				if (m == "mmhitmd-share" && share_amplify > 0) {
					ovh[w, "mmhitmd-share-derived"] = ovh[w, "mmhitmd-share-derived"] " " ov / share_amplify
					have_mode["mmhitmd-share-derived"] = 1
				}
			}
		}
	}

	printf "### mmhitm recording overhead\n\n"
	printf "Kernel %s, %d CPUs (%s). One run of each workload; %d rounds, each giving\n", kernel, cpus, host, rounds
	printf "every recorder a %d s slot after at least %d s alone, in an order rotated per round;\n", secs, offsecs
	printf "the windowed daemon's slot is one whole interval of its steady state (boundary to\n"
	printf "boundary, plus 1 s for the flush); mmhitmd --interval %s. Tracepoints (for all\n", interval
	printf "the recorders):\n"
	printf "%s.\n", events
	printf "Overhead = throughput lost against the slots alone just before and after (positive =\n"
	printf "slower): median over rounds, mean [95 %% CI, Student's t over the rounds], min .. max.\n"
	printf "The control row starts nothing: this machine's noise.\n"
	if ("mmhitmd-amplified" in have_mode) {
		printf "The amplified daemon runs the default configuration's clocks %d times faster\n", amplify
		printf "(%s, its first whole interval a warm-up, the slot\n", amplified
		printf "the whole intervals that fit in %d s, plus 1 s for the flush): per second it does\n", secs
		printf "what the default does, %d times over. Its overhead over %d, round by round, is the\n", amplify, amplify
		printf "default's measured at a scale this machine's noise can resolve (\"from x%d / %d\").\n", amplify, amplify
	}
	if ("mmhitmd-share" in have_mode) {
		printf "The interval switchback is one run of the daemon beside the workload, its clocks\n"
		printf "%d times faster (%s): each interval is\n", share_amplify, shared
		printf "its turn or not, as the host id and the time decide. Each turn's throughput is\n"
		printf "against the mean of the nearest intervals on either side that were not its turn\n"
		printf "and did not follow one, and so is the control, a coin's half of those intervals;\n"
		printf "the mean [95 %% CI] is over the turns. A turn holds a default interval's windows,\n"
		printf "learning and budget; over %d, it is what they cost a default interval\n", share_amplify
		printf "(\"from turns x%d / %d\"); what the daemon does between windows (free counters,\n", share_amplify, share_amplify
		printf "the flush) is in both and shows in its CPU below.\n"
	}
	printf "\n"
	printf "| workload | metric | alone (median) | recorder | overhead median | mean [95 %% CI] | min .. max |\n"
	printf "|---|---|---:|---|---:|---:|---:|\n"
	for (i = 1; i <= nw; i++) {
		w = order[i]
		n = load_sorted(vals[w, "alone"], xa)
		first = 1
		for (k = 1; k <= nm; k++) {
			m = modes[k]
			if (!(m in have_mode))
				continue
			no = load_sorted(ovh[w, m], xo)
			ci(ovh[w, m])
			printf "| %s | %s | %s %s | %s | %s | %s [%s .. %s] | %s .. %s |\n",
				first ? w : "", first ? metric[w] : "",
				first ? human(quant(xa, n, 0.5)) : "", first ? unit[w] : "", label[m],
				pct(quant(xo, no, 0.5)), pct(ci_mean),
				pct(ci_mean == "nan" ? "nan" : ci_mean - ci_half),
				pct(ci_mean == "nan" ? "nan" : ci_mean + ci_half),
				pct(no ? xo[1] : "nan"), pct(no ? xo[no] : "nan")
			first = 0
		}
	}

	if ("mmhitmd-direct" in have_mode)
		direct_table()

	if (("mmhitmd" in have_mode) || ("mmhitmd-amplified" in have_mode) || ("mmhitmd-share" in have_mode) || ("mmhitmd-direct" in have_mode) || ("mmhitmd-continuous" in have_mode) || ("mmhitmd-count" in have_mode)) {
		printf "\n### mmhitmd's own cost\n\n"
		printf "CPU per 1M events from its database (intervals.cpu_user_ns + cpu_sys_ns over\n"
		printf "event_rates.count); CPU %% of one CPU in the slot and the start-up's CPU from\n"
		printf "/proc/PID/stat; peak RSS from /proc/PID/status VmHWM; medians over rounds.\n"
		printf "This is the daemon's own CPU time; what counting costs inside the kernel shows as\n"
		printf "overhead above. Armed = share of wall time the windows had anything armed in\n"
		printf "the kernel (continuous: all of it).\n\n"
		printf "| workload | mmhitmd | kernel events/s counted | CPU s per 1M events | CPU (%% of one CPU) | start-up CPU | armed | peak RSS |\n"
		printf "|---|---|---:|---:|---:|---:|---:|---:|\n"
		for (i = 1; i <= nw; i++) {
			w = order[i]
			for (d = 1; d <= nd; d++) {
				k = w SUBSEP dmodes[d]
				if (!(dmodes[d] in have_mode))
					continue
				ne = load_sorted(evs[k], xe)
				nc = load_sorted(cpm[k], xc)
				np = load_sorted(cpupct[k], xp)
				nar = load_sorted(armed[k], xar)
				ns = load_sorted(slotpct[k], xs)
				nsu = load_sorted(startcpu[k], xsu)
				printf "| %s | %s | %s | %.4f [%.4f .. %.4f] | %.2f%% | %.2f s | %.1f%% | %.1f MiB |\n",
					w, label[dmodes[d]],
					human(quant(xe, ne, 0.5)), quant(xc, nc, 0.5), nc ? xc[1] : 0,
					nc ? xc[nc] : 0, quant(xs, ns, 0.5), quant(xsu, nsu, 0.5),
					quant(xar, nar, 0.5), hwm[k] / 1024
			}
		}
	}
	if ("perf-record" in have_mode) {
		printf "\nperf record -a wrote, per %d s slot (median): ", secs
		sep = ""
		for (i = 1; i <= nw; i++) {
			w = order[i]
			nb = load_sorted(recbytes[w], xb)
			printf "%s%s %.0f MB%s", sep, w, quant(xb, nb, 0.5) / 1e6,
				(reclost[w] > 0 ? sprintf(" (lost up to %d chunks)", reclost[w]) : "")
			sep = ", "
		}
		printf ".\n"
	}
	if (ingest_json != "") {
		s = ingest_json
		rps = s; sub(/.*"value": */, "", rps); sub(/[,}].*/, "", rps)
		rows = s; sub(/.*"rows_per_flush": */, "", rows); sub(/[,}].*/, "", rows)
		med = s; sub(/.*"flush_ms_median": */, "", med); sub(/[,}].*/, "", med)
		printf "\nIngest (mmhitmd's interval flush, %.0f rows per transaction, bench-ingest): %s rows/s,\n", rows, human(rps + 0)
		printf "%.1f ms per flush (median).\n", med
	}
	printf "\nCommand: `%s` (%d s in all).\n", command, elapsed

	# JSON
	printf "{\"stamp\": %s, \"host\": %s, \"kernel\": %s, \"cpus\": %d, \"rounds\": %d, ", jstr(stamp), jstr(host), jstr(kernel), cpus, rounds > json
	printf "\"design\": \"switchback\", \"seconds_per_slot\": %d, \"seconds_alone_per_slot\": %d, \"mmhitmd_interval\": %s, \"command\": %s, \"elapsed_s\": %d, ", secs, offsecs, jstr(interval), jstr(command), elapsed > json
	printf "\"amplify\": %d, \"amplified_flags\": %s, ", amplify, jstr(amplified) > json
	printf "\"share_amplify\": %d, \"share_flags\": %s, ", share_amplify, jstr(shared) > json
	ne = split(events, evlist, " ")
	printf "\"tracepoints\": [" > json
	for (i = 1; i <= ne; i++)
		printf "%s%s", (i > 1 ? ", " : ""), jstr(evlist[i]) > json
	printf "], \"workloads\": [" > json
	for (i = 1; i <= nw; i++) {
		w = order[i]
		printf "%s{\"name\": %s, \"metric\": %s, \"unit\": %s, \"higher_is_better\": %s, ", (i > 1 ? ", " : ""),
			jstr(w), jstr(metric[w]), jstr(unit[w]), hib[w] == "true" ? "true" : "false" > json
		printf "\"alone\": %s, \"recorders\": {", jstats(vals[w, "alone"]) > json
		sep = ""
		for (k = 1; k <= nm; k++) {
			m = modes[k]
			if (!(m in have_mode))
				continue
			ci(ovh[w, m])
			printf "%s%s: {\"throughput\": %s, \"overhead_pct\": %s, \"overhead_mean_pct\": %s, \"overhead_ci95_pct\": [%s, %s]}", sep, jstr(m),
				jstats(vals[w, m]), jstats(ovh[w, m]), jnum(ci_mean),
				jnum(ci_mean == "nan" ? "nan" : ci_mean - ci_half),
				jnum(ci_mean == "nan" ? "nan" : ci_mean + ci_half) > json
			sep = ", "
		}
		printf "}" > json
		printf ", \"daemon\": {" > json
		sep = ""
		for (d = 1; d <= nd; d++) {
			k = w SUBSEP dmodes[d]
			if (!(dmodes[d] in have_mode))
				continue
			printf "%s%s: {\"cpu_s_per_million_events\": %s, \"events_per_s\": %s, \"cpu_pct_of_one_cpu\": %s, \"cpu_s\": %s, \"slot_cpu_s\": %s, \"startup_cpu_s\": %s, \"peak_rss_kb\": %s, \"max_interval_rss_kb\": %s, \"armed_pct\": %s}",
				sep, jstr(dmodes[d]), jstats(cpm[k]), jstats(evs[k]), jstats(slotpct[k]),
				jstats(dcpu[k]), jstats(pcpu[k]), jstats(startcpu[k]), jnum(hwm[k]), jnum(dbrss[k]), jstats(armed[k]) > json
			sep = ", "
		}
		printf "}" > json
		if (w in dline) {
			split(dline[w], f, "\t")
			printf ", \"direct\": {\"seconds\": %s, \"spans\": %d, \"armed_pct\": %s, \"slowdown_in_spans_pct\": %s, \"slowdown_ci95_half_pct\": %s, \"cost_pct\": %s, \"cost_ci95_pct\": [%s, %s], \"control_pct\": %s, \"control_ci95_pct\": [%s, %s], \"placebos\": %d}",
				jnum(f[3]), f[2], jnum(f[3] > 0 ? f[4] / f[3] * 100 : "nan"), jnum(f[5]), jnum(f[6]),
				jnum(f[7]), jnum(lohi(f[7], f[8], -1)), jnum(lohi(f[7], f[8], 1)),
				jnum(f[9]), jnum(lohi(f[9], f[10], -1)), jnum(lohi(f[9], f[10], 1)), f[11] > json
		}
		if ("perf-record" in have_mode)
			printf ", \"perf_record\": {\"bytes\": %s, \"lost_chunks_max\": %d}", jstats(recbytes[w]), reclost[w] + 0 > json
		printf "}" > json
	}
	printf "], \"ingest\": %s}\n", ingest_json != "" ? ingest_json : "null" > json
	close(json)
}
