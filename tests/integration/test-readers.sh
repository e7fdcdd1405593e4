#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Who may open which database, and what opening it changes:
# - another program's SQLite file is refused by every program ("not an
#   mmhitm database") and left byte for byte as it was, no journal made;
# - a database from before application_id is read, and the next writer
#   gives it the id;
# - status shows a hostname with an escape sequence in it with '?' for the
#   control characters;
# - the readers (status, top, report) write nothing: the file's bytes stay,
#   an old schema is not migrated;
# - as an unprivileged user (root only: setpriv to nobody), a root-owned
#   database in a root-owned directory is readable by status, top and
#   report, with nothing created there; with the daemon's lock held and its
#   WAL open they see the WAL's rows; without -shm and no daemon they fall
#   back to an immutable open, and with the lock held they refuse that.

. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
MMHITM=$O/mmhitm
FIXTURE=tests/fixtures/real/perfdata_numatop_perf_mem_record_loads.perf.data
[ -f "$FIXTURE" ] || FIXTURE=tests/fixtures/corrupt/c2c-sample-time-early.perf.data
TMP=$(mktemp -d /tmp/mmhitm-test-readers-XXXXXX)
chmod 0755 "$TMP"
trap 'kill $writer 2>/dev/null; rm -rf "$TMP"' EXIT
writer=

state() {	# FILE: its bytes and which of its side files exist
	echo "$(md5sum < "$1" | cut -d' ' -f1) $(cd "$(dirname "$1")" && ls -a | tr '\n' ' ')"
}

# --- a foreign SQLite file ---------------------------------------------------
F=$TMP/foreign/other.db
mkdir -p "$TMP/foreign"
sqlite3 "$F" "CREATE TABLE settings(k TEXT, v TEXT); INSERT INTO settings VALUES ('a', 'b');"
before=$(state "$F")
expect_refused() {	# WHAT COMMAND...
	what=$1; shift
	if "$@" >"$TMP/out" 2>"$TMP/err"; then
		fail "$what: accepted a foreign database"
	elif grep -q "not an mmhitm database" "$TMP/err"; then
		pass "$what: $(head -1 "$TMP/err")"
	else
		fail "$what: refused, but not as a foreign database: $(cat "$TMP/err")"
	fi
	check_str "$what: file and directory unchanged" "$(state "$F")" "$before"
}
expect_refused "status" "$MMHITM" status --db "$F"
expect_refused "top" "$MMHITM" top --db "$F"
expect_refused "report" "$MMHITM" report --db "$F" --json "$TMP/r.json"
expect_refused "analyze" "$MMHITM" analyze --db "$F"
expect_refused "import" "$MMHITM" import "$FIXTURE" --db "$F"
if [ "$(id -u)" = 0 ]; then
	# refused before any tracefs instance is made
	expect_refused "mmhitmd" "$O/mmhitmd" --foreground --db "$F" --instance mmhitm-test-readers \
		--interval 1s --duration 2s
else
	echo "note: not root: mmhitmd on a foreign database not tried"
fi

# --- a database from before application_id ------------------------------------
DB=$TMP/own/m.db
mkdir -p "$TMP/own"
"$MMHITM" import "$FIXTURE" --db "$DB" --hostname readers-host >/dev/null 2>&1 ||
	fail "import into a new database failed"
check "new database: application_id 'MMHT'" "$(q "PRAGMA application_id")" -eq 1296910420
q "PRAGMA application_id = 0" >/dev/null
before=$(state "$DB")
if "$MMHITM" status --db "$DB" >"$TMP/out" 2>"$TMP/err"; then
	check "status of a database without the id" "$(grep -c readers-host "$TMP/out")" -ge 1
else
	fail "status of a database without the id: $(cat "$TMP/err")"
fi
check_str "status wrote nothing" "$(state "$DB" | cut -d' ' -f1)" "$(echo "$before" | cut -d' ' -f1)"
check "status left the id alone" "$(q "PRAGMA application_id")" -eq 0
"$MMHITM" analyze --db "$DB" >/dev/null 2>&1 || fail "analyze failed: a writer"
check "analyze (a writer) set the id" "$(q "PRAGMA application_id")" -eq 1296910420

# --- readers never migrate --------------------------------------------------
cp "$DB" "$TMP/own/old.db"
DB=$TMP/own/old.db
q "PRAGMA user_version = 1" >/dev/null
before=$(state "$DB")
"$MMHITM" status --db "$DB" >/dev/null 2>"$TMP/err" && fail "status read an old schema it cannot"
check "status: old schema not migrated" "$(q "PRAGMA user_version")" -eq 1
check_str "status: old database unchanged" "$(state "$DB")" "$before"

# --- strings from a host reach the terminal made safe -----------------------
# (an imported perf.data names its host and kernel; here the overrides do)
DB=$TMP/own/esc.db
esc=$(printf 'host\033]2;owned\007\033[2J')
"$MMHITM" import "$FIXTURE" --db "$DB" --hostname "$esc" --kernel-release "$(printf '6.1\033[31m')" \
	>/dev/null 2>&1 || fail "import with an escape sequence in the hostname failed"
"$MMHITM" status --db "$DB" >"$TMP/out" 2>&1 || fail "status failed: $(cat "$TMP/out")"
check "status: no ESC or BEL on the terminal" "$(tr -cd '\033\007' <"$TMP/out" | wc -c)" -eq 0
check "status: the host shown with '?' for them" "$(grep -c 'host?\]2;owned??\[2J' "$TMP/out")" -eq 1

# --- an unprivileged reader --------------------------------------------------
[ "$(id -u)" = 0 ] || { echo "note: not root: the unprivileged reader is not tried"; finish; }
command -v setpriv >/dev/null 2>&1 || { echo "note: no setpriv"; finish; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
RO=$TMP/ro
mkdir -m 0755 "$RO"
cp "$TMP/own/m.db" "$RO/m.db"
chmod 0644 "$RO/m.db"
DB=$RO/m.db
before=$(state "$DB")
for cmd in status top report; do
	case $cmd in
	report) args="--json -" ;;
	*) args= ;;
	esac
	# shellcheck disable=SC2086
	if as_nobody "$MMHITM" $cmd --db "$DB" $args >"$TMP/out" 2>"$TMP/err"; then
		pass "nobody: $cmd of a root-owned database: $(head -1 "$TMP/out" | cut -c1-70)"
	else
		fail "nobody: $cmd of a root-owned database: $(cat "$TMP/err")"
	fi
	check_str "nobody: $cmd: file and directory unchanged" "$(state "$DB")" "$before"
done
check "nobody: status names the host" "$(as_nobody "$MMHITM" status --db "$DB" | grep -c readers-host)" -ge 1

# The daemon's situation: it holds <db>.lock and has the WAL open with rows
# not yet checkpointed; a reader must see them (a plain mode=ro open).
rm -f "$TMP/go"
python3 - "$DB" "$TMP/go" <<'PY' &
import fcntl, os, sqlite3, sys, time
db, go = sys.argv[1], sys.argv[2]
lock = open(db + ".lock", "w")
fcntl.flock(lock, fcntl.LOCK_EX)
c = sqlite3.connect(db)
c.execute("PRAGMA wal_autocheckpoint = 0")
c.execute("UPDATE hosts SET hostname = 'only-in-the-wal' WHERE hostname = 'readers-host'")
c.commit()
open(go, "w").close()
time.sleep(120)
PY
writer=$!
wait_until 20 test -e "$TMP/go" || fail "the writer did not start"
if as_nobody "$MMHITM" status --db "$DB" >"$TMP/out" 2>"$TMP/err"; then
	check "nobody: status while a writer holds the lock sees the WAL's rows" \
		"$(grep -c 'only-in-the-wal' "$TMP/out")" -eq 1
else
	fail "nobody: status while a writer holds the lock: $(cat "$TMP/err")"
fi
kill "$writer"; wait "$writer" 2>/dev/null; writer=

# A -wal without -shm in a directory the reader cannot write: SQLite cannot
# build the WAL index, so without a daemon the reader opens it immutable...
rm -f "$DB-shm"
[ -e "$DB-wal" ] || fail "no -wal left to test with"
before=$(state "$DB")
if as_nobody "$MMHITM" status --db "$DB" >"$TMP/out" 2>"$TMP/err"; then
	pass "nobody: -wal without -shm, no daemon: read immutable"
else
	fail "nobody: -wal without -shm, no daemon: $(cat "$TMP/err")"
fi
check_str "nobody: immutable read changed nothing" "$(state "$DB")" "$before"
# ... and with the daemon's lock held it refuses (immutable would read a
# file being written)
flock "$DB.lock" sh -c "setpriv --reuid=nobody --regid=nogroup --clear-groups \
	'$MMHITM' status --db '$DB' >'$TMP/out' 2>'$TMP/err'" &&
	fail "nobody: read immutable while the lock is held"
check "nobody: refusal names the lock" "$(grep -c 'while mmhitmd writes it' "$TMP/err")" -eq 1

finish
