#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# --check-config names bad lines and exits 78; SIGHUP applies a new
# interval without losing the current one; a bad file on SIGHUP keeps the
# running configuration.

. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/mmhitm-test-reload.XXXXXX)
trap 'kill $DPID 2>/dev/null; rm -rf "$WORK"' EXIT
CONF=$WORK/mmhitm.conf

printf 'interval = 2s\nmax_db_size = huge\nbogus = 1\n' >"$CONF"
"$O/mmhitmd" --check-config -c "$CONF" 2>"$WORK/check.log"
check "bad config: exit 78" $? -eq 78
check "names line 2" "$(grep -c "$CONF:2: \"huge\" is not a size" "$WORK/check.log")" -eq 1
check "names line 3" "$(grep -c "$CONF:3: unknown option \"bogus\"" "$WORK/check.log")" -eq 1
"$O/mmhitmd" --check-config -c "$WORK/missing.conf" 2>/dev/null
check "a named config that is missing: exit 78" $? -eq 78
"$O/mmhitmd" --check-config -c "$CONF" --max-db-size 1G --bogus 2>/dev/null
check "unknown flag is a usage error" $? -eq 2
printf 'interval = 2s\n' >"$CONF"
check "good config: exit 0" "$("$O/mmhitmd" --check-config -c "$CONF" >/dev/null 2>&1; echo $?)" -eq 0
check_str "good config: says which file" "$("$O/mmhitmd" --check-config -c "$CONF" 2>&1)" \
	"$CONF: configuration OK"
# No file at the default path: it says it read none, not "OK" for it.
def=$("$O/mmhitmd" --help | sed -n 's/.*(default \(\/[^)]*mmhitm\.conf\)).*/\1/p' | head -1)
if [ -n "$def" ] && [ ! -e "$def" ]; then
	check_str "no default file: says so" "$("$O/mmhitmd" --check-config --interval 7s 2>&1)" \
		"no configuration file at $def: the defaults and the command line are valid"
else
	echo "note: the default configuration ${def:-(not in --help)} exists here: its absence is not tested"
fi
check "a flag wins over the file" \
	"$("$O/mmhitmd" --print-config -c "$CONF" --interval 7s | sed -n 's/^interval = //p')" = 7s

require_root
require_tracefs
DB=$WORK/t.db
"$O/mmhitmd" --foreground -c "$CONF" --db "$DB" --drain-interval 100ms --instance mmhitm-test-reload-$$ \
	2>"$WORK/daemon.log" &
DPID=$!
wait_until 20 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0) -ge 2 ]" ||
	{ cat "$WORK/daemon.log"; fail "no intervals"; finish; }

# Mid-interval: shorter intervals from now on.
printf 'interval = 1s\n' >"$CONF"
sleep 0.5
kill -HUP $DPID
n=$(q 'SELECT count(*) FROM intervals')
wait_until 20 sh -c "[ \$(sqlite3 '$DB' 'SELECT count(*) FROM intervals') -ge $((n + 4)) ]"
# A broken file: the daemon keeps going with what it has.
printf 'interval = never\n' >"$CONF"
kill -HUP $DPID
# The bad file read and refused (or the daemon gone, which the check says).
wait_until 20 grep -q 'Keeping the running configuration' "$WORK/daemon.log"
check "still running after a bad reload" "$(kill -0 $DPID 2>/dev/null && echo yes)" = yes
kill -TERM $DPID
wait $DPID
check "clean exit" $? -eq 0

check "reload logged" "$(grep -c 'Reloading configuration' "$WORK/daemon.log")" -eq 2
check "bad reload kept the running configuration" "$(grep -c 'Keeping the running configuration' "$WORK/daemon.log")" -eq 1
check "no interval lost: contiguous across the reloads" \
	"$(q 'SELECT count(*) FROM intervals a JOIN intervals b ON b.interval_id = a.interval_id + 1 WHERE b.start_ns != a.end_ns')" -eq 0
# Bounds on the clock's 2 s boundaries, each as late as the main loop woke.
check "2 s intervals before the reload" \
	"$(q 'SELECT count(*) FROM intervals WHERE interval_id IN (2, 3) AND end_ns - start_ns BETWEEN 1500000000 AND 2500000000')" -ge 1
check "1 s intervals after it" \
	"$(q "SELECT count(*) FROM intervals WHERE interval_id > $((n + 1)) AND partial = 0 AND end_ns - start_ns < 1500000000")" -ge 2
finish
