#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm top on the bundled real recordings (loads sampled by perf mem and
# perf c2c, no HITM among them), imported without their kernels' BTF or
# symbols: lines without HITM are left out unless --all, and the empty
# table says why in text, JSON and (on stderr) CSV; with --all, the text
# fits $COLUMNS (every line, 80 or 120 columns, no column cut inside the
# table's cells), each reason an offset is unresolved is printed once as
# a note its rows refer to, whole and wrapped at spaces; piped with no
# COLUMNS, perf c2c's full layout.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/mmhitm-test-top.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
M=$O/mmhitm
DB=$WORK/t.db
for f in perfdata_numatop_perf_mem_record_loads perfdata_quipper_weight_struct_memloads; do
	"$M" import "$(fixture $f.perf.data)" --db "$DB" >/dev/null 2>"$WORK/import.err" ||
		fail "import $f: $(tail -2 "$WORK/import.err")"
done
"$M" analyze --db "$DB" >/dev/null 2>&1 || fail "analyze"
lines=$(sqlite3 "$DB" "SELECT count(DISTINCT a.line_addr) FROM line_attribution a")
hitm=$(sqlite3 "$DB" "SELECT sum(lcl_hitm + rmt_hitm + lcl_peer + rmt_peer) FROM mem_lines")
check "the recordings give lines" "$lines" -ge 5
check_str "... none with HITM" "$hitm" 0
unset COLUMNS

# --- no line with HITM: each format says so --------------------------------
"$M" top --db "$DB" >"$WORK/text" 2>&1
check "text: exit 0" $? -eq 0
grep -q "^# no line to show:" "$WORK/text" && grep -q "none of the $lines lines sampled in this range had HITM (--all lists them)" "$WORK/text" &&
	pass "text: says no line had HITM, and --all" || fail "text: $(cat "$WORK/text")"
check "text: no table row" "$(grep -c '^  *[0-9]*  0x' "$WORK/text")" -eq 0
"$M" top --db "$DB" --json >"$WORK/json" 2>&1
check_str "json: no lines, and why" \
	"$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["databases"][0]; print(len(d["lines"]), d["empty_because"])' "$WORK/json")" \
	"0 none of the $lines lines sampled in this range had HITM (--all lists them)"
"$M" top --db "$DB" --csv >"$WORK/csv" 2>"$WORK/csv.err"
check "csv: the header only" "$(wc -l <"$WORK/csv")" -eq 1
grep -q "No lines: none of the $lines lines sampled" "$WORK/csv.err" && pass "csv: the reason on stderr" ||
	fail "csv: no reason: '$(cat "$WORK/csv.err")'"

# --- --all: every line, fitted to the terminal --------------------------------
"$M" top --db "$DB" --all --limit 100 >"$WORK/all" 2>&1
check "--all, piped: every line" "$(grep -c '^  *[0-9]*  0x[0-9a-f]\{16\}  ' "$WORK/all" | head -1)" -ge "$lines"
check "--all, piped: perf c2c's two heading lines" "$(grep -c '^#  *------------ Cacheline' "$WORK/all")" -eq 1
for cols in 80 120; do
	COLUMNS=$cols "$M" top --db "$DB" --all --limit 100 >"$WORK/all$cols" 2>&1
	check "COLUMNS=$cols: no line wider" \
		"$(awk -v w=$cols 'length($0) > w' "$WORK/all$cols" | wc -l)" -eq 0
	check "COLUMNS=$cols: every table row" \
		"$(grep -c '^  *[0-9]*  0x[0-9a-f]\{16\}  ' "$WORK/all$cols")" -ge "$lines"
	check "COLUMNS=$cols: the path column kept" "$(grep -c '^# Index  Address .* Path$' "$WORK/all$cols")" -eq 1
done
# each reason once: as many notes as distinct reasons, and rows refer to them
reasons=$(sqlite3 "$DB" "SELECT count(DISTINCT reason) FROM line_attribution WHERE path = 'unresolved' AND reason IS NOT NULL")
check "notes: one per distinct reason" "$(grep -c '^# \[[0-9]*\] ' "$WORK/all80")" -eq "$reasons"
check "every unresolved offset refers to a note" "$(grep -c 'why: note \[[0-9]*\]$' "$WORK/all80")" -eq \
	"$(grep -c '^  *[0-9.]*% .*  unresolved' "$WORK/all")"
check "no reason repeated on the rows" "$(grep -c 'why: [^n]' "$WORK/all80")" -eq 0
# the first note is the stored reason whole, wrapped at spaces
want=$(sqlite3 "$DB" "SELECT reason FROM line_attribution WHERE path = 'unresolved' AND reason IS NOT NULL ORDER BY line_addr LIMIT 1")
got=$(awk '/^# \[1\] / { on = 1; sub(/^# \[1\] /, ""); printf "%s", $0; next }
	on && /^      [^ ]/ { sub(/^ */, " "); printf "%s", $0; next } on { exit }' "$WORK/all80")
check_str "note [1] is the whole reason" "$got" "$want"
case "$want" in *"(the re") fail "the stored reason is cut: $want" ;; esac
finish
