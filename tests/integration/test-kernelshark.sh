#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# KernelShark reads the flight recorder's snapshots: during a window, N
# known forks, then SIGUSR1; the snapshot is loaded through libkshark,
# KernelShark's own loading library (kshark-count.c: kshark_open, a stream
# per instance buffer, kshark_load_all_entries), and the number of entries
# per event must equal trace-cmd report's, with all N forks among them.
# The bundled real trace.dat (top-level buffer, 4 CPUs) is checked the
# same way. Then the KernelShark GUI itself opens the snapshot on Qt's
# offscreen platform and must still be up, without an error on its
# output, when the hang guard ends it (it has no batch mode to report
# what it loaded: the counts above are the proof).

. "$(dirname "$0")/lib.sh"

require_root
require_tracefs
command -v trace-cmd >/dev/null 2>&1 || skip "trace-cmd is not installed (Debian: trace-cmd)"
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
pkg-config --exists libkshark 2>/dev/null ||
	skip "libkshark-dev (and libjson-c-dev) not installed: KernelShark's library has no headers here"
[ -e "$TRACING/events/sched/sched_process_fork/enable" ] || skip "kernel lacks sched_process_fork"
TMP=$(mktemp -d /tmp/mmhitm-test-kshark-XXXXXX)
INST=mmhitm-test-kshark-$$
N=10
D=
trap '[ -n "$D" ] && kill $D 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
FLIGHT_EN=$TRACING/instances/$INST-flight/events/sched/sched_process_fork/enable

${CC:-cc} -O1 -o "$TMP/kshark-count" "$TOP/tests/integration/kshark-count.c" \
	$(pkg-config --cflags --libs libkshark) 2>"$TMP/cc.err" ||
	{ fail "kshark-count does not build against libkshark: $(cat "$TMP/cc.err")"; finish; }

# per_event_report FILE: "COUNT system/event" per event, as trace-cmd report prints them
per_event_report() {
	trace-cmd report "$1" 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
		e = $(i + 1); sub(/:$/, "", e); print e; break } }' | sort | uniq -c |
		awk '{ print $1, $2 }' | sort -k2
}
# per_event_kshark FILE: the same from libkshark ("system/event" names: the event part)
per_event_kshark() {
	"$TMP/kshark-count" "$1" | grep -v '^streams \|^total ' | awk '{ n = $2; sub(/.*\//, "", n); print $1, n }' |
		sort -k2
}
compare() {
	name=$1 file=$2
	per_event_report "$file" >"$TMP/$name.report"
	per_event_kshark "$file" >"$TMP/$name.kshark" 2>"$TMP/$name.kerr" ||
		fail "$name: kshark-count failed: $(cat "$TMP/$name.kerr")"
	check "$name: events trace-cmd report prints" "$(awk '{ s += $1 } END { print s + 0 }' "$TMP/$name.report")" -gt 0
	if diff "$TMP/$name.report" "$TMP/$name.kshark" >"$TMP/$name.diff"; then
		pass "$name: libkshark loads as many entries per event as trace-cmd report prints ($(tr '\n' ' ' <"$TMP/$name.kshark"))"
	else
		fail "$name: per-event counts differ (trace-cmd report < > libkshark): $(cat "$TMP/$name.diff")"
	fi
}

# --- a snapshot with N known forks ------------------------------------------------
DB=$TMP/k.db
"$O/mmhitmd" --foreground --db "$DB" --instance "$INST" --interval 10s --window 5s --snapshots yes \
	--window-slices 1 --overhead-budget 100% --analyze no --duration 90s --snapshot-dir "$TMP/snap" \
	--spike-factor 0 --quiet-cpu 0 2>"$TMP/d.log" &
D=$!
wait_until 90 sh -c "grep -q 'Recording into' '$TMP/d.log'" || { fail "daemon did not start: $(cat "$TMP/d.log")"; finish; }
tries=0 done=0
while [ $tries -lt 4 ] && [ $done = 0 ]; do
	tries=$((tries + 1))
	wait_until 25 sh -c "[ \"\$(cat '$FLIGHT_EN' 2>/dev/null)\" = 1 ]" || continue
	i=0
	while [ $i -lt $N ]; do
		/bin/true &
		wait $!
		i=$((i + 1))
	done
	[ "$(cat "$FLIGHT_EN" 2>/dev/null)" = 1 ] || { sleep 1; continue; }
	kill -USR1 "$D"
	done=1
done
check "a window caught the forks (tries)" "$done" -eq 1
wait_until 30 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM snapshots' 2>/dev/null)\" -ge 1 ]" ||
	fail "no snapshot listed: $(grep -i snapshot "$TMP/d.log")"
kill "$D"
wait "$D"
D=
SNAP=$(q "SELECT path FROM snapshots ORDER BY snapshot_id LIMIT 1")
compare snapshot "$SNAP"
check "snapshot: the N forks among KernelShark's entries" \
	"$(awk '$2 == "sched_process_fork" { print $1 }' "$TMP/snapshot.kshark")" -ge $N
# The daemon writes the flight ring as the file's own (top) buffer, one
# stream; trace-cmd extract -B wrote it as an instance buffer beside an
# empty top one.
check "snapshot: its events are the file's own buffer (one stream)" \
	"$("$TMP/kshark-count" "$SNAP" | awk '/^streams / { print $2 }')" -eq 1

# --- the real trace.dat fixture: the top-level buffer, 4 CPUs ------------------------
compare fixture "$(fixture tracedat_elainecole_sched_switch_4cpu.trace.dat)"

# --- the GUI, offscreen -------------------------------------------------------------
if command -v kernelshark >/dev/null 2>&1; then
	XDG_RUNTIME_DIR=$TMP HOME=$TMP QT_QPA_PLATFORM=offscreen timeout 10 kernelshark "$SNAP" \
		>"$TMP/gui.out" 2>&1
	rc=$?
	check "kernelshark (offscreen) still up at the hang guard (124: timeout ended it)" "$rc" -eq 124
	check "kernelshark printed no error" \
		"$(grep -ci 'error\|failed\|cannot\|segmentation' "$TMP/gui.out")" -eq 0
else
	echo "note: kernelshark (the GUI) is not installed; its library was checked above"
fi
finish
