# SPDX-License-Identifier: GPL-2.0
#
# Guest side of test-windowed: mmhitmd in its default, windowed mode (with
# the window, slices and budget the host writes into /mnt/params) records
# DURATION s while a steady context-switch load runs on CPU 0 all along,
# from before the daemon starts until after it stops, so that every
# interval has the same rate to estimate. CPU 1 is left to the daemon:
# under TCG a window's arming and disarming take it hundreds of times
# longer than on hardware, and a load on every CPU starves them (see
# record.sh). What the host asserts on comes back in $1.
#
# Then, the load still on, a second daemon into clock.db while the wall
# clock is set forward a day and back an hour, each in the midst of an
# interval ("Hours of faults", point 1): the guest's clock is the test's
# to set. /proc/stat's ctxt around it goes back in clock.ctxt.

out=$1
set -u
DURATION=30 INTERVAL=5 INSTANCE=mmhitm
WINDOW=2.5 WINDOW_SLICES=4 OVERHEAD_BUDGET=50% DAEMON_ARGS=
[ -f /mnt/params ] && . /mnt/params
db=/mnt/mmhitm.db

uname -r > "$out/release"
mmhitm-load ctxswitch --cpus 0 --duration $((DURATION + 150)) --json > "$out/load.json" 2> "$out/load.err" &
load=$!
sleep 2
mmhitmd --db "$db" --interval "${INTERVAL}s" --duration "${DURATION}s" --window "${WINDOW}s" \
	--window-slices "$WINDOW_SLICES" --overhead-budget "$OVERHEAD_BUDGET" $DAEMON_ARGS \
	--instance "$INSTANCE" --foreground > "$out/mmhitmd.log" 2>&1
echo $? > "$out/mmhitmd.rc"
echo "mmhitmd: exit $(cat "$out/mmhitmd.rc")"
tail -n 20 "$out/mmhitmd.log"

ctxt() { awk '/^ctxt / { print $2 }' /proc/stat; }
rows() { sqlite3 /mnt/clock.db "SELECT count(*) FROM intervals" 2>/dev/null || echo 0; }
wait_rows() {	# count: each row takes CLOCK_INTERVAL s
	n=0
	while [ "$(rows)" -lt "$1" ] && [ $n -lt 120 ]; do sleep 0.5; n=$((n + 1)); done
}
CLOCK_INTERVAL=4
c0=$(ctxt)
mmhitmd --db /mnt/clock.db --interval "${CLOCK_INTERVAL}s" --duration 26s --window 2s \
	--window-slices 2 --overhead-budget "$OVERHEAD_BUDGET" $DAEMON_ARGS --instance "$INSTANCE" \
	--foreground > "$out/clock.log" 2>&1 &
cpid=$!
# Half an interval after a row was written: the midst of the next.
wait_rows 2
sleep 2
date -s "@$(( $(date +%s) + 86400 ))" > /dev/null
echo "clock: set forward a day at row $(rows)"
wait_rows 4
sleep 2
date -s "@$(( $(date +%s) - 3600 ))" > /dev/null
echo "clock: set back an hour at row $(rows)"
wait $cpid
echo $? > "$out/clock.rc"
echo "$c0 $(ctxt)" > "$out/clock.ctxt"
echo "mmhitmd (clock steps): exit $(cat "$out/clock.rc")"
grep -i "clock" "$out/clock.log"
# The load's SIGINT result is partial ("interrupted"), exit 0.
kill -INT $load
wait $load
echo $? > "$out/load.rc"
echo "mmhitm-load ctxswitch --cpus 0: exit $(cat "$out/load.rc")"
cat "$out/load.json" "$out/load.err"
echo done > "$out/status"
