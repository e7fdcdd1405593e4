# SPDX-License-Identifier: GPL-2.0
#
# Guest side of test-hotplug: mmhitmd counts (continuously) a system call
# nothing else makes while CPU 1 goes offline and comes back; the helper
# makes known numbers of that call pinned to each CPU. What the host checks
# comes back in $1: the phases' call counts, the daemon's log and exit code.

out=$1
set -u
INTERVAL=2
db=/mnt/mmhitm.db
ev=syscalls:sys_enter_sched_rr_get_interval
cpu1=/sys/devices/system/cpu/cpu1/online

uname -r > "$out/release"
if [ ! -w "$cpu1" ]; then
	echo "no $cpu1: this kernel cannot take CPU 1 offline" > "$out/skip"
	exit 0
fi
mmhitmd --db "$db" --interval "${INTERVAL}s" --record-mode continuous --count-events "$ev" \
	--instance mmhitm-hotplug --foreground > "$out/mmhitmd.log" 2>&1 &
daemon=$!
i=0
until grep -q "Recording into" "$out/mmhitmd.log"; do
	[ $i -ge 600 ] && break
	sleep 0.1
	i=$((i + 1))
done

calls() {	# phase cpu n
	mmhitm-test-helper rrcalls "$2" "$3" && echo "$3" > "$out/calls.$1"
}
calls online1 1 1000
# Off and on again between two of the daemon's looks (each interval's end).
# A look can fall inside the spell (offlining is slow under TCG, slower on a
# loaded host): the daemon then saw CPU 1 offline, which is the next
# phase's case, so the spell is made again, up to 5 times; tries says how
# many it took (each counts CPU 1 again once).
off=0
tries=0
while [ $tries -lt 5 ]; do
	tries=$((tries + 1))
	seen=$(grep -c "went offline and came back" "$out/mmhitmd.log")
	echo 0 > "$cpu1" && echo "cpu1 offline: $(cat /sys/devices/system/cpu/online)"
	mmhitm-test-helper rrcalls 0 500 && off=$((off + 500))
	echo 1 > "$cpu1" && echo "cpu1 online: $(cat /sys/devices/system/cpu/online)"
	sleep $((INTERVAL * 2))
	[ "$(grep -c "went offline and came back" "$out/mmhitmd.log")" -gt "$seen" ] && break
done
echo "$off" > "$out/calls.offline"
echo "$tries" > "$out/tries"
calls online2 1 2000
# Offline across looks this time.
echo 0 > "$cpu1" && echo "cpu1 offline: $(cat /sys/devices/system/cpu/online)"
sleep $((INTERVAL * 2))
calls offline2 0 200
echo 1 > "$cpu1" && echo "cpu1 online: $(cat /sys/devices/system/cpu/online)"
sleep $((INTERVAL * 2))
calls online3 1 700
calls cpu0 0 300
sleep $((INTERVAL * 2))
kill -TERM $daemon
wait $daemon
echo $? > "$out/mmhitmd.rc"
sqlite3 "$db" "SELECT coalesce(sum(count), 0) FROM event_counts JOIN event_names USING (event_id)
	WHERE name = '$ev'" > "$out/counted"
echo "counted $(cat "$out/counted")"
