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

out=$1
set -u
DURATION=30 INTERVAL=5 INSTANCE=mmhitm
WINDOW=2.5 WINDOW_SLICES=4 OVERHEAD_BUDGET=50% DAEMON_ARGS=
[ -f /mnt/params ] && . /mnt/params
db=/mnt/mmhitm.db

uname -r > "$out/release"
mmhitm-load ctxswitch --cpus 0 --duration $((DURATION + 60)) --json > "$out/load.json" 2> "$out/load.err" &
load=$!
sleep 2
mmhitmd --db "$db" --interval "${INTERVAL}s" --duration "${DURATION}s" --window "${WINDOW}s" \
	--window-slices "$WINDOW_SLICES" --overhead-budget "$OVERHEAD_BUDGET" $DAEMON_ARGS \
	--instance "$INSTANCE" --foreground > "$out/mmhitmd.log" 2>&1
echo $? > "$out/mmhitmd.rc"
echo "mmhitmd: exit $(cat "$out/mmhitmd.rc")"
tail -n 20 "$out/mmhitmd.log"
# The load's SIGINT result is partial ("interrupted"), exit 0.
kill -INT $load
wait $load
echo $? > "$out/load.rc"
echo "mmhitm-load ctxswitch --cpus 0: exit $(cat "$out/load.rc")"
cat "$out/load.json" "$out/load.err"
echo done > "$out/status"
