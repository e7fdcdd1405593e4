#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of test-systemd: Debian 12 with systemd as PID 1, mmhitm
# installed by `make install PREFIX=/usr` and its units enabled. Run by
# mmhitm-test.service once mmhitmd.service is up; drives the units as an
# operator would and writes what the host asserts on into
# /results/$mmhitm.tag (systemctl show snapshots, the daemon's /proc view,
# tracefs instances, times in realtime ns, journal dumps). It asserts
# nothing itself and always ends with MMHITM-DONE rc=0: the verdicts are
# the host's, on what comes back.
#
#   1. mmhitmd as started at boot: properties, credentials, mounts, netns
#   2. watchdog pings over more than WatchdogSec (the host set 10s)
#   3. interval changed in mmhitm.conf + systemctl reload
#   4. SIGSTOP: the watchdog must kill it, Restart=on-failure restart it
#   5. mmhitm-report.service started by hand, as its timer would
#   6. systemctl stop in the middle of an interval
#
# /etc/mmhitm-test/params (written by the host) may set INTERVAL (what
# mmhitm.conf says at boot) and RELOAD_INTERVAL.

set -u
tag=$(sed -n 's/.*mmhitm\.tag=\([^ ]*\).*/\1/p' /proc/cmdline)
out=/results/${tag:-systemd}
mkdir -p "$out" || exit 1
INTERVAL=5 RELOAD_INTERVAL=3
[ -f /etc/mmhitm-test/params ] && . /etc/mmhitm-test/params
db=/var/lib/mmhitm/mmhitm.db
conf=/etc/mmhitm/mmhitm.conf
unit=mmhitmd.service
tracing=/sys/kernel/tracing

say() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
now_ns() { date +%s%N; }
prop() { systemctl show -p "$2" --value "$1"; }
sql() { sqlite3 -cmd '.timeout 5000' "$db" "$1" 2>/dev/null; }
# Intervals stored that end after realtime NS (0: all of them).
intervals_after() { n=$(sql "SELECT count(*) FROM intervals WHERE end_ns > $1"); echo "${n:-0}"; }
at_least() { [ "$(intervals_after "$1")" -ge "$2" ]; }	# ns count

wait_for() {	# seconds what command...: polls every 0.5 s
	_n=$(($1 * 2)) _what=$2
	shift 2
	while [ $_n -gt 0 ]; do
		"$@" && return 0
		sleep 0.5
		_n=$((_n - 1))
	done
	say "timed out waiting for $_what"
	return 1
}

# Waits for stored intervals; once one such wait failed (the daemon stores
# none), the next ones don't wait: the host's checks will say why.
stuck=
wait_intervals() {	# seconds what ns count
	[ -z "$stuck" ] || return 1
	wait_for "$1" "$2" at_least "$3" "$4" || { stuck=1; return 1; }
}

# What the daemon itself sees: the kernel applies the unit's sandbox to
# its process, so its /proc entries are the proof, not the unit file.
daemon_view() {	# pid suffix
	cat "/proc/$1/status" > "$out/proc.status.$2"
	cat "/proc/$1/mountinfo" > "$out/proc.mountinfo.$2"
	echo "$(readlink "/proc/$1/ns/net") $(readlink /proc/1/ns/net)" > "$out/netns.$2"
	ls "/proc/$1/root/dev" > "$out/proc.dev.$2"
}

say "scenario systemd: mmhitmd is $(prop $unit ActiveState)/$(prop $unit SubState)"
uname -r > "$out/release"
cat /proc/sys/kernel/perf_event_paranoid > "$out/perf_event_paranoid"
cat /proc/sys/kernel/kptr_restrict > "$out/kptr_restrict"
systemctl --version | head -n1 > "$out/systemd.version"

# 1. As the boot left it.
systemctl show $unit > "$out/show.start"
pid=$(prop $unit MainPID)
echo "$pid" > "$out/pid.first"
[ "$pid" -gt 0 ] && daemon_view "$pid" first
ls "$tracing/instances" > "$out/instances.running" 2>&1
awk '$3 == "tracefs" || $3 == "debugfs"' /proc/mounts > "$out/mounts.api"
cat /sys/kernel/debug/lru_gen > "$out/lru_gen.debugfs" 2>&1

dump_journal() {
	journalctl -b -u $unit -o json > "$out/journal.mmhitmd.json"
	journalctl -b -u mmhitm-report.service -o json > "$out/journal.report.json"
	journalctl -b -u $unit -p notice -o cat > "$out/journal.mmhitmd.notice"
	journalctl -b -k -o short-monotonic > "$out/journal.kernel"
	journalctl -b -o short-monotonic > "$out/journal.txt"
	ls -la /var/lib/mmhitm > "$out/statedir.ls"
}
if [ "$(prop $unit SubState)" != running ]; then
	say "mmhitmd did not start; nothing else to try"
	systemctl stop $unit
	dump_journal
	echo done > "$out/status"
	echo "MMHITM-DONE rc=0 at $(cut -d' ' -f1 /proc/uptime)"
	exit 0
fi

# 2. Pings: WatchdogTimestamp moves with every WATCHDOG=1, for longer
# than WatchdogSec; and at least 3 intervals stored.
i=0
while [ $i -lt 16 ]; do
	echo "$(cut -d' ' -f1 /proc/uptime) $(prop $unit WatchdogTimestampMonotonic)" >> "$out/watchdog.samples"
	sleep 1
	i=$((i + 1))
done
wait_intervals 40 "3 intervals" 0 3
# What node_exporter (user prometheus) finds in its textfile directory.
prom=/var/lib/prometheus/node-exporter/mmhitm.prom
stat -c '%n %a %U:%G' "$prom" > "$out/metrics.stat" 2>&1
setpriv --reuid=prometheus --regid=prometheus --clear-groups cat "$prom" > "$out/metrics.as-prometheus" 2>&1
echo $? > "$out/metrics.rc"
say "$(intervals_after 0) intervals, watchdog samples: $(cut -d' ' -f2 "$out/watchdog.samples" | sort -u | wc -l) distinct"

# 3. Reload a changed interval.
sed -i "s/^interval = .*/interval = ${RELOAD_INTERVAL}s/" "$conf"
now_ns > "$out/reload.ns"
systemctl reload $unit
echo $? > "$out/reload.rc"
say "reload: exit $(cat "$out/reload.rc"), $(prop $unit ActiveState)/$(prop $unit SubState)"
wait_intervals 40 "3 whole intervals after the reload" "$(cat "$out/reload.ns")" 5
systemctl show $unit > "$out/show.reloaded"

# 4. A hung daemon: stopped, it pings no more.
pid=$(prop $unit MainPID)
echo "$pid" > "$out/pid.stopped"
now_ns > "$out/sigstop.ns"
kill -STOP "$pid"
say "SIGSTOP to $pid"
restarted() {
	p=$(prop $unit MainPID)
	[ "$p" != 0 ] && [ "$p" != "$1" ] && [ "$(prop $unit SubState)" = running ]
}
wait_for 60 "the watchdog restart" restarted "$pid"
now_ns > "$out/restarted.ns"
systemctl show $unit > "$out/show.restarted"
pid=$(prop $unit MainPID)
echo "$pid" > "$out/pid.restarted"
[ "$pid" -gt 0 ] && daemon_view "$pid" restarted
ls "$tracing/instances" > "$out/instances.restarted" 2>&1
wait_intervals 30 "an interval of the restarted mmhitmd" "$(cat "$out/restarted.ns")" 1
say "restarted as $pid (NRestarts=$(prop $unit NRestarts))"

# 5. The weekly report, started the way its timer starts it.
systemctl show mmhitm-report.timer > "$out/show.timer"
stat -c %a /var/lib/mmhitm > "$out/statedir.mode.before"
now_ns > "$out/report.start.ns"
systemctl start mmhitm-report.service
echo $? > "$out/report.rc"
now_ns > "$out/report.end.ns"
systemctl show mmhitm-report.service > "$out/show.report"
stat -c %a /var/lib/mmhitm > "$out/statedir.mode.after"
ls -l /var/lib/mmhitm/reports > "$out/reports.ls" 2>&1
say "report: exit $(cat "$out/report.rc"), $(ls /var/lib/mmhitm/reports 2>/dev/null | tr '\n' ' ')"

# 6. Stop a second into an interval: the partial one must be written.
n=$(intervals_after 0)
wait_intervals 20 "the next interval" 0 $((n + 1))
sleep 1
now_ns > "$out/stop.before.ns"
systemctl stop $unit
echo $? > "$out/stop.rc"
now_ns > "$out/stop.after.ns"
systemctl show $unit > "$out/show.stopped"
ls "$tracing/instances" > "$out/instances.after" 2>&1
say "stopped: $(prop $unit ActiveState), result $(prop $unit Result)"

# The journal, with the levels journald kept.
dump_journal
echo done > "$out/status"
sync
echo "MMHITM-DONE rc=0 at $(cut -d' ' -f1 /proc/uptime)"
