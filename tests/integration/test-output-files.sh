#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm report's output files: --json to a device node (a private one made
# with mknod, and /dev/null) leaves a device node (as root the old rename
# replaced it with a regular file), --json to a FIFO reaches its reader and
# leaves a FIFO, a regular file is replaced whole with nothing left beside
# it, and a symlinked --output-dir is refused unless --follow-symlinks.
# --json alone is stdout, and which word after it is the old --json FILE:
# a database there is read, never written over; --output FILE's name never
# chooses the format and cannot say another.

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
check "--json -: on stdout" "$(report --json - 2>/dev/null | grep -c mmhitm_report)" -eq 1

# --json alone prints to stdout; the word after it is the old form's FILE
# only when it cannot be a database: a database there is read, never
# written over (each case: what stdout starts with, what stderr says).
cp "$DB" "$TMP/db/noext"	# SQLite without the .db a name usually has
sum=$(cat "$DB" "$TMP/db/noext" | md5sum)
json_case() {	# DESCRIPTION WANT_STDOUT_START WANT_STDERR ARGS...
	what=$1 want_out=$2 want_err=$3; shift 3
	"$MMHITM" report --no-progress "$@" >"$TMP/case.out" 2>"$TMP/case.err"
	check_str "$what: stdout" "$(head -c 16 "$TMP/case.out")" "$want_out"
	check_str "$what: stderr" "$(cat "$TMP/case.err")" "$want_err"
}
json_case "--json at the end" '{"mmhitm_report"' "" --db "$DB" --json
json_case "--json DB.db reads it" '{"mmhitm_report"' "" --json "$DB"
json_case "--json SQLITE-FILE reads it" '{"mmhitm_report"' "" --json "$TMP/db/noext"
json_case "--json 'GLOB' reads it" '{"mmhitm_report"' "" --json "$TMP/db/*.db"
json_case "--json -- DB" '{"mmhitm_report"' "" --json -- "$DB"
json_case "--json --option" '{"mmhitm_report"' "" --json --db "$DB"
json_case "--json -" '{"mmhitm_report"' "mmhitm: note: 'mmhitm report --json -' is now 'mmhitm report --json'" \
	--db "$DB" --json -
json_case "--json FILE" "P1 insufficient " "mmhitm: note: 'mmhitm report --json $TMP/out/new' is now 'mmhitm report --json --output $TMP/out/new' (--json alone prints to stdout)" \
	--db "$DB" --json "$TMP/out/new"
check "--json FILE: JSON written" "$(grep -c mmhitm_report "$TMP/out/new")" -eq 1
check_str "--json FILE: the summary names it" "$(tail -n 1 "$TMP/case.out")" "JSON: $TMP/out/new"
json_case "--json=FILE" "" "mmhitm: note: 'mmhitm report --json $TMP/out/eq.json' is now 'mmhitm report --json --output $TMP/out/eq.json' (--json alone prints to stdout)" \
	--db "$DB" --quiet --json="$TMP/out/eq.json"
check "--json=FILE: JSON written" "$(grep -c mmhitm_report "$TMP/out/eq.json")" -eq 1
json_case "--json=DB refused" "" "mmhitm: --json=$DB: a database is not written over (--json alone prints the report on stdout)" \
	--json="$DB"
json_case "--json=SQLITE-FILE refused" "" "mmhitm: --json=$TMP/db/noext: a database is not written over (--json alone prints the report on stdout)" \
	--json="$TMP/db/noext"
check_str "no database was written over" "$(cat "$DB" "$TMP/db/noext" | md5sum)" "$sum"
rm -f "$TMP/out/new" "$TMP/out/eq.json"

# --output FILE: the flags choose the format, a name for another is refused
json_case "--output FILE --json" "P1 insufficient " "" --db "$DB" --json --output "$TMP/out/o.json"
check "--output FILE --json: JSON written" "$(grep -c mmhitm_report "$TMP/out/o.json")" -eq 1
json_case "--output FILE.json without --json" "" "mmhitm: --output $TMP/out/x.json: the name says JSON, but the output is the summary: --json chooses JSON (--output only says where it goes)" \
	--db "$DB" --output "$TMP/out/x.json"
json_case "--output FILE.html" "" "mmhitm: --output $TMP/out/x.html: the HTML report is written with --html $TMP/out/x.html" \
	--db "$DB" --json --output "$TMP/out/x.html"
json_case "--output FILE.txt" "" "" --db "$DB" --output "$TMP/out/s.txt"
check "--output FILE: the summary in it" "$(grep -c '^P1 insufficient' "$TMP/out/s.txt")" -eq 1
rm -f "$TMP/out/o.json" "$TMP/out/s.txt"
check_str "refused: nothing written" "$(ls -A "$TMP/out" | grep -c '^x\.')" "0"

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
