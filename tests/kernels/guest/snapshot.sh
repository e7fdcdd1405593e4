# SPDX-License-Identifier: GPL-2.0
#
# Guest side of test-rollout's snapshot step, sourced by guest/record.sh
# after its recording on the boot the host names (SNAPSHOT_BOOT in
# /mnt/params): the flight recorder (daemon/flight.c) saved inside this
# kernel and read back here by `trace-cmd report`.
#
# The flight recorder exists in windowed mode only (mmhitmd.c: recording
# continuously it would pay every learning record twice) and is armed
# only while a window is open, so this step runs its own mmhitmd, windowed
# with one 5 s window per 10 s interval (as tests/integration/
# test-snapshot.sh), into a DB of its own: the rollout's DB keeps its two
# continuous recordings. Once the flight instance's sched_process_fork is
# enabled (armed), SNAPSHOT_FORKS runs of /bin/true, then SIGUSR1.
# In $out/snap*: the daemon's log and exit code, the forks' pids, the
# snapshot row, trace-cmd report's output, stderr and exit code; the
# host asserts on them (test-rollout.sh: check_snapshot).

snap_db=$out/snap.db
snap_dir=$out/snap
snap_inst=mmhitm-snap
SNAPSHOT_FORKS=${SNAPSHOT_FORKS:-10}

up() { cut -d' ' -f1 /proc/uptime; }

snap_sql() {
	sqlite3 -cmd '.timeout 5000' "$snap_db" "$1" 2>/dev/null
}

# wait_for TENTHS COMMAND...: polls every 0.1 s; 1 if it never held
wait_for() {
	_n=$1
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# Another tool's tracing on this guest's top level, which a snapshot must
# leave alone: trace-cmd 3.1's extract without -k disables every
# top-level event and clears each system's filter once it has read ours.
other_top() {
	echo "enable:$(cat "$other/enable" 2>/dev/null) filter:$(cat "$other/filter" 2>/dev/null)" \
		"tracing_on:$(cat "$tracefs/tracing_on" 2>/dev/null)"
}

snapshot_step() {
	t0=$(up)
	tracefs=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
	other=$tracefs/events/sched/sched_process_exit
	echo 'pid > 1' > "$other/filter" 2>/dev/null
	echo 1 > "$other/enable" 2>/dev/null
	other_top > "$out/snap.top.before"
	mmhitmd --db "$snap_db" --interval 10s --window 5s --window-slices 1 --overhead-budget 100% \
		--quiet-cpu 0 --snapshots yes --snapshot-dir "$snap_dir" --snapshot-buffer-kb 512 --analyze no \
		--duration 120s --instance "$snap_inst" --foreground > "$out/snap.mmhitmd.log" 2>&1 &
	sd=$!
	echo "snapshot step [$(up)]: mmhitmd pid $sd, windowed 5 s of 10 s, snapshots in $snap_dir"
	if ! wait_for 600 grep -q 'Recording into' "$out/snap.mmhitmd.log"; then
		echo "snapshot step: the daemon did not start"
		kill $sd 2>/dev/null
		wait $sd
		return 1
	fi
	echo "snapshot step [$(up)]: recording"
	en=$tracefs/instances/$snap_inst-flight/events/sched/sched_process_fork/enable
	armed() { [ "$(cat "$en" 2>/dev/null)" = 1 ]; }
	# The forks must fall inside one window: if it closed under them,
	# the next one is waited for.
	tries=0 caught=0
	while [ $tries -lt 4 ] && [ $caught = 0 ]; do
		tries=$((tries + 1))
		wait_for 250 armed || continue
		: > "$out/snap.pids"
		i=0
		while [ $i -lt "$SNAPSHOT_FORKS" ]; do
			/bin/true &
			echo $! >> "$out/snap.pids"
			wait $!
			i=$((i + 1))
		done
		armed || continue
		kill -USR1 $sd
		caught=1
	done
	echo "$tries" > "$out/snap.tries"
	echo "snapshot step [$(up)]: forks in a window: $caught (tries $tries)"
	if [ $caught = 1 ]; then
		if wait_for 600 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$snap_db' \
			'SELECT count(*) FROM snapshots' 2>/dev/null)\" -ge 1 ]"; then
			echo "snapshot step [$(up)]: listed"
		else
			echo "snapshot step [$(up)]: no snapshot listed after 60 s"
		fi
	fi
	kill $sd 2>/dev/null
	wait $sd
	echo $? > "$out/snap.mmhitmd.rc"
	echo "snapshot step [$(up)]: mmhitmd stopped"
	other_top > "$out/snap.top.after"
	echo 0 > "$other/enable" 2>/dev/null
	echo 0 > "$other/filter" 2>/dev/null
	ls "$tracefs/instances" > "$out/snap.instances.after" 2>/dev/null
	snap_sql "SELECT trigger, path, start_ns, end_ns, trace_offset_ns, bytes FROM snapshots
		  ORDER BY snapshot_id LIMIT 1" > "$out/snap.row"
	path=$(cut -d'|' -f2 "$out/snap.row")
	if [ -n "$path" ]; then
		trace-cmd report "$path" > "$out/snap.report" 2> "$out/snap.report.err"
		echo $? > "$out/snap.report.rc"
		echo "snapshot step [$(up)]: trace-cmd report $path: exit $(cat "$out/snap.report.rc"), $(wc -l < "$out/snap.report") lines"
	fi
	echo "$t0 $(up)" > "$out/snap.uptime"
	grep -i 'snapshot\|flight' "$out/snap.mmhitmd.log" | tail -n 5
	return 0
}
