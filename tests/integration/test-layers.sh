#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The layers (docs/architecture.md, "Who may call whom"): the drawing, the
# Makefile's SEES_<folder> lists and the code's #includes name the same
# arrows; and the build, not a reviewer, refuses a crossing. A scratch copy
# of the tree builds clean, then fails, one at a time, on an upward
# include, an include through "../" and a hand-written prototype of a
# function a layer above defines.

. "$(dirname "$0")/lib.sh"

LAYERS="common clickhouse engine reports daemon cli load"
WORK=$(mktemp -d /tmp/mmhitm-test-layers.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# --- the three drawings of the arrows ----------------------------------------
# "from to" per arrow, sorted: the includes that resolve to another folder.
for d in $LAYERS; do
	for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
			$d/*.c $d/*.h 2>/dev/null | sort -u); do
		for o in $LAYERS; do
			[ "$o" != "$d" ] && [ -e "$o/$(basename "$h")" ] && echo "$d $o"
		done
	done
done | sort -u >"$WORK/code"

# The document's block: "    cli/  ──> reports/, engine/, common/".
sed -n 's|^    \([a-z]*\)/[[:space:]]*──>[[:space:]]*\(.*\)$|\1 \2|p' docs/architecture.md |
	while read -r from rest; do
		for to in $(echo "$rest" | tr -d '/,' | sed 's/(nothing)//'); do echo "$from $to"; done
	done | sort -u >"$WORK/doc"

# The Makefile's: SEES_<folder> := <folder> <below...>
sed -n 's/^SEES_\([a-z]*\)[[:space:]]*:=[[:space:]]*\(.*\)$/\1 \2/p' Makefile |
	while read -r from rest; do
		for to in $rest; do [ "$to" != "$from" ] && echo "$from $to"; done
	done | sort -u >"$WORK/make"

check "arrows drawn in docs/architecture.md" "$(wc -l <"$WORK/doc")" -gt 0
check "folders with a SEES_ list in the Makefile" \
	"$(grep -c '^SEES_' Makefile)" -eq "$(echo $LAYERS | wc -w)"
check_str "docs/architecture.md's arrows are the code's includes" \
	"$(diff "$WORK/doc" "$WORK/code" | grep '^[<>]' | tr '\n' ';')" ""
check_str "the Makefile's SEES_ lists are the code's includes" \
	"$(diff "$WORK/make" "$WORK/code" | grep '^[<>]' | tr '\n' ';')" ""
# Each folder's headers resolve to one folder: a name in two folders would
# make the drawing above ambiguous.
check_str "no header name in two folders" \
	"$(for d in $LAYERS; do ls $d/*.h 2>/dev/null; done | xargs -n1 basename | sort | uniq -d | tr '\n' ' ')" ""

# --- the build refuses a crossing -----------------------------------------------
[ -d "$O/deps" ] || { fail "no $O/deps: run make deps first"; finish; }
SCR=$WORK/tree
mkdir -p "$SCR"
# The files git tracks or would (a working tree mid-change: only those there).
git ls-files -co --exclude-standard | while read -r f; do [ -f "$f" ] && echo "$f"; done |
	tar -cf - -T - | tar -xf - -C "$SCR" || { fail "copy the tree to $SCR"; finish; }
mkdir -p "$SCR/b"
ln -s "$(cd "$O/deps" && pwd -P)" "$SCR/b/deps"

build() { make -C "$SCR" O=b -j2 all >"$WORK/build.log" 2>&1; }

build
rc=$?
check "the scratch copy builds as it is" "$rc" -eq 0
[ "$rc" -eq 0 ] || { tail -20 "$WORK/build.log"; finish; }

# A reports/ function, for the hand-written prototype.
sym=$(nm -g --defined-only "$SCR/b/lib/libreports.a" | awk '$2 == "T" { print $3; exit }')
check_str "a function reports/ defines" "$(test -n "$sym" && echo found)" found

cp "$SCR/common/util.c" "$WORK/util.c"
# try NAME TEXT WANT: common/util.c plus TEXT must fail to build, saying WANT.
try() {
	cp "$WORK/util.c" "$SCR/common/util.c"
	printf '%s\n' "$2" >>"$SCR/common/util.c"
	build
	check "$1: the build fails" "$?" -ne 0
	check "$1: and says why" "$(grep -c -- "$3" "$WORK/build.log")" -gt 0
	grep -q -- "$3" "$WORK/build.log" || tail -5 "$WORK/build.log"
}

try "an upward include" '#include "report.h"' 'report.h: No such file'
try "an include through ../" '#include "../reports/report.h"' 'an include through "../"'
try "a hand-written prototype of $sym()" \
	"int $sym(void); int layer_probe(void); int layer_probe(void) { return $sym(); }" \
	"common/util.c calls $sym(), defined in reports/"
check "the programs were not linked past the refusal" \
	"$(grep -c 'LD  *b/mmhitm' "$WORK/build.log")" -eq 0

cp "$WORK/util.c" "$SCR/common/util.c"
build
check "the scratch copy builds again without the crossing" "$?" -eq 0

finish
