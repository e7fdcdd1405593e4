#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of test-systemd: Debian 12 with systemd as PID 1 and two
# mmhitm packages in /var/cache/mmhitm-test (old: an earlier release; new:
# this tree's). Run by mmhitm-test.service at boot; installs, drives and
# removes mmhitm as an operator would and writes what the host asserts on
# into /results/$mmhitm.tag (systemctl show snapshots, the daemon's /proc
# view, tracefs instances, times in realtime ns, journal dumps, dpkg's
# states). It asserts nothing itself and always ends with MMHITM-DONE
# rc=0: the verdicts are the host's, on what comes back.
#
#   0. dpkg -i the old package, record, dpkg -i the new one (an upgrade)
#   1. mmhitmd as the upgrade left it: properties, credentials, mounts, netns
#   2. watchdog pings over more than WatchdogSec (the host set 10s)
#   3. interval changed in mmhitm.conf + systemctl reload
#   4. SIGSTOP: the watchdog must kill it, Restart=on-failure restart it
#   5. mmhitm-report.service started by hand, as its timer would
#  5b. snapshots = yes, a restart: SIGUSR1 and `mmhitm snapshot` save the
#      flight recorder under the unit's hardening; trace-cmd reads them
#   6. systemctl stop in the middle of an interval
#   7. dpkg -r with the daemon running, then dpkg -P
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

uname -r > "$out/release"
cat /proc/sys/kernel/perf_event_paranoid > "$out/perf_event_paranoid"
cat /proc/sys/kernel/kptr_restrict > "$out/kptr_restrict"
systemctl --version | head -n1 > "$out/systemd.version"

pkg_state() {	# dpkg's status of mmhitm and its version
	_s=$(dpkg-query -W -f='${Status} ${Version}' mmhitm 2>/dev/null)
	case "$_s" in *not-installed* | "") echo not-installed ;; *) echo "$_s" ;; esac
}
unit_states() {	# what an operator sees of each unit: enabled? active? (- for nothing)
	for u in mmhitmd.service mmhitm-report.timer mmhitm-ship.timer; do
		_e=$(systemctl is-enabled $u 2>/dev/null) _a=$(systemctl is-active $u 2>/dev/null)
		echo "$u ${_e:--} ${_a:--}"
	done
}
# The rows that must survive an upgrade, as text to compare.
db_rows() {	# up-to interval_id
	sql "SELECT 'i', interval_id, start_ns, end_ns, partial, learn_records FROM intervals
		WHERE interval_id <= $1 ORDER BY interval_id"
	sql "SELECT 'c', interval_id, event_id, count FROM event_counts
		WHERE interval_id <= $1 ORDER BY interval_id, event_id"
}
started_after() {	# ns: an interval begun after it is stored
	[ "$(sql "SELECT count(*) FROM intervals WHERE start_ns > $1")" -ge 1 ] 2>/dev/null
}

# 0. The earlier release, then the upgrade to this tree's package.
say "scenario systemd: dpkg -i $(ls /var/cache/mmhitm-test/old)"
dpkg -i --force-confold /var/cache/mmhitm-test/old/mmhitm_*.deb > "$out/dpkg.install.log" 2>&1
echo $? > "$out/dpkg.install.rc"
pkg_state > "$out/pkg.installed"
unit_states > "$out/units.installed"
wait_intervals 90 "an interval of the earlier release" 0 1
sql "PRAGMA user_version" > "$out/user_version.installed"
last=$(sql "SELECT coalesce(max(interval_id), 0) FROM intervals")
echo "$last" > "$out/upgrade.last_interval"
db_rows "$last" > "$out/rows.before-upgrade"
prop $unit MainPID > "$out/pid.before-upgrade"
now_ns > "$out/upgrade.ns"
say "upgrade: dpkg -i $(ls /var/cache/mmhitm-test/new)"
dpkg -i --force-confold /var/cache/mmhitm-test/new/mmhitm_*.deb > "$out/dpkg.upgrade.log" 2>&1
echo $? > "$out/dpkg.upgrade.rc"
now_ns > "$out/upgrade.done.ns"
pkg_state > "$out/pkg.upgraded"
unit_states > "$out/units.upgraded"
# (the postinst's restart returned once the new daemon said READY=1)
wait_for 120 "an interval of the upgraded daemon" started_after "$(cat "$out/upgrade.done.ns")"
sql "PRAGMA user_version" > "$out/user_version.upgraded"
say "upgraded: $(pkg_state), mmhitmd $(prop $unit ActiveState)/$(prop $unit SubState)"

# 1. As the upgrade left it.
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
	ls -la /var/lib/mmhitm > "$out/statedir.ls" 2>&1
}
if [ "$(prop $unit SubState)" != running ]; then
	say "mmhitmd did not start; nothing else to try"
	systemctl stop $unit
	cp -a /var/lib/mmhitm "$out/state"
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

# 5b. Snapshots under the unit: its hardening refused trace-cmd extract's
# namespace and mounts; the daemon now writes the trace.dat itself.
echo "snapshots = yes" >> "$conf"
cat "$tracing/tracing_on" > "$out/snap.tracing_on.before"
now_ns > "$out/snap.restart.ns"
systemctl restart $unit
wait_intervals 30 "an interval with snapshots on" "$(cat "$out/snap.restart.ns")" 1
i=0
while [ $i -lt 20 ]; do /bin/true; i=$((i + 1)); done
# the main process only: a writer child must not get it
systemctl kill -s USR1 --kill-who=main $unit
snaps() { [ "$(sql "SELECT count(*) FROM snapshots")" -ge "$1" ] 2>/dev/null; }
wait_for 60 "the SIGUSR1 snapshot" snaps 1
mmhitm snapshot --db "$db" --wait 60 > "$out/snap.request.out" 2> "$out/snap.request.err"
echo $? > "$out/snap.request.rc"
sql "SELECT trigger, path, bytes FROM snapshots ORDER BY snapshot_id" > "$out/snap.rows"
cat "$tracing/tracing_on" > "$out/snap.tracing_on.after"
ls "$tracing/instances" > "$out/snap.instances" 2>&1
n=0
while IFS='|' read -r trig path bytes; do
	n=$((n + 1))
	trace-cmd report "$path" > "$out/snap.report.$n" 2> "$out/snap.report.err.$n"
	echo $? > "$out/snap.report.rc.$n"
	cp "$path" "$out/snap.$n.dat"
done < "$out/snap.rows"
say "snapshots: $(wc -l < "$out/snap.rows") listed, $(cat "$out"/snap.report.rc.* 2>/dev/null | tr '\n' ' ')from trace-cmd report"

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

# What the host asserts on, before removing and purging take it.
cp -a /var/lib/mmhitm "$out/state"

# 7. Remove with the daemon running: it stops, the recordings and the
# configuration stay. Purge: they go too.
systemctl start $unit
wait_intervals 30 "an interval before the removal" "$(now_ns)" 1
dpkg -r mmhitm > "$out/dpkg.remove.log" 2>&1
echo $? > "$out/dpkg.remove.rc"
pkg_state > "$out/pkg.removed"
unit_states > "$out/units.removed"
systemctl show -p LoadState,ActiveState $unit > "$out/show.removed"
ls "$tracing/instances" > "$out/instances.removed" 2>&1
ls /var/lib/mmhitm > "$out/statedir.removed" 2>&1
ls /etc/mmhitm > "$out/etc.removed" 2>&1
ls /usr/sbin/mmhitmd /usr/bin/mmhitm > "$out/programs.removed" 2>&1
say "removed: $(pkg_state); /var/lib/mmhitm: $(ls /var/lib/mmhitm 2>&1 | tr '\n' ' ')"
dpkg -P mmhitm > "$out/dpkg.purge.log" 2>&1
echo $? > "$out/dpkg.purge.rc"
pkg_state > "$out/pkg.purged"
for d in /var/lib/mmhitm /etc/mmhitm; do [ -e "$d" ] && echo "$d"; done > "$out/left.purged"
find /etc/systemd/system -type l -name 'mmhitm*' ! -name 'mmhitm-test*' > "$out/links.purged"
say "purged: $(pkg_state)"

# The journal, with the levels journald kept.
dump_journal
echo done > "$out/status"
sync
echo "MMHITM-DONE rc=0 at $(cut -d' ' -f1 /proc/uptime)"
