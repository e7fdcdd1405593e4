#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-layer.sh LAYER "SEES" LIBDIR "LAYERS": the build's link check of one
# layer (see "layers" in the Makefile). Fails, naming the file and the
# symbol, when an object of LIBDIR/libLAYER.a calls a function (or reads a
# variable) defined in a layer outside SEES: the compiler's -I paths catch
# an upward #include, this catches a hand-written prototype. Also refuses
# an #include that climbs out of the folder ("../").

layer=$1 sees=$2 dir=$3 layers=$4

defined() {
	nm -g --defined-only "$dir/lib$1.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

for l in $sees; do
	defined "$l"
done | sort -u >"$tmp/allowed"

status=0
# nm -A -u: "archive:member: U symbol", one line per object and symbol
nm -A -u "$dir/lib$layer.a" | awk '{ split($1, p, ":"); print p[2], $NF }' | sort -u >"$tmp/undef"
for l in $layers; do
	case " $sees " in *" $l "*) continue ;; esac
	defined "$l" | comm -23 - "$tmp/allowed" >"$tmp/forbidden"
	awk -v layer="$layer" -v other="$l" 'NR == FNR { bad[$1] = 1; next }
		($2 in bad) {
			sub(/\.o$/, ".c", $1)
			printf "error: %s/%s calls %s(), defined in %s/, a layer %s/ may not see (docs/architecture.md)\n",
				layer, $1, $2, other, layer
			found = 1
		}
		END { exit found }' "$tmp/forbidden" "$tmp/undef" >&2 || status=1
done

if grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' "$layer"/*.c "$layer"/*.h 2>/dev/null >"$tmp/up"; then
	sed 's/^/error: /; s/$/: an include through "..\/" (give the layer its -I in the Makefile)/' "$tmp/up" >&2
	status=1
fi
exit $status
