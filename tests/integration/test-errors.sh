#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One error contract (mmhitm(1), mmhitmd(8): EXIT STATUS): a database that
# cannot be used is said once, in the user's words, by the program that
# decides, with an exit status that tells what kind of failure it was;
# output that cannot be written fails the command. Each case: the exit
# status, the one line, and nothing else on stderr.

. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/mmhitm-test-errors.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
M=$O/mmhitm D=$O/mmhitmd

# fails NAME WANT_RC WANT_LINE CMD...: exactly one line on stderr, WANT_LINE.
fails() {
	name=$1 want_rc=$2 line=$3; shift 3
	"$@" >"$WORK/out" 2>"$WORK/err"; rc=$?
	check "$name: exit status" "$rc" -eq "$want_rc"
	check_str "$name: says" "$(cat "$WORK/err")" "$line"
}

echo "not a database" >"$WORK/text.db"
sqlite3 "$WORK/other.db" 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
fixture=$(fixture perfdata_quipper_weight_struct_memloads.perf.data)
"$M" import --db "$WORK/ok.db" "$fixture" >/dev/null 2>&1 || fail "import a fixture"
"$M" analyze --db "$WORK/ok.db" >/dev/null 2>&1 || fail "analyze it"
chmod 755 "$WORK"

fails "a directory as --db" 66 "mmhitm: Cannot open the database $WORK: is a directory" \
	"$M" status --db "$WORK"
fails "a text file as --db" 65 \
	"mmhitm: Cannot open the database $WORK/text.db: is not an mmhitm database (not SQLite)" \
	"$M" status --db "$WORK/text.db"
fails "someone else's SQLite" 65 \
	"mmhitm: Cannot open the database $WORK/other.db: is not an mmhitm database (no application_id)" \
	"$M" top --db "$WORK/other.db"
fails "report of a missing file" 66 \
	"mmhitm: Cannot open the database $WORK/none.db: no such file (mmhitmd creates it when it first runs: systemctl status mmhitmd; else pass --db PATH or set MMHITM_DB)" \
	"$M" report "$WORK/none.db"
fails "analyze of a missing file" 66 "mmhitm: Cannot open the database $WORK/none.db: no such file" \
	"$M" analyze --db "$WORK/none.db"
fails "mmhitmd on a text file" 65 \
	"mmhitmd: Cannot open the database $WORK/text.db: is not an mmhitm database (not SQLite)" \
	"$D" --foreground --db "$WORK/text.db" --instance "mmhitm-test-errors-$$" --duration 1s
check_str "mmhitmd put nothing beside someone else's file" "$(ls "$WORK" | grep -c lock)" 0
fails "mmhitmd on a directory" 66 "mmhitmd: Cannot open the database $WORK: is a directory" \
	"$D" --foreground --db "$WORK" --instance "mmhitm-test-errors-$$" --duration 1s

# A database schema newer than this binary reads.
cp "$WORK/ok.db" "$WORK/new.db"
sqlite3 "$WORK/new.db" 'PRAGMA user_version = 999'
fails "a newer schema" 65 \
	"mmhitm: Cannot open the database $WORK/new.db: has schema version 999, newer than this mmhitm reads ($(sqlite3 "$WORK/ok.db" 'PRAGMA user_version')): upgrade mmhitm" \
	"$M" status --db "$WORK/new.db"

# A damaged database: the open reads only the schema and succeeds, a read
# meets a page of garbage (the boots table's). A failed statement says
# nothing above debug; the command says it once, in the user's words, not
# SQLite's, and exits 65, a data error.
cp "$WORK/ok.db" "$WORK/bad.db"
page=$(sqlite3 "$WORK/bad.db" 'PRAGMA page_size')
root=$(sqlite3 "$WORK/bad.db" "SELECT rootpage FROM sqlite_master WHERE name = 'boots'")
head -c "$page" /dev/zero | tr '\0' '\377' |
	dd of="$WORK/bad.db" bs="$page" seek=$((root - 1)) conv=notrunc 2>/dev/null
for c in analyze status top report; do
	if [ $c = report ]; then set -- "$WORK/bad.db"; else set -- --db "$WORK/bad.db"; fi
	# top lists every line (and so reads their boots), not only those with HITM
	[ $c = top ] && set -- "$@" --all
	fails "$c of a damaged database" 65 "mmhitm: $c failed: the database file is damaged" \
		"$M" $c "$@"
	check "$c of a damaged database: no SQLite words" \
		"$(grep -ciE 'malformed|sql|disk image' "$WORK/err")" -eq 0
done
# One of several: the command goes on, so it says which failed.
fails "status of a damaged database among others" 65 \
	"mmhitm: status failed on $WORK/bad.db: the database file is damaged" \
	"$M" status --db "$WORK/ok.db" --db "$WORK/bad.db"
check "status of the others is printed" "$(grep -c "$WORK/ok.db" "$WORK/out")" -gt 0

if id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
	fails "analyze by a user who may only read" 66 \
		"mmhitm: Cannot open the database $WORK/ok.db: permission denied: it is written to, so run as root or give the group write access" \
		runuser -u nobody -- "$M" analyze --db "$WORK/ok.db"
	chmod 600 "$WORK/ok.db"
	fails "status by a user who may not read" 66 \
		"mmhitm: Cannot open the database $WORK/ok.db: permission denied: run as root or give the group read access" \
		runuser -u nobody -- "$M" status --db "$WORK/ok.db"
	fails "report by a user who may not read" 66 \
		"mmhitm: Cannot open the database $WORK/ok.db: permission denied: run as root or give the group read access" \
		runuser -u nobody -- "$M" report "$WORK/ok.db"
	chmod 644 "$WORK/ok.db"
else
	echo "  (no user nobody or runuser: the permission cases are not run)"
fi

# A path table that does not parse stops each program in main(), with the
# line that is wrong (every program would otherwise be quietly wrong).
printf 'path P9\n\ttitle a path without the rest\n' >"$WORK/paths.conf"
for p in mmhitm mmhitmd mmhitm-load; do
	fails "$p with a path table that does not parse" 78 \
		"$p: $WORK/paths.conf: path P9 lacks a unit" \
		env MMHITM_PATHS="$WORK/paths.conf" "$O/$p" --help
done

# Output nobody can write: a full disk under stdout.
for c in "status" "status --json" "status --csv" "top" "analyze" "report --json" "report --csv"; do
	fails "$c > /dev/full" 74 "mmhitm: Failed to write the output: No space left on device" \
		sh -c "\"$M\" $c --db \"$WORK/ok.db\" >/dev/full"
done
fails "report > /dev/full" 74 "mmhitm: Failed to write the output: No space left on device" \
	sh -c "\"$M\" report --output-dir \"$WORK/r\" \"$WORK/ok.db\" >/dev/full"
"$M" status --db "$WORK/ok.db" >/dev/null 2>&1
check "the same status to /dev/null succeeds" "$?" -eq 0

# A full disk under the database. A statement that fails says nothing
# above debug; the command says it once, in the user's words.
MNT=$WORK/small
mkdir "$MNT"
if mount -t tmpfs -o size=2m mmhitm-test-errors "$MNT" 2>/dev/null; then
	trap 'kill $READER 2>/dev/null; umount "$MNT" 2>/dev/null; rm -rf "$WORK"' EXIT
	"$M" import --db "$MNT/full.db" "$(fixture tracedat_elainecole_sched_switch_4cpu.trace.dat)" \
		>/dev/null 2>&1 || fail "import the trace.dat fixture"
	dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null
	fails "open on a full disk" 74 "mmhitm: Cannot open the database $MNT/full.db: the disk is full" \
		"$M" analyze --db "$MNT/full.db"
	# A reader keeps the -wal and -shm files: the open works, the first write fails.
	# Only once its query has answered: -shm exists from the reader's open,
	# but is sized by its first read, and a disk filled before that failed
	# the reader ("disk I/O error"), whose exit took both files away (then
	# analyze could not even open: 1 run in 4 beside load).
	# Its stdin is a fifo this shell holds open, so it waits there for
	# nothing but its kill (a `sleep 60 |` before it made `wait` wait out
	# the sleep: dash waits for the whole pipeline).
	rm "$MNT/filler"
	mkfifo "$WORK/hold"
	sqlite3 -cmd 'SELECT count(*) FROM intervals;' "$MNT/full.db" <"$WORK/hold" >"$WORK/reader.out" &
	READER=$!
	exec 9>"$WORK/hold"
	wait_until 10 test -s "$WORK/reader.out" ||
		fail "the reader answered: $(cat "$WORK/reader.out")"
	dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null
	fails "analyze on a full disk" 74 "mmhitm: analyze failed: the disk is full" \
		"$M" analyze --db "$MNT/full.db"
	kill $READER
	wait $READER 2>/dev/null
	exec 9>&-
	rm "$MNT/filler"
	"$M" analyze --db "$MNT/full.db" >/dev/null 2>&1
	check "analyze once space returns" "$?" -eq 0
	umount "$MNT"
else
	echo "  (cannot mount a small tmpfs: the full-disk cases are not run)"
fi

finish
