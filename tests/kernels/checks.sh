# SPDX-License-Identifier: GPL-2.0
#
# Sourced after lib.sh by test-lru-gen and test-rollout: the assertions on
# one boot that guest/record.sh recorded, made with sqlite3 on the host
# against what the guest itself saw (its BTF, lru_gen state, the loads'
# own reports and time windows).

# Seconds the daemon records and the loads run; the host writes them into
# /mnt/params for guest/record.sh.
DURATION=${DURATION:-30}
INTERVAL=${INTERVAL:-5}
LOAD_SECONDS=${LOAD_SECONDS:-6}
INSTANCE=mmhitm-kt
# test-lru-gen and test-rollout record continuously (guest/record.sh says
# why). Windowed (test-windowed, or RECORD_MODE=windowed here), with a
# window TCG can take: half of each interval (the most the daemon allows)
# in 4 slices, and a budget that does not shorten it, since under
# emulation every probe and text patch costs the daemon and the kernel
# a hundred times what it does on hardware.
RECORD_MODE=${RECORD_MODE:-continuous}
WINDOW=${WINDOW:-2.5}
WINDOW_SLICES=${WINDOW_SLICES:-4}
OVERHEAD_BUDGET=${OVERHEAD_BUDGET:-50%}
DAEMON_ARGS=${DAEMON_ARGS:-}

# Keys of mmhitm-load's --json output the checks read.
CTXSW_KEY=context_switches
AGING_PASSES_KEY=passes
AGING_MS_KEY=value		# of metric aging_ms_per_pass
AGING_MEMCG_KEY=memcg_id
AGING_NODES_KEY=nodes

q() {	# sql: one value per line, '|' between columns
	sqlite3 -batch -noheader "$DB" "$1"
}

json_get() {	# file key: prints the value of a top-level key, empty if none
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print("" if v is None else v)' "$1" "$2" 2>/dev/null
}

# The params file and the identity of the guest "host" on the disk.
disk_seed() {	# dir hostname
	mkdir -p "$1" || fail "cannot create $1"
	cat > "$1/params" <<-EOF
	DURATION=$DURATION
	INTERVAL=$INTERVAL
	LOAD_SECONDS=$LOAD_SECONDS
	INSTANCE=$INSTANCE
	RECORD_MODE=$RECORD_MODE
	WINDOW=$WINDOW
	WINDOW_SLICES=$WINDOW_SLICES
	OVERHEAD_BUDGET=$OVERHEAD_BUDGET
	DAEMON_ARGS="$DAEMON_ARGS"
	EOF
	# A fixed-format machine-id (32 hex digits), new per disk.
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$1/machine-id"
	echo "$2" > "$1/hostname"
}

programs_or_skip() {
	[ -x "$O/mmhitmd" ] || skip "$O/mmhitmd not built yet (issue 2: the daemon)"
	[ -x "$O/mmhitm-load" ] || skip "$O/mmhitm-load not built yet (issue 3: the loads)"
}

# sched_switch, counted or estimated, against /proc/stat's ctxt (the same
# switches, counted by the scheduler) over a boot: within 5 % and three of
# the estimates' standard errors (their variances add up; continuous: 0).
check_switches() {	# boot label
	sb=$1 sl=$2
	sw=$(q "SELECT coalesce(sum(c.count), 0) FROM event_counts c JOIN event_names n USING (event_id)
		JOIN intervals i USING (interval_id) WHERE i.boot_id = $sb AND n.name = 'sched:sched_switch'")
	se=$(q "SELECT CAST(3 * sqrt(coalesce(sum(c.variance), 0)) AS INTEGER) FROM event_counts c
		JOIN event_names n USING (event_id) JOIN intervals i USING (interval_id)
		WHERE i.boot_id = $sb AND n.name = 'sched:sched_switch'")
	# Only the intervals that measured switches: windowed, one without a
	# window has no count (not zero).
	ctxt=$(q "SELECT coalesce(sum(ctxt), 0) FROM intervals i WHERE boot_id = $sb AND EXISTS
		(SELECT 1 FROM event_counts c JOIN event_names n USING (event_id)
		 WHERE c.interval_id = i.interval_id AND n.name = 'sched:sched_switch')")
	echo "    sched_switch $sw (3 standard errors: $se), /proc/stat ctxt $ctxt"
	check "$sl: sched_switch within 5% + 3 se of ctxt" $(( (sw - ctxt) * 100 )) -le $(( ctxt * 5 + se * 100 ))
	check "$sl: ... both ways" $(( (ctxt - sw) * 100 )) -le $(( ctxt * 5 + se * 100 ))
}

# The windows of a boot recorded with RECORD_MODE: their share, and the
# estimates they gave.
check_windows() {	# boot label
	wb=$1 wl=$2
	method=window
	[ "$RECORD_MODE" = continuous ] && method=continuous
	q "SELECT count(*), round(avg(armed_share), 3), round(min(armed_share), 3), sum(slices),
		  group_concat(DISTINCT window_note)
	   FROM interval_summary WHERE boot_id = $wb AND partial = 0" |
		sed 's/^/    full intervals|mean armed share|min|slices|notes: /'
	check "$wl: sched_switch $method counts in every full interval" \
		"$(q "SELECT count(*) FROM intervals i WHERE boot_id = $wb AND partial = 0 AND NOT EXISTS
		      (SELECT 1 FROM event_counts c JOIN event_names n USING (event_id)
		       WHERE c.interval_id = i.interval_id AND n.name = 'sched:sched_switch'
		       AND c.method = '$method')")" -eq 0
	check "$wl: no count scaled for multiplexing (run_share 1)" \
		"$(q "SELECT count(*) FROM event_counts JOIN intervals USING (interval_id)
		      WHERE boot_id = $wb AND run_share != 1.0")" -eq 0
	[ "$RECORD_MODE" = continuous ] && return
	# The slices the daemon could take: under TCG a slice is held back
	# for a second or two while the last one's events are still being
	# closed, and the interval's end then cuts or leaves out what it
	# pushed on (the note says so), so the armed share falls short of the
	# one asked (32-42 % of the 50 % asked on 6.12, 2026-12-03; 2-16 %
	# when such a slice was skipped), but every full interval has some.
	check "$wl: every full interval armed (${WINDOW}s of ${INTERVAL}s asked)" \
		"$(q "SELECT count(*) FROM interval_summary WHERE boot_id = $wb AND partial = 0
		      AND NOT (armed_share > 0 AND slices > 0)")" -eq 0
	check "$wl: every windowed estimate has its standard error and raw count" \
		"$(q "SELECT count(*) FROM event_rates WHERE boot_id = $wb AND method = 'window'
		      AND (stderr IS NULL OR counted IS NULL)")" -eq 0
}

# Asserts on the boot guest/record.sh left in $DB and results dir R.
check_recording() {	# results-dir label
	R=$1 L=$2
	rel=$(cat "$R/release")
	check "$L: mmhitmd stored a first interval before the loads" -s "$R/first_interval"
	check "$L: mmhitmd exited 0" "$(cat "$R/mmhitmd.rc")" = 0
	check "$L: mmhitm-load ctxswitch exited 0" "$(cat "$R/ctxswitch.rc" 2>/dev/null)" = 0
	check "$L: mmhitm-load aging exited 0 (LRU_GEN on)" "$(cat "$R/aging.rc" 2>/dev/null)" = 0

	# The boot row: what docs/design.md says identifies a boot.
	check "$L: one boot of $rel recorded" \
		"$(q "SELECT count(*) FROM boots WHERE kernel_release = '$rel'")" -eq 1
	boot=$(q "SELECT boot_id FROM boots WHERE kernel_release = '$rel'")
	b() { q "SELECT $1 FROM boots WHERE boot_id = $boot"; }
	check "$L: boot has LRU_GEN on" "$(b lru_gen)" = on
	check "$L: lru_gen_features as the guest read them" "$(b lru_gen_features)" = "$(cat "$R/lru_gen.enabled")"
	check "$L: 2 CPUs online" "$(b nr_cpus_online)" -eq 2
	check "$L: BTF from vmlinux" "$(b btf)" = vmlinux
	# TCG emulates no PMU: the boot must say so, and why.
	check "$L: pmu_kind none under TCG" "$(b pmu_kind)" = none
	check "$L: ... with the reason" -n "$(b pmu_detail)"

	# BTF: the daemon's rows (libbpf) against bpftool's view of the BTF the
	# guest copied from /sys/kernel/btf/vmlinux.
	want=$(echo "mm_struct lru_gen.bitmap" | python3 "$KTESTS/btf-layout.py" "$R/vmlinux.btf")
	got=$(q "SELECT offset, size FROM btf_layouts WHERE boot_id = $boot
		 AND struct = 'mm_struct' AND field = 'lru_gen.bitmap'")
	echo "    mm_struct.lru_gen.bitmap: daemon '$got', bpftool '$want'"
	check "$L: mm_struct.lru_gen.bitmap recorded" -n "$got"
	check "$L: ... at bpftool's offset and size" "$(echo "$want" | cut -d' ' -f3,4)" = "$(echo "$got" | tr '|' ' ')"
	q "SELECT struct, field FROM btf_layouts WHERE boot_id = $boot ORDER BY 1, 2" |
		tr '|' ' ' | python3 "$KTESTS/btf-layout.py" "$R/vmlinux.btf" > "$R/btf.bpftool"
	q "SELECT struct, CASE field WHEN '' THEN '-' ELSE field END, offset, size, bit_offset, bit_size
	   FROM btf_layouts WHERE boot_id = $boot ORDER BY 1, 2" | tr '|' ' ' > "$R/btf.daemon"
	rows=$(wc -l < "$R/btf.daemon")
	# Bitfields: bpftool has no storage size for them, compare bits only.
	bad=$(paste -d' ' "$R/btf.daemon" "$R/btf.bpftool" | awk '
		$8 == "MISSING" { print; next }
		$6 != 0 || $12 != 0 { if ($3 * 8 + $5 != $9 * 8 + $11 || $6 != $12) print; next }
		$3 != $9 || $4 != $10 { print }')
	[ -z "$bad" ] || echo "$bad" | sed 's/^/    differs: /'
	check "$L: all $rows btf_layouts rows match bpftool" -z "$bad"

	# Intervals: contiguous, as many as the duration holds.
	n=$(q "SELECT count(*) FROM intervals WHERE boot_id = $boot")
	check "$L: $n intervals for ${DURATION}s at ${INTERVAL}s" "$n" -ge $(( DURATION / INTERVAL - 1 ))
	gap=$(q "SELECT coalesce(max(start_ns - prev), 0) FROM (SELECT start_ns,
		   lag(end_ns) OVER (ORDER BY start_ns) AS prev FROM intervals WHERE boot_id = $boot)")
	check "$L: no gap over 1 s between intervals (${gap} ns)" "$gap" -lt 1000000000
	check "$L: no events lost" "$(q "SELECT sum(events_lost) FROM intervals WHERE boot_id = $boot")" -eq 0
	check "$L: vmstat deltas recorded" \
		"$(q "SELECT count(*) FROM vmstat_deltas JOIN intervals USING (interval_id) WHERE boot_id = $boot")" -gt 0

	last=$(q "SELECT max(end_ns) FROM intervals WHERE boot_id = $boot")
	check "$L: the loads ended inside the recording (else raise DURATION)" \
		"$(cat "$R/aging.end_ns")" -le "$last"

	# Windowed data: every full interval's sched_switch count is an
	# estimate from its slices (method window, a standard error, the
	# armed share), and none was scaled for multiplexing (tracepoints).
	check_windows "$boot" "$L"

	# P1 side: sched_switch counted in the kernel. Over the boot it must
	# agree with /proc/stat's ctxt (the same switches, counted by the
	# scheduler) within 5 %; over the intervals the ctxswitch load ran in
	# it must cover the switches the load's own threads report. A windowed
	# count's standard errors widen both (three of them; continuous: 0).
	check "$L: sched:sched_switch counted" -n \
		"$(q "SELECT 1 FROM boot_events WHERE boot_id = $boot AND event = 'sched:sched_switch' AND role = 'count' AND available = 1")"
	check_switches "$boot" "$L"
	s0=$(cat "$R/ctxswitch.start_ns") e0=$(cat "$R/ctxswitch.end_ns")
	load_q="FROM event_counts c JOIN event_names n USING (event_id)
		JOIN intervals i USING (interval_id) WHERE i.boot_id = $boot AND n.name = 'sched:sched_switch'
		AND i.end_ns > $s0 AND i.start_ns < $e0"
	sw_load=$(q "SELECT coalesce(sum(c.count), 0) $load_q")
	se_load=$(q "SELECT CAST(3 * sqrt(coalesce(sum(c.variance), 0)) AS INTEGER) $load_q")
	own=$(json_get "$R/ctxswitch.json" "$CTXSW_KEY")
	echo "    load window: sched_switch $sw_load (3 se: $se_load), the load's own switches $own ($CTXSW_KEY)"
	if [ "$RECORD_MODE" = continuous ]; then
		# Counted all along under a steady reproducer, the tracepoint and
		# ctxt are the same switches (nr_switches++ and
		# trace_sched_switch() in one prev != next block of __schedule()),
		# read microseconds apart at each flush: they differ by the
		# switches between the two readings, and by the few a second an
		# idle CPU's count falls short (2.5/s on the build VM's 6.18).
		# Why a windowed mmhitmd reads ctxt instead (paths.conf: exact).
		ctxt_load=$(q "SELECT coalesce(sum(ctxt), 0) FROM intervals i WHERE i.boot_id = $boot
			AND i.end_ns > $s0 AND i.start_ns < $e0")
		d=$((sw_load - ctxt_load)); [ $d -ge 0 ] || d=$((-d))
		echo "    load window, counted all along: sched_switch - ctxt = $((sw_load - ctxt_load)) of $ctxt_load"
		check "$L: sched_switch and ctxt agree under the load (0.1% + 100)" \
			$((d * 1000)) -le $((ctxt_load + 100000))
	fi
	check "$L: the load reported its switches" -n "$own"
	check "$L: sched_switch covers the load's switches (within 3 se)" "$((sw_load + se_load))" -ge "${own%.*}"

	# P2 side: max_seq steps once per aging pass and node, and the load aged
	# a memcg of its own: its steps recorded must be the passes reported,
	# and no other memcg aged (an idle 1 GiB guest does not reclaim).
	passes=$(json_get "$R/aging.json" "$AGING_PASSES_KEY")
	ms=$(json_get "$R/aging.json" "$AGING_MS_KEY")
	memcg=$(json_get "$R/aging.json" "$AGING_MEMCG_KEY")
	nodes=$(json_get "$R/aging.json" "$AGING_NODES_KEY")
	steps() {
		q "SELECT coalesce(sum(max_seq_delta), 0) FROM lru_gen_progress JOIN intervals USING (interval_id)
		   WHERE boot_id = $boot AND $1"
	}
	echo "    aging: $passes passes x $nodes node(s) on memcg $memcg at $ms ms/pass (median) reported"
	q "SELECT memcg_id, memcg_path, node, sum(max_seq_delta) FROM lru_gen_progress
	   JOIN intervals USING (interval_id) WHERE boot_id = $boot GROUP BY 1, 2, 3" |
		sed 's/^/    recorded memcg|path|node|steps: /'
	check "$L: the load ran aging passes" "${passes:-0}" -gt 0
	check "$L: ... and timed them" -n "$ms"
	check "$L: ... in a memcg of its own" "${memcg:-1}" -gt 1
	check "$L: max_seq steps recorded on memcg $memcg = passes x nodes reported" \
		"$(steps "memcg_id = $memcg")" -eq $(( passes * nodes ))
	check "$L: no aging recorded on other memcgs" "$(steps "memcg_id != $memcg")" -eq 0

	# The daemon mounts what it needs and leaves no instance behind.
	check "$L: tracefs not mounted before mmhitmd" -z "$(awk '$3 == "tracefs"' "$R/mounts.before")"
	check "$L: ... mounted by it" -n "$(awk '$3 == "tracefs"' "$R/mounts.daemon")"
	check "$L: its instance $INSTANCE gone after it" -z "$(grep -x "$INSTANCE" "$R/instances.after")"
}
