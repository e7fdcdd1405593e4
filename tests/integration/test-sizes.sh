#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Functions that do one thing: no product function of 80 lines or more,
# counted from the line that names it to its closing brace, and no product
# file over 1,500 lines (tests and benchmarks aside). universal-ctags finds
# each function's first and last line, as a reader's editor would.

. "$(dirname "$0")/lib.sh"

FOLDERS="common clickhouse engine reports daemon cli load"
MAX_FUNCTION=80
MAX_FILE=1500

ctags --version 2>/dev/null | grep -q Universal ||
	skip "universal-ctags is not installed (make deps-test installs it)"

WORK=$(mktemp -d /tmp/mmhitm-test-sizes.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

for d in $FOLDERS; do ls $d/*.c $d/*.h 2>/dev/null; done >"$WORK/files"
check "product files found" "$(wc -l <"$WORK/files")" -gt 50

# One line per function definition: name, file, ..., line:N, ..., end:M.
ctags --output-format=u-ctags --fields=+ne --kinds-C=f -o - $(cat "$WORK/files") 2>/dev/null |
	awk -F'\t' '{
		l = e = 0
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^line:/) l = substr($i, 6)
			if ($i ~ /^end:/) e = substr($i, 5)
		}
		if (l && e) print $2 ":" l, $1 "()", e - l + 1
	}' >"$WORK/functions"
# A parser that lost its way would count nothing and pass.
check "functions measured" "$(wc -l <"$WORK/functions")" -gt 1000

awk -v max=$MAX_FUNCTION '$3 >= max { print $1, $2, $3 " lines" }' "$WORK/functions" >"$WORK/long"
cat "$WORK/long" | sed 's/^/  /'
check "functions of $MAX_FUNCTION lines or more" "$(wc -l <"$WORK/long")" -eq 0

wc -l $(cat "$WORK/files") | awk -v max=$MAX_FILE '$2 != "total" && $1 > max { print $2, $1 " lines" }' >"$WORK/big"
cat "$WORK/big" | sed 's/^/  /'
check "files over $MAX_FILE lines" "$(wc -l <"$WORK/big")" -eq 0

finish
