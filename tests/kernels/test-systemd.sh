#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The package and its units under a real systemd: Debian 12 (debootstrap,
# cached) with systemd as PID 1 on Debian's 6.12 cloud kernel. This tree's
# packages are built in a clean Debian 12 chroot (packages_clean_build:
# only debian/control's Build-Depends installed). The guest installs the
# mmhitm package built from an earlier commit (UPGRADE_FROM, the first
# release) with dpkg, records, upgrades to this tree's package,
# and the postinst restarts the daemon on the same database; then
# guest/systemd.sh drives the units (reload, a SIGSTOPped daemon, the
# report, stop), removes the package (the data stays) and purges it (the
# data goes, as debian/mmhitm.postrm says). This script asserts on what it
# and the daemon left on the disk.
#
# Test-only changes to the guest, all visible below: WatchdogSec=10s in a
# drop-in (the unit says 2min), interval = 5s and a metrics_file in
# mmhitm.conf (kept by dpkg --force-confold, as an operator's edit is), a
# prometheus user (node_exporter's, which must read that file), and a
# drop-in that logs the report service's capability sets.
#
# Wall time on the 2-core TCG build VM: about 5 min with the caches warm
# (the clean build about two, the guest boots in ~9 s and lives ~2.5 min);
# the first run adds the two debootstraps and the build chroot's packages
# (about 5 min), the kernel download and the earlier commit's package
# build (about two minutes).

. "$(dirname "$0")/lib.sh"
. "$KTESTS/checks.sh"
require_tools python3 sqlite3 systemctl make
programs_or_skip
[ -x "$O/mmhitm" ] || skip "$O/mmhitm not built yet"
work_dir systemd
t0=$(date +%s)

INTERVAL=${INTERVAL:-5}
RELOAD_INTERVAL=3
WATCHDOG=10
SYSTEMD_SECONDS=${SYSTEMD_SECONDS:-540}	# the guest's whole life, boot to poweroff

UPGRADE_FROM=${UPGRADE_FROM:-66caadf}	# the first release's package (0.1)

kernel_fetch 6.12
initramfs_build "$WORK/initramfs-$KVER.cpio"
rootfs_build
packages_clean_build
packages_at "$UPGRADE_FROM"
t_rootfs=$(date +%s)

# --- the guest's disk: the cached userspace and the two packages -------------
R=$WORK/root
note "copying the userspace, the packages of $UPGRADE_FROM and of this tree"
cp -a "$ROOTFS" "$R" || fail "cannot copy $ROOTFS"
mkdir -p "$R/var/cache/mmhitm-test/old" "$R/var/cache/mmhitm-test/new" &&
	cp "$DEBS_AT"/mmhitm_*.deb "$R/var/cache/mmhitm-test/old/" &&
	cp "$DEBS"/mmhitm_*.deb "$R/var/cache/mmhitm-test/new/" || fail "cannot copy the packages"
new_deb=$(ls "$DEBS"/mmhitm_*.deb | head -n1)
old_version=$(dpkg-deb -f "$(ls "$DEBS_AT"/mmhitm_*.deb | head -n1)" Version)
new_version=$(dpkg-deb -f "$new_deb" Version)
rootfs_has_libs "$R" "$O/mmhitmd" "$O/mmhitm"
# What an operator edits is the package's mmhitm.conf: start from it.
mkdir -p "$R/etc/mmhitm" &&
	dpkg-deb --fsys-tarfile "$new_deb" | tar -xO ./etc/mmhitm/mmhitm.conf > "$R/etc/mmhitm/mmhitm.conf" ||
	fail "no /etc/mmhitm/mmhitm.conf in $new_deb"

# The test's settings.
echo "interval = ${INTERVAL}s" >> "$R/etc/mmhitm/mmhitm.conf"
# Under TCG a window costs a hundred times what it does on hardware: the
# whole CPU as budget, so windows (and so counts) happen (see guest/record.sh).
echo "overhead_budget = 100%" >> "$R/etc/mmhitm/mmhitm.conf"
# The scenario's short-lived systemctl calls are learned by the learning
# slices; a guest that idles between them would learn every 10 min only.
echo "quiet_cpu = 0" >> "$R/etc/mmhitm/mmhitm.conf"
# The node_exporter textfile as README says, in the directory Debian's
# prometheus-node-exporter ships (root's, 0755) and read by its user.
echo "metrics_file = /var/lib/prometheus/node-exporter/mmhitm.prom" >> "$R/etc/mmhitm/mmhitm.conf"
mkdir -p "$R/var/lib/prometheus/node-exporter" && chmod 0755 "$R/var/lib/prometheus/node-exporter" &&
	echo "prometheus:x:990:990::/var/lib/prometheus:/usr/sbin/nologin" >> "$R/etc/passwd" &&
	echo "prometheus:x:990:" >> "$R/etc/group" || fail "cannot add the prometheus user"
mkdir -p "$R/etc/systemd/system/mmhitmd.service.d" "$R/etc/systemd/system/mmhitm-report.service.d" \
	"$R/etc/mmhitm-test" "$R/usr/local/lib/mmhitm-test" "$R/results"
printf '[Service]\nWatchdogSec=%ss\n' "$WATCHDOG" > "$R/etc/systemd/system/mmhitmd.service.d/test.conf"
# Runs inside the report unit's sandbox, after `mmhitm analyze`: what
# capabilities the unit's processes hold.
printf '[Service]\nExecStartPre=/bin/grep ^Cap /proc/self/status\n' \
	> "$R/etc/systemd/system/mmhitm-report.service.d/test.conf"
printf 'INTERVAL=%s\nRELOAD_INTERVAL=%s\n' "$INTERVAL" "$RELOAD_INTERVAL" > "$R/etc/mmhitm-test/params"
install -m 0755 "$KTESTS/guest/systemd.sh" "$R/usr/local/lib/mmhitm-test/systemd.sh" &&
	install -m 0644 "$KTESTS/guest/mmhitm-test.service" "$R/etc/systemd/system/" ||
	fail "cannot install the scenario"
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$R/etc/machine-id" && echo >> "$R/etc/machine-id"
echo mmhitm-systemd > "$R/etc/hostname"

# The scenario is enabled here; mmhitmd and its timer by the package.
systemctl --root="$R" enable mmhitm-test.service \
	> "$WORK/enable.log" 2>&1 || { cat "$WORK/enable.log"; fail "systemctl --root enable failed"; }
# No udev in the guest: a getty would wait 90 s for its tty device.
systemctl --root="$R" mask serial-getty@ttyS0.service getty@tty1.service \
	>> "$WORK/enable.log" 2>&1 || fail "cannot mask the gettys"

disk_make "$WORK/disk.img" 768 "$R"
rm -rf "$R"
t_disk=$(date +%s)

QEMU_APPEND="mmhitm.rootinit=/sbin/init" \
	qemu_boot systemd systemd 6.12 "$WORK/disk.img" "$SYSTEMD_SECONDS"
disk_pull "$WORK/disk.img" /results/6.12 "$WORK/results"
G=$WORK/results/6.12
S=$G/state	# /var/lib/mmhitm as step 6 left it, before dpkg -r and -P
DB=$S/mmhitm.db
t_boot=$(date +%s)
echo "wall: kernel and userspace $((t_rootfs - t0))s, disk $((t_disk - t_rootfs))s, boot ${BOOT_SECS}s"


sp() {	# file key: a property from a `systemctl show` snapshot
	sed -n "s/^$2=//p" "$G/$1" | head -n1
}
J() {	# journal dump: realtime-ns priority who pid message
	python3 "$KTESTS/journal.py" "$G/journal.$1.json"
}
J mmhitmd > "$G/mmhitmd.journal"
J report > "$G/report.journal"
daemon_log() { awk -F'\t' '$3 == "mmhitmd"' "$G/mmhitmd.journal"; }
pid1_log() { awk -F'\t' '$3 == "systemd"' "$G/mmhitmd.journal"; }
first_ns() {	# ERE: realtime ns of the first journal line matching it
	grep -E "$1" "$G/mmhitmd.journal" | head -n1 | cut -f1
}

check "the guest ran $KVER" "$(cat "$G/release")" = "$KVER"
echo "    guest: $(cat "$G/systemd.version"), perf_event_paranoid $(cat "$G/perf_event_paranoid"), kptr_restrict $(cat "$G/kptr_restrict")"
check "the scenario ran to its end" "$(cat "$G/status" 2>/dev/null)" = done
daemon_log | awk -F'\t' '$2 <= 4' | cut -f2,5 | sort | uniq -c | sed 's/^/    mmhitmd warning or worse: /'

# --- 0. installed from a package, upgraded ------------------------------------
note "dpkg -i mmhitm $old_version ($UPGRADE_FROM), then $new_version (this tree)"
pkg() { cat "$G/pkg.$1" 2>/dev/null; }
unit_state() { awk -v u="$2" '$1 == u { print $2 "/" $3 }' "$G/units.$1"; }
check "dpkg -i of $old_version exited 0" "$(cat "$G/dpkg.install.rc" 2>/dev/null)" = 0
[ "$(cat "$G/dpkg.install.rc" 2>/dev/null)" = 0 ] || sed 's/^/    dpkg: /' "$G/dpkg.install.log" | tail -n 15
check_pkg() { check "$1" "$(pkg "$2")" = "$3"; }
check_pkg "... installed" installed "install ok installed $old_version"
check "... its postinst enabled and started mmhitmd.service" "$(unit_state installed mmhitmd.service)" = enabled/active
check "... and the weekly mmhitm-report.timer" "$(unit_state installed mmhitm-report.timer)" = enabled/active
check "... but not mmhitm-ship.timer (it needs ship_url)" "$(unit_state installed mmhitm-ship.timer)" = disabled/inactive
check "the daemon of $old_version wrote intervals" "$(cat "$G/upgrade.last_interval")" -ge 1
check "dpkg -i of $new_version (the upgrade) exited 0" "$(cat "$G/dpkg.upgrade.rc" 2>/dev/null)" = 0
[ "$(cat "$G/dpkg.upgrade.rc" 2>/dev/null)" = 0 ] || sed 's/^/    dpkg: /' "$G/dpkg.upgrade.log" | tail -n 15
check_pkg "... installed" upgraded "install ok installed $new_version"
check "... mmhitmd.service still enabled and active" "$(unit_state upgraded mmhitmd.service)" = enabled/active
check "... and restarted: a new process" "$(sp show.start MainPID)" != "$(cat "$G/pid.before-upgrade")"
started_new=$(first_ns "	mmhitmd	.*	Host .*; mmhitmd $new_version\$")
check "... running $new_version (its start-up line says so)" "${started_new:-0}" -gt "$(cat "$G/upgrade.ns")"
check "... the timer still enabled and active" "$(unit_state upgraded mmhitm-report.timer)" = enabled/active
last=$(cat "$G/upgrade.last_interval")
gap=$(q "SELECT coalesce(max(start_ns - prev), 0) / 1000000 FROM (SELECT start_ns,
	lag(end_ns) OVER (ORDER BY start_ns) AS prev FROM intervals)
	WHERE start_ns BETWEEN $(cat "$G/upgrade.ns") AND $(cat "$G/upgrade.done.ns")")
echo "    the upgrade: dpkg -i took $(( ($(cat "$G/upgrade.done.ns") - $(cat "$G/upgrade.ns")) / 1000000 )) ms, no interval for ${gap} ms while the daemon restarted; user_version $(cat "$G/user_version.installed") -> $(cat "$G/user_version.upgraded")"
check "the upgraded daemon writes intervals" "$(q "SELECT count(*) FROM intervals WHERE start_ns > $(cat "$G/upgrade.done.ns")")" -ge 1
schema=$(ls "$TOP"/schema/[0-9]*.sql | sed 's|.*/0*\([0-9]*\)-.*|\1|' | sort -n | tail -n1)
check "the database is at this tree's schema version ($schema) after the upgrade" "$(cat "$G/user_version.upgraded")" = "$schema"
{
	q "SELECT 'i', interval_id, start_ns, end_ns, partial, learn_records FROM intervals
		WHERE interval_id <= $last ORDER BY interval_id"
	q "SELECT 'c', interval_id, event_id, count FROM event_counts
		WHERE interval_id <= $last ORDER BY interval_id, event_id"
} > "$G/rows.at-end"
check "the $last intervals and their counts recorded before the upgrade are all there, unchanged" \
	"$(cmp -s "$G/rows.before-upgrade" "$G/rows.at-end" && echo same || echo differ)" = same
check "... $(wc -l < "$G/rows.before-upgrade") rows compared" "$(wc -l < "$G/rows.before-upgrade")" -ge 3

# --- 1. started by systemd, confined, recording ----------------------------
note "mmhitmd.service as the upgrade restarted it"
check "Type=notify" "$(sp show.start Type)" = notify
check "active (running) when the boot was up" "$(sp show.start ActiveState)/$(sp show.start SubState)" = active/running
# systemd takes a notify service as started only on READY=1; the status
# text came in the same message.
check "... with the STATUS= of its READY=1" -n "$(sp show.start StatusText | grep "^Recording into /var/lib/mmhitm/mmhitm.db every ${INTERVAL}s$")"
setup=$(first_ns '	mmhitmd	.*	Host ')
started=$(first_ns '	systemd	1	Started mmhitmd.service')
check "systemd said Started only after the daemon's setup had run" "${started:-0}" -gt "${setup:-0}"
check "... and $(sp show.start ExecMainStartTimestampMonotonic) < $(sp show.start ActiveEnterTimestampMonotonic) (exec before active)" \
	"$(sp show.start ExecMainStartTimestampMonotonic)" -lt "$(sp show.start ActiveEnterTimestampMonotonic)"

# The unit as systemd loaded it, then what the kernel applied to the process.
check "ProtectSystem=strict" "$(sp show.start ProtectSystem)" = strict
check "PrivateDevices=yes" "$(sp show.start PrivateDevices)" = yes
check "PrivateNetwork=yes" "$(sp show.start PrivateNetwork)" = yes
check "NoNewPrivileges=yes" "$(sp show.start NoNewPrivileges)" = yes
check "ReadOnlyPaths= has /sys" -n "$(sp show.start ReadOnlyPaths | tr ' ' '\n' | grep -x /sys)"
check "ReadWritePaths= has /sys/kernel/tracing" -n "$(sp show.start ReadWritePaths | tr ' ' '\n' | grep -x /sys/kernel/tracing)"
check "IPAddressDeny=any" -n "$(sp show.start IPAddressDeny | grep '0.0.0.0/0')"
check "... which this systemd can apply" -z "$(pid1_log | grep -i 'firewall')"
check "SystemCallFilter= allows perf_event_open" -n "$(sp show.start SystemCallFilter | tr ' ' '\n' | grep -x perf_event_open)"
check "... and not mount" -z "$(sp show.start SystemCallFilter | tr ' ' '\n' | grep -x mount)"
status=$G/proc.status.first
capbnd=$(sed -n 's/^CapBnd:\t//p' "$status")
# CAP_SYS_ADMIN 21, CAP_SYSLOG 34, CAP_PERFMON 38, CAP_BPF 39.
check "its bounding set is CAP_PERFMON CAP_SYSLOG CAP_SYS_ADMIN CAP_BPF ($capbnd)" "$capbnd" = 000000c400200000
check "... and so are its effective capabilities" "$(sed -n 's/^CapEff:\t//p' "$status")" = 000000c400200000
check "no_new_privs set" "$(sed -n 's/^NoNewPrivs:\t//p' "$status")" = 1
check "seccomp filter mode" "$(sed -n 's/^Seccomp:\t//p' "$status")" = 2
mnt() {	# mount point: its per-mount options in the daemon's namespace
	awk -v m="$1" '$5 == m { o = $6 } END { print o }' "$G/proc.mountinfo.first" | cut -d, -f1
}
check "/ read-only for it" "$(mnt /)" = ro
check "/sys read-only" "$(mnt /sys)" = ro
check "/proc/sys read-only" "$(mnt /proc/sys)" = ro
check "/sys/kernel/debug read-only" "$(mnt /sys/kernel/debug)" = ro
check "/sys/kernel/tracing writable" "$(mnt /sys/kernel/tracing)" = rw
check "/var/lib/mmhitm writable (StateDirectory)" "$(mnt /var/lib/mmhitm)" = rw
check "/proc/kcore covered (inaccessible)" -n "$(mnt /proc/kcore)"
check "a network namespace of its own" "$(cut -d' ' -f1 "$G/netns.first")" != "$(cut -d' ' -f2 "$G/netns.first")"
check "a private /dev (null, no vda)" "$(grep -cx 'null\|vda' "$G/proc.dev.first")" -eq 1
check "tracefs mounted by systemd (sys-kernel-tracing.mount)" -n "$(awk '$2 == "/sys/kernel/tracing"' "$G/mounts.api")"
check "its tracefs instance exists while it runs" -n "$(grep -x mmhitm "$G/instances.running")"

bad=$(daemon_log | awk -F'\t' '$2 <= 3 || $5 ~ /Operation not permitted|Permission denied|Read-only file system|Bad system call|EPERM/')
[ -z "$bad" ] || echo "$bad" | cut -f2,5 | sort | uniq -c | sed 's/^/    journal: /'
check "no error, EPERM, EACCES or EROFS in its journal" "$(echo "$bad" | grep -c .)" -eq 0
check "no seccomp kill anywhere (audit type=1326)" -z "$(grep -E 'type=1326|: SECCOMP ' "$G/journal.txt")"

note "what it recorded (the DB from /var/lib/mmhitm)"
check "one boot in the DB" "$(q "SELECT count(*) FROM boots")" -eq 1
boot=$(q "SELECT boot_id FROM boots")
check "intervals stored" "$(q "SELECT count(*) FROM intervals")" -ge 8
# Nothing lost between rows: each interval starts where the last ended,
# with a gap only where mmhitmd started again. A failed write is an error
# in its journal (checked above). dropped_intervals is not the measure:
# it also counts a flush more than a tenth of an interval late, which a
# TCG guest on a loaded host sees (once in CI: the first interval after
# the watchdog's restart flushed 0.8 s late).
starts=$(daemon_log | awk -F'\t' '$5 ~ /^Recording into /' | wc -l)
gaps=$(q "SELECT count(*) FROM intervals a JOIN intervals b ON b.interval_id = a.interval_id + 1
	WHERE b.start_ns != a.end_ns")
check "no two intervals overlap" \
	"$(q "SELECT count(*) FROM intervals a JOIN intervals b ON b.interval_id = a.interval_id + 1
		WHERE b.start_ns < a.end_ns")" -eq 0
check "a gap between intervals only where mmhitmd started again ($gaps, $starts starts)" "$gaps" -lt "$starts"
echo "    intervals flushed late (dropped_intervals): $(q "SELECT coalesce(sum(dropped_intervals), 0) FROM intervals")"
# Windowed, P1's switches are /proc/stat's ctxt, their exact free counter
# (paths.conf): a row every interval, method free, nothing armed for it.
sw=$(q "SELECT count(*) FROM event_counts JOIN event_names USING (event_id)
	WHERE name = 'sched:sched_switch' AND method = 'free' AND count > 0")
check "sched:sched_switch from ctxt (method free) in $sw intervals" "$sw" -ge 8
echo "    $(q "SELECT count(*) FROM mm_structs") mm_structs, of $(q "SELECT group_concat(comm, ' ') FROM (SELECT DISTINCT comm FROM mm_structs)")"
# The scenario's systemctl calls run outside the daemon's namespaces.
check "mm_structs learned system-wide (the scenario's systemctl)" \
	"$(q "SELECT count(*) FROM mm_structs WHERE comm = 'systemctl'")" -gt 0
check "the task iterator loaded under the unit's confinement (bpf:task_iter)" \
	"$(q "SELECT available FROM event_availability WHERE event = 'bpf:task_iter'")" = 1
check "... and listed mm_structs" "$(q "SELECT count(*) FROM mm_structs WHERE learned_from = 'task_iter'")" -gt 0
check "BTF layouts stored" "$(q "SELECT count(*) FROM btf_layouts WHERE boot_id = $boot")" -gt 10
check "... with mm_struct.lru_gen.bitmap" -n "$(q "SELECT offset FROM btf_layouts WHERE struct = 'mm_struct' AND field = 'lru_gen.bitmap'")"
nk=$(q "SELECT count(*) FROM ksyms WHERE boot_id = $boot")
check "kallsyms-derived ksyms stored ($nk)" "$nk" -gt 0
check "... all with real addresses (CAP_SYSLOG works)" "$(q "SELECT count(*) FROM ksyms WHERE addr = 0")" -eq 0
echo "    $(q "SELECT name || ' ' || printf('%x', addr) FROM ksyms WHERE boot_id = $boot LIMIT 1")"

m=$G/metrics
echo "    $(cat "$m.stat" 2>/dev/null)"
check "the node_exporter textfile written" -n "$(grep '^/var/lib/prometheus/node-exporter/mmhitm.prom ' "$m.stat")"
check "... readable by node_exporter's user (prometheus)" "$(cat "$m.rc" 2>/dev/null)" = 0
check "... with mmhitm's counters" -n "$(grep '^mmhitm_intervals_written_total' "$m.as-prometheus")"

# --- 2. the watchdog ---------------------------------------------------------
note "watchdog"
check "WatchdogSec=${WATCHDOG}s in effect (test drop-in)" "$(sp show.start WatchdogUSec)" = "${WATCHDOG}s"
span=$(awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%d", b - a }' "$G/watchdog.samples")
pings=$(awk '$2 != 0 { print $2 }' "$G/watchdog.samples" | sort -u | wc -l)
echo "    WatchdogTimestamp took $pings values over ${span}s"
check "sampled over more than WatchdogSec" "$span" -gt "$WATCHDOG"
check "WatchdogTimestamp moved at least every WatchdogSec/2" "$pings" -ge $((span * 2 / WATCHDOG))
stop_ns=$(cat "$G/sigstop.ns")
timeout_ns=$(first_ns '	systemd	1	mmhitmd.service: Watchdog timeout')
check "no watchdog timeout while it ran" "${timeout_ns:-0}" -gt "$stop_ns"
check "SIGSTOPped, it timed out" -n "$timeout_ns"
late=$(( (timeout_ns - stop_ns) / 1000000 ))
check "... ${late} ms after the SIGSTOP, within WatchdogSec + 2 s" "$late" -le $((WATCHDOG * 1000 + 2000))
check "... and failed with result 'watchdog'" -n "$(pid1_log | grep "Failed with result 'watchdog'")"
check "Restart=on-failure restarted it (NRestarts=1)" "$(sp show.restarted NRestarts)" -eq 1
check "... as a new process" "$(cat "$G/pid.restarted")" != "$(cat "$G/pid.stopped")"
check "... active (running) again" "$(sp show.restarted ActiveState)/$(sp show.restarted SubState)" = active/running
check "... which removed the killed one's tracefs instance first" -n "$(daemon_log | grep 'Removing stale tracefs instance mmhitm')"
check "... and records again" "$(q "SELECT count(*) FROM intervals WHERE end_ns > $(cat "$G/restarted.ns")")" -ge 1

# --- 3. reload, stop, log levels -------------------------------------------
note "reload and stop"
check "systemctl reload exited 0" "$(cat "$G/reload.rc")" -eq 0
check "... the daemon reloaded mmhitm.conf" -n "$(daemon_log | grep 'Reloading configuration from /etc/mmhitm/mmhitm.conf')"
# ExecReload only sends SIGHUP: systemctl returns before the daemon reads
# it, and an interval begun in between keeps the old length. "After the
# reload" is after the daemon's own line saying it reloads.
reload_ns=$(first_ns '	mmhitmd	[0-9]+	Reloading configuration from ')
echo "    the daemon read the SIGHUP $(( (reload_ns - $(cat "$G/reload.ns")) / 1000000 )) ms after systemctl reload began"
check "... in the same process" "$(sp show.reloaded MainPID)" = "$(cat "$G/pid.first")"
lens() {	# where: interval lengths in s, one per line
	q "SELECT (end_ns - start_ns + 500000000) / 1000000000 FROM intervals WHERE $1 ORDER BY start_ns"
}
echo "    interval lengths before the reload: $(lens "end_ns <= $reload_ns" | tr '\n' ' ')"
echo "    after it, before the SIGSTOP: $(lens "start_ns >= $reload_ns AND end_ns <= $stop_ns" | tr '\n' ' ')"
check "whole ${INTERVAL}s intervals before the reload" \
	"$(lens "end_ns <= $reload_ns AND partial = 0" | sort -u | tr '\n' ' ')" = "$INTERVAL "
check "whole ${RELOAD_INTERVAL}s intervals after it" \
	"$(lens "start_ns >= $reload_ns AND end_ns <= $stop_ns AND partial = 0" | sort -u | tr '\n' ' ')" = "$RELOAD_INTERVAL "
check "... at least 3 of them" "$(lens "start_ns >= $reload_ns AND end_ns <= $stop_ns AND partial = 0" | wc -l)" -ge 3
gap=$(q "SELECT coalesce(max(start_ns - prev), 0) FROM (SELECT start_ns,
	lag(end_ns) OVER (ORDER BY start_ns) AS prev FROM intervals
	WHERE start_ns > $(cat "$G/upgrade.done.ns") AND end_ns <= $stop_ns)")
check "no gap over 1 s from the upgraded daemon's first interval to the SIGSTOP (${gap} ns)" "$gap" -lt 1000000000

before=$(cat "$G/stop.before.ns") after=$(cat "$G/stop.after.ns")
check "systemctl stop exited 0" "$(cat "$G/stop.rc")" -eq 0
check "... inactive, result success, exit status 0" \
	"$(sp show.stopped ActiveState)/$(sp show.stopped Result)/$(sp show.stopped ExecMainStatus)" = inactive/success/0
last=$(q "SELECT start_ns || ' ' || end_ns || ' ' || partial FROM intervals ORDER BY start_ns DESC LIMIT 1")
set -- $last
echo "    last interval: $(( ($2 - $1) / 1000000 )) ms, partial=$3; stop took $(( (after - before) / 1000000 )) ms"
check "the partial interval written at stop" "$3" -eq 1
check "... ending during systemctl stop" "$2" -ge "$before"
check "... not after it returned" "$2" -le "$after"
check "... shorter than ${RELOAD_INTERVAL}s" $(( $2 - $1 )) -lt $((RELOAD_INTERVAL * 1000000000))
check "the daemon said so" -n "$(daemon_log | grep 'Stopped after [0-9]* intervals')"
check "its tracefs instance is gone after stop" -z "$(grep -x mmhitm "$G/instances.after")"

prios=$(daemon_log | cut -f2 | sort -u | tr '\n' ' ')
echo "    journal priorities of mmhitmd's lines: $prios"
check "journald kept its levels: info (6) lines" -n "$(daemon_log | awk -F'\t' '$2 == 6')"
check "... and notice (5) ones" -n "$(daemon_log | awk -F'\t' '$2 == 5')"
check "... with no <N> prefix left in a message" -z "$(daemon_log | cut -f5 | grep '^<[0-7]>')"
check "journalctl -p notice drops the info lines" -z "$(grep '^Recording into' "$G/journal.mmhitmd.notice")"
check "... and keeps the notice ones" -n "$(grep '^No HITM sampling' "$G/journal.mmhitmd.notice")"

# --- 4. the weekly report --------------------------------------------------
note "mmhitm-report.timer and .service"
check "mmhitm-report.timer active" "$(sp show.timer ActiveState)" = active
check "... Persistent=yes" "$(sp show.timer Persistent)" = yes
check "... on its calendar" -n "$(sp show.timer TimersCalendar | grep 'Mon \*-\*-\* 06:00:00')"
check "... with a next elapse" -n "$(sp show.timer NextElapseUSecRealtime)"
check "systemctl start mmhitm-report.service exited 0" "$(cat "$G/report.rc")" -eq 0
check "... result success" "$(sp show.report Result)" = success
pre=$(grep '^ExecStartPre=.*mmhitm analyze' "$G/show.report")
check "ExecStartPre mmhitm analyze exited 0" -n "$(echo "$pre" | grep 'code=exited ; status=0 }')"
check "ExecStart mmhitm report --output-dir exited 0" \
	-n "$(grep '^ExecStart=.*mmhitm report .*--output-dir' "$G/show.report" | grep 'code=exited ; status=0 }')"
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
	check "its processes hold no capabilities: $c 0" \
		-n "$(grep -E "	$c: 0{16}$" "$G/report.journal")"
done
R=$S/reports
for f in latest.html latest.json; do
	check "reports/$f written" -s "$R/$f"
done
check "reports/report-YYYY-MM-DD.html written" -n "$(ls "$R" | grep -E '^report-[0-9]{4}-[0-9]{2}-[0-9]{2}\.html$')"
check "reports/report-YYYY-MM-DD.json written" -n "$(ls "$R" | grep -E '^report-[0-9]{4}-[0-9]{2}-[0-9]{2}\.json$')"
check "... JSON that parses" "$(python3 -c 'import json, sys; json.load(open(sys.argv[1])); print(1)' "$R/latest.json" 2>/dev/null)" = 1
check "/var/lib/mmhitm stays 0750 when the report runs" "$(cat "$G/statedir.mode.before")/$(cat "$G/statedir.mode.after")" = 750/750

# --- 4b. snapshots under the unit ------------------------------------------
note "snapshots = yes under the shipped unit: SIGUSR1 and mmhitm snapshot"
check "two snapshots listed (SIGUSR1, request)" \
	"$(cut -d'|' -f1 "$G/snap.rows" 2>/dev/null | tr '\n' ' ')" = "SIGUSR1 request "
check "mmhitm snapshot --wait exited 0 ($(head -c 200 "$G/snap.request.err" 2>/dev/null))" \
	"$(cat "$G/snap.request.rc" 2>/dev/null)" = 0
check "no snapshot failed or was refused" \
	-z "$(daemon_log | grep -E 'Snapshot \([^)]*\) (failed|not taken)' | head -n1)"
n=0
while IFS='|' read -r trig path bytes; do
	n=$((n + 1))
	check "$trig snapshot: saved whole ($bytes bytes listed)" \
		"$(stat -c %s "$G/snap.$n.dat" 2>/dev/null || echo 0)" -eq "$bytes"
	check "$trig snapshot: trace-cmd report reads it in the guest ($(head -c 200 "$G/snap.report.err.$n"))" \
		"$(cat "$G/snap.report.rc.$n" 2>/dev/null)" = 0
	trace-cmd report "$G/snap.$n.dat" > "$G/snap.host-report.$n" 2>/dev/null ||
		fail "$trig snapshot: trace-cmd report on the host"
	check "$trig snapshot: ... and on the host, as many lines" \
		"$(wc -l < "$G/snap.host-report.$n")" -eq "$(wc -l < "$G/snap.report.$n")"
	echo "    $trig: $(basename "$path"), $bytes bytes, $(grep -c ': [a-z_]*:' "$G/snap.report.$n") events"
done < "$G/snap.rows"
check "the top-level tracing_on as it was" \
	"$(cat "$G/snap.tracing_on.after" 2>/dev/null)" = "$(cat "$G/snap.tracing_on.before" 2>/dev/null)"

# --- 5. removed, then purged -------------------------------------------------
note "dpkg -r, then dpkg -P (debian/mmhitm.postrm)"
check "dpkg -r exited 0" "$(cat "$G/dpkg.remove.rc" 2>/dev/null)" = 0
check_pkg "... leaves the configuration (config-files)" removed "deinstall ok config-files $new_version"
check "... stopped the running daemon (its unit is gone)" "$(sp show.removed ActiveState)/$(sp show.removed LoadState)" = inactive/not-found
check "... and the timer" "$(unit_state removed mmhitm-report.timer | cut -d/ -f2)" = inactive
check "... which removed its tracefs instance" -z "$(grep -x mmhitm "$G/instances.removed")"
check "... removed the programs" "$(grep -c 'No such file' "$G/programs.removed")" -eq 2
check "... kept the recordings (/var/lib/mmhitm/mmhitm.db)" -n "$(grep -x mmhitm.db "$G/statedir.removed")"
check "... and the configuration (/etc/mmhitm/mmhitm.conf)" -n "$(grep -x mmhitm.conf "$G/etc.removed")"
check "dpkg -P exited 0" "$(cat "$G/dpkg.purge.rc" 2>/dev/null)" = 0
check_pkg "... mmhitm is not installed" purged not-installed
check "... /var/lib/mmhitm and /etc/mmhitm are gone" "$(tr '\n' ' ' < "$G/left.purged")" = ""
check "... and the units' enablement links" "$(tr '\n' ' ' < "$G/links.purged")" = ""

echo "scenario systemd: $(( $(date +%s) - t0 ))s wall; guest journal $G/journal.txt"
