#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The documentation ships whole: every relative link in the repository's
# Markdown files names a file that is in the repository (a user of a clone
# has nothing beside it, no ../shared), and the docs the README promises
# exist. The README stays a front door (at most 200 lines: the detail is in
# the manual pages and docs/), and every manual page ends with EXAMPLES.
# Checks the files git tracks, or the working tree outside git.

. "$(dirname "$0")/lib.sh"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	docs=$(git ls-files '*.md')
else
	docs=$(find . -name '*.md' ! -path './build/*' | sed 's|^\./||')
fi
check "Markdown files found" "$(printf '%s\n' "$docs" | grep -c .)" -gt 0

links=0
for f in $docs; do
	dir=$(dirname "$f")
	# [text](target): relative targets only, anchors dropped
	for t in $(grep -o '\]([^)]*)' "$f" | sed 's/^](//; s/)$//; s/#.*//' |
		   grep -v '^[a-z][a-z]*:' | grep .); do
		links=$((links + 1))
		case $(cd "$dir" && realpath -m "$t") in
		"$TOP"/*) ;;
		*) fail "$f links $t, outside the repository"; continue ;;
		esac
		[ -e "$dir/$t" ] || fail "$f links $t, which does not exist"
	done
	n=$(grep -c '\.\./shared' "$f")
	check "$f names nothing in ../shared" "$n" -eq 0
done
check "relative links checked" "$links" -gt 0

for d in docs/design.md docs/architecture.md docs/database.md tests/fixtures/PROVENANCE; do
	check "$d exists" "$(test -s "$d" && echo yes)" = yes
	grep -qF "$d" README.md || fail "README.md does not mention $d"
done

check "README.md has at most 200 lines" "$(wc -l <README.md)" -le 200
pages=0
for m in man/*.[1-8]; do
	[ -e "$m" ] || continue
	pages=$((pages + 1))
	check "$m has an EXAMPLES section" "$(grep -c '^\.SH EXAMPLES$' "$m")" -eq 1
done
check "manual pages found" "$pages" -ge 4

finish
