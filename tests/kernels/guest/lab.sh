# SPDX-License-Identifier: GPL-2.0
#
# Guest side of test-rollout's lab (mmhitm lab, the patch author's bench):
# run by guest/record.sh after its recording on the rollout's two boots,
# and as the scenario of its two more boots (6.1, then 6.12 again), so the
# lab gets 2 boots of each kernel, A B A B. Its own mmhitmd records
# continuously into /mnt/lab.db (the rollout's DB keeps its two boots)
# while `mmhitm lab run` runs this boot's share of two protocols that the
# first boot writes into the same DB:
#   p1: ctxswitch at the guest's 2 CPUs and its private-mm control,
#       LAB_RUNS runs of LAB_SECONDS each;
#   p2: aging at 1 and 2 processes on a 16 MiB file, 3 passes a run, where
#       the kernel has LRU_GEN (turned on as guest/record.sh does), in a
#       cgroup of its own.
# In $1: each lab run's output and exit code, the daemon's log and exit
# code, and `mmhitm lab status`; the host recomputes the table from the DB
# (test-rollout.sh: check_lab).

out=$1
set -u
LAB_RUNS=3 LAB_SECONDS=1
[ -f /mnt/params ] && . /mnt/params
db=/mnt/lab.db
mkdir -p "$out"

mmhitm lab status p1 --db "$db" >/dev/null 2>&1 ||
	mmhitm lab start p1 --reproducer ctxswitch --at 2 --runs "$LAB_RUNS" --boots 2 \
		--duration "${LAB_SECONDS}s" --db "$db"
mmhitm lab status p2 --db "$db" >/dev/null 2>&1 ||
	mmhitm lab start p2 --reproducer aging --at 1,2 --runs 2 --boots 2 --loops 3 \
		--load-args "--size 16M" --db "$db"

mmhitmd --db "$db" --interval 30s --record-mode continuous --instance mmhitm-lab --foreground \
	> "$out/mmhitmd.log" 2>&1 &
daemon=$!
i=0
until grep -q 'Recording into' "$out/mmhitmd.log" 2>/dev/null; do
	kill -0 $daemon 2>/dev/null || break
	[ $i -ge 600 ] && break
	sleep 0.1
	i=$((i + 1))
done
echo "lab: mmhitmd pid $daemon recording after $((i / 10)).$((i % 10))s"

mmhitm lab run p1 --db "$db" > "$out/p1.out" 2>&1
echo $? > "$out/p1.rc"
cat "$out/p1.out"
if [ -f /sys/kernel/mm/lru_gen/enabled ]; then
	echo y > /sys/kernel/mm/lru_gen/enabled
	cg=/sys/fs/cgroup/mmhitm-lab
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	mkdir -p $cg
	sh -c 'echo $$ > "$0"/cgroup.procs && exec "$@"' $cg \
		mmhitm lab run p2 --db "$db" > "$out/p2.out" 2>&1
	echo $? > "$out/p2.rc"
	cat "$out/p2.out"
else
	echo "no LRU_GEN: no aging lab on this kernel" > "$out/p2.out"
fi

kill -TERM $daemon
wait $daemon
echo $? > "$out/mmhitmd.rc"
mmhitm lab status p1 --db "$db" > "$out/status" 2>&1
cat "$out/status"
