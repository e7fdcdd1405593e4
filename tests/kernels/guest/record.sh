# SPDX-License-Identifier: GPL-2.0
#
# Guest side of test-lru-gen and of each boot of test-rollout: MGLRU on,
# mmhitmd recording into /mnt/mmhitm.db, and, once its first interval is
# stored, `mmhitm-load ctxswitch` (P1) then `mmhitm-load aging` (P2). What
# the host asserts on comes back in $1: the loads' JSON and exit codes,
# their windows in realtime ns, the daemon's log and exit code, the mounts
# before and after it started, this kernel's BTF and lru_gen state.
#
# /mnt/params (written by the host) may set DURATION, INTERVAL, LOAD_SECONDS,
# INSTANCE, RECORD_MODE (windowed or continuous), WINDOW (s), WINDOW_SLICES
# OVERHEAD_BUDGET and DAEMON_ARGS (more options, e.g. --log-level debug),
# and SNAPSHOT_BOOT: on the boot with that tag (test-rollout: 6.12) the
# flight recorder step of guest/snapshot.sh runs after the recording;
# LAB=yes (test-rollout): then this boot's share of the lab
# (guest/lab.sh, into $1/lab).

out=$1
set -u
DURATION=30 INTERVAL=5 LOAD_SECONDS=6 INSTANCE=mmhitm
RECORD_MODE=continuous WINDOW=1 WINDOW_SLICES=4 OVERHEAD_BUDGET=0.2% DAEMON_ARGS=
SNAPSHOT_BOOT= LAB=
[ -f /mnt/params ] && . /mnt/params
db=/mnt/mmhitm.db

now_ns() {	# realtime, ms resolution (busybox date has no %N)
	sqlite3 :memory: "select cast((julianday('now') - 2440587.5) * 86400000 as integer) * 1000000"
}
sql() {
	sqlite3 -cmd '.timeout 5000' "$db" "$1" 2>/dev/null
}

uname -r > "$out/release"
echo "$(cat /etc/machine-id) $(hostname)" > "$out/identity"
if [ -f /sys/kernel/mm/lru_gen/enabled ]; then
	echo y > /sys/kernel/mm/lru_gen/enabled
	cat /sys/kernel/mm/lru_gen/enabled > "$out/lru_gen.enabled"
else
	echo absent > "$out/lru_gen.enabled"
fi
cp /sys/kernel/btf/vmlinux "$out/vmlinux.btf" 2>/dev/null || echo "no /sys/kernel/btf/vmlinux"
cat /proc/mounts > "$out/mounts.before"

# Continuous by default, as a lab run: under TCG every probe and kernel
# text patch is emulated, and while mmhitm-load ctxswitch saturates both
# CPUs a window's disarming (closing its events waits out RCU grace
# periods, then the switch sample) outlasts the gap to the next slice, so
# slices are skipped: windowed with half of each 5 s interval asked, the
# load's intervals were armed 0.4-0.8 % of the time, one 20-40 ms slice
# each, and its 6 s burst was estimated from that alone (measured on 6.1).
# These scenarios check what is counted against the kernel's own totals;
# test-windowed (guest/windowed.sh) checks the windowed estimates under
# a steady load on one CPU, RECORD_MODE=windowed runs these windowed.
if [ "$RECORD_MODE" = continuous ]; then
	mode="--record-mode continuous"
else
	mode="--record-mode windowed --window ${WINDOW}s --window-slices $WINDOW_SLICES"
	mode="$mode --overhead-budget $OVERHEAD_BUDGET"
fi
mmhitmd --db "$db" --interval "${INTERVAL}s" --duration "${DURATION}s" $mode $DAEMON_ARGS \
	--instance "$INSTANCE" --foreground > "$out/mmhitmd.log" 2>&1 &
daemon=$!
echo "mmhitmd pid $daemon: --interval ${INTERVAL}s --duration ${DURATION}s $mode --instance $INSTANCE"

# The loads start once a first interval of this boot is stored (the DB may
# hold earlier boots): counting is running then, and every switch and aging
# pass they cause falls inside the recording.
boot_uuid=$(cat /proc/sys/kernel/random/boot_id)
i=0
while :; do
	n=$(sql "SELECT count(*) FROM intervals JOIN boots USING (boot_id) WHERE boot_uuid = '$boot_uuid'")
	[ "${n:-0}" -ge 1 ] && break
	kill -0 $daemon 2>/dev/null || break
	[ $i -ge $(( (INTERVAL + 20) * 10 )) ] && break
	sleep 0.1
	i=$((i + 1))
done
if [ "${n:-0}" -ge 1 ]; then
	echo "$((i / 10)).$((i % 10))" > "$out/first_interval"
	echo "first interval stored after $(cat "$out/first_interval")s"
else
	echo "no interval stored by mmhitmd after $((i / 10))s; no loads run"
fi
cat /proc/mounts > "$out/mounts.daemon"

run_load() {	# name command...: the command gets --json appended
	name=$1
	shift
	echo "$(now_ns)" > "$out/$name.start_ns"
	"$@" --json > "$out/$name.json" 2> "$out/$name.err"
	echo $? > "$out/$name.rc"
	echo "$(now_ns)" > "$out/$name.end_ns"
	echo "$*: exit $(cat "$out/$name.rc")"
	cat "$out/$name.json" "$out/$name.err"
}
# aging walks every mm of the memcg it runs in: a cgroup of its own keeps
# the daemon and this shell out of the walk, and makes the memcg whose
# max_seq steps are the load's alone.
cg=/sys/fs/cgroup/mmhitm-aging
echo +memory > /sys/fs/cgroup/cgroup.subtree_control && mkdir -p $cg ||
	echo "no memory cgroup of its own for aging"
if kill -0 $daemon 2>/dev/null; then
	run_load ctxswitch mmhitm-load ctxswitch --duration "$LOAD_SECONDS"
	run_load aging sh -c 'echo $$ > "$0"/cgroup.procs && exec "$@"' $cg \
		mmhitm-load aging --duration "$LOAD_SECONDS"
fi

wait $daemon
echo $? > "$out/mmhitmd.rc"
echo "mmhitmd: exit $(cat "$out/mmhitmd.rc")"
tail -n 20 "$out/mmhitmd.log"
tracefs=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
ls "${tracefs:-/nonexistent}/instances" > "$out/instances.after" 2>/dev/null
cat /sys/kernel/debug/lru_gen > "$out/lru_gen.debugfs" 2>/dev/null
if [ -n "$SNAPSHOT_BOOT" ] && [ "$(basename "$out")" = "$SNAPSHOT_BOOT" ]; then
	. /guest/snapshot.sh
	snapshot_step
fi
[ "$LAB" = yes ] && sh /guest/lab.sh "$out/lab"
echo done > "$out/status"
