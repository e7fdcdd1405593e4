# SPDX-License-Identifier: GPL-2.0
#
# Guest side of test-boot: no project binaries, only what the other
# scenarios take for granted about a kernel, written to $1 for the host:
# the release, LRU_GEN before and after enabling it, the BTF, whether an
# aging pass through /sys/kernel/debug/lru_gen moves max_seq by exactly
# one, and a tracefs instance counting sched_switch.

out=$1
set -u
uname -r > "$out/release"

gen=/sys/kernel/mm/lru_gen/enabled
if [ -f $gen ]; then
	cat $gen > "$out/lru_gen.before"
	echo y > $gen
	cat $gen > "$out/lru_gen.after"
else
	echo absent > "$out/lru_gen.before"
fi
cp /sys/kernel/btf/vmlinux "$out/vmlinux.btf" || echo "no /sys/kernel/btf/vmlinux"

mkdir -p /sys/kernel/debug /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing

# max_seq of the root memcg on node 0: the first generation line after
# "memcg 1 /" and " node 0" is min_seq, the last one max_seq.
max_seq() {
	awk '$1 == "memcg" { m = $2 } $1 == "node" { n = $2; next }
	     m == 1 && n == 0 && $1 ~ /^[0-9]+$/ { s = $1 } END { print s }' /sys/kernel/debug/lru_gen
}
if [ -f /sys/kernel/debug/lru_gen ]; then
	cat /sys/kernel/debug/lru_gen > "$out/lru_gen.debugfs.before"
	# Some page cache for the walk to find.
	cat /usr/bin/* /bin/busybox > /dev/null 2>&1
	max_seq > "$out/max_seq.before"
	passes=0
	for i in 1 2 3; do
		s=$(max_seq)
		echo "+ 1 0 $s" > /sys/kernel/debug/lru_gen && passes=$((passes + 1))
	done
	echo $passes > "$out/aging.passes"
	max_seq > "$out/max_seq.after"
	cat /sys/kernel/debug/lru_gen > "$out/lru_gen.debugfs.after"
fi

# Our own instance only, never the top-level one.
inst=/sys/kernel/tracing/instances/mmhitm-kt
mkdir $inst
cp /sys/kernel/tracing/available_events "$out/available_events"
ctxt0=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
echo 1 > $inst/events/sched/sched_switch/enable
for i in $(seq 200); do busybox true; done
sleep 1
echo 0 > $inst/events/sched/sched_switch/enable
ctxt1=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
grep -c 'sched_switch:' $inst/trace > "$out/trace.sched_switch"
echo $((ctxt1 - ctxt0)) > "$out/ctxt.delta"
rmdir $inst
ls /sys/kernel/tracing/instances > "$out/instances.after"
echo done > "$out/status"
