#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kill -9 at random moments (issue 15's tests), KILLS times (default 20)
# from a fixed seed, under a light load (one pwrite thread): after every
# kill the database passes integrity_check and keeps every interval
# committed before it, the next start takes the locks the kernel dropped
# and removes the stale instance. Prints what each kill lost: the time
# from the last committed interval's end (or the run's start) to the kill
# (the promise: the interval in progress, at most about one interval).

. "$(dirname "$0")/lib.sh"

KILLS=${KILLS:-20}
SEED=${SEED:-15}
WORK=$(mktemp -d /tmp/mmhitm-test-kill9.XXXXXX)
DB=$WORK/t.db
INST=mmhitm-test-kill9-$$
trap 'kill $LOAD $DPID 2>/dev/null; cleanup_instances "$INST"; rm -rf "$WORK"' EXIT

"$O/mmhitm-load" pwrite --threads 1 --cpus 0 --duration 0 >/dev/null 2>&1 &
LOAD=$!

# The kill moments: 0.00 .. 2.00 s after the daemon is recording (1 s
# intervals), fixed by the seed.
awk -v n="$KILLS" -v seed="$SEED" 'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%.2f\n", rand() * 2 }' \
	>"$WORK/delays"

i=0 bad=0 lost_sum=0 lost_max=0
while read -r delay; do
	i=$((i + 1))
	# Emptied here, not only by the daemon's redirection: the wait below
	# would otherwise find the last run's "Recording into" before the new
	# daemon's shell has truncated the file.
	: >"$WORK/run.log"
	"$O/mmhitmd" --foreground --db "$DB" --interval 1s --drain-interval 100ms --instance "$INST" \
		--metrics-file "" 2>"$WORK/run.log" &
	DPID=$!
	if ! wait_until 60 grep -q "Recording into" "$WORK/run.log"; then
		cat "$WORK/run.log"; fail "run $i did not start"; break
	fi
	rec_ns=$(date +%s%N)
	if [ $i -gt 1 ] && ! grep -q "Removing stale tracefs instance $INST left" "$WORK/run.log"; then
		fail "run $i did not remove the stale instance"
		echo "  the run before it, killed $prev_state:"
		sed 's/^/  | /' "$WORK/prev.log"
		echo "  this run:"
		sed 's/^/  | /' "$WORK/run.log"
	fi
	sleep "$delay"
	before=$(rows)
	# alive when killed, or gone by itself (then its log says why)
	kill -0 $DPID 2>/dev/null && prev_state=alive || prev_state="after it had exited"
	kill -KILL $DPID
	killed_ns=$(date +%s%N)
	wait $DPID 2>/dev/null
	cp "$WORK/run.log" "$WORK/prev.log"
	after=$(rows)
	integrity=$(q 'PRAGMA integrity_check')
	last_end=$(q 'SELECT max(end_ns) FROM intervals')
	# What this run recorded and did not commit: since its last
	# committed interval, or since it started recording.
	from=${last_end:-$rec_ns}
	[ "$from" -lt "$rec_ns" ] && from=$rec_ns
	lost_ms=$(( (killed_ns - from) / 1000000 ))
	[ "$integrity" = ok ] || { fail "kill $i: integrity '$integrity'"; bad=$((bad + 1)); }
	[ "$after" -ge "$before" ] || { fail "kill $i: $before intervals before, $after after"; bad=$((bad + 1)); }
	echo "kill $i at +${delay}s: intervals $after, lost ${lost_ms} ms uncommitted"
	lost_sum=$((lost_sum + lost_ms))
	[ $lost_ms -gt $lost_max ] && lost_max=$lost_ms
done <"$WORK/delays"
kill $LOAD 2>/dev/null

check "kills done" $i -eq "$KILLS"
check "every kill left an intact database with its committed intervals" $bad -eq 0
echo "lost per kill: mean $((lost_sum / i)) ms, max $lost_max ms (interval 1000 ms)"
"$O/mmhitmd" --foreground --db "$DB" --interval 1s --instance "$INST" --duration 2s 2>"$WORK/last.log"
check "a last start after the kills records and stops cleanly" $? -eq 0
check "no instance left" "$(instances_left "$INST")" -eq 0
check "no overlapping intervals" "$(overlaps)" -eq 0
check "one boot row" "$(q 'SELECT count(*) FROM boots')" -eq 1
check_str "integrity" "$(q 'PRAGMA integrity_check')" ok
finish
