#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm report's output files: --json to a device node (a private one made
# with mknod, and /dev/null) leaves a device node (as root the old rename
# replaced it with a regular file), --json to a FIFO reaches its reader and
# leaves a FIFO, a regular file is replaced whole with nothing left beside
# it, and a symlinked --output-dir is refused unless --follow-symlinks.

. "$(dirname "$0")/lib.sh"

MMHITM=$O/mmhitm
FIXTURE=tests/fixtures/real/perfdata_numatop_perf_mem_record_loads.perf.data
[ -f "$FIXTURE" ] || FIXTURE=tests/fixtures/corrupt/c2c-sample-time-early.perf.data
TMP=$(mktemp -d /tmp/mmhitm-test-output-files-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
DB=$TMP/db/m.db
mkdir -p "$TMP/db" "$TMP/out"
"$MMHITM" import "$FIXTURE" --db "$DB" >/dev/null 2>&1 || fail "import failed"
report() { "$MMHITM" report --db "$DB" --quiet --no-progress "$@"; }

# a regular file: replaced, nothing left beside it
report --json "$TMP/out/r.json" || fail "report --json FILE failed"
report --json "$TMP/out/r.json" || fail "report --json FILE (again) failed"
check "regular file: JSON written" "$(grep -c mmhitm_report "$TMP/out/r.json")" -eq 1
check_str "regular file: nothing beside it" "$(ls -A "$TMP/out")" "r.json"

# a FIFO: its reader gets the report, it stays a FIFO
mkfifo "$TMP/out/fifo"
# hang guards: a writer that renames over the FIFO leaves the reader waiting
timeout 60 cat "$TMP/out/fifo" >"$TMP/from-fifo" &
reader=$!
timeout 60 "$MMHITM" report --db "$DB" --quiet --no-progress --json "$TMP/out/fifo" ||
	fail "report --json FIFO failed"
wait "$reader"
check "FIFO: the reader got the JSON" "$(grep -c mmhitm_report "$TMP/from-fifo")" -eq 1
[ -p "$TMP/out/fifo" ] && pass "FIFO: still a FIFO" || fail "FIFO: replaced by $(stat -c %F "$TMP/out/fifo")"
check_str "FIFO: nothing beside it" "$(ls -A "$TMP/out" | tr '\n' ' ')" "fifo r.json "

# device nodes, as root (a rename over one succeeds only as root)
if [ "$(id -u)" = 0 ]; then
	mknod "$TMP/out/null" c 1 3
	report --json "$TMP/out/null" || fail "report --json DEVICE failed"
	check_str "device: still a character device" "$(stat -c %F "$TMP/out/null")" "character special file"
	# the real one only once a private node survived: a broken build must
	# not replace this machine's /dev/null
	if [ -c "$TMP/out/null" ]; then
		report --json /dev/null --html /dev/null || fail "report --json /dev/null failed"
	fi
	check_str "/dev/null: still a character device" "$(stat -c %F /dev/null)" "character special file"
	check_str "/dev/null: still 1:3" "$(stat -c %t:%T /dev/null)" "1:3"
else
	echo "note: not root: device nodes not tried"
fi

# "-" is stdout
check "--json -: on stdout" "$(report --json - | grep -c mmhitm_report)" -eq 1

# a symlinked --output-dir
mkdir "$TMP/real-dir"
ln -s "$TMP/real-dir" "$TMP/link-dir"
if report --output-dir "$TMP/link-dir" 2>"$TMP/err"; then
	fail "symlinked --output-dir accepted"
else
	pass "symlinked --output-dir refused: $(cat "$TMP/err")"
fi
check_str "refused: nothing written through it" "$(ls -A "$TMP/real-dir")" ""
report --output-dir "$TMP/link-dir" --follow-symlinks || fail "--follow-symlinks refused"
check "--follow-symlinks: report written" "$(ls "$TMP/real-dir" | grep -c '^report-.*\.json$')" -eq 1
report --output-dir "$TMP/plain-dir" || fail "a plain --output-dir failed"
check "plain --output-dir: latest.json" "$(grep -c mmhitm_report "$TMP/plain-dir/latest.json")" -eq 1

finish
