# SPDX-License-Identifier: GPL-2.0
# Shared by the test-report-*.sh tests: sourced, not run.
#
# fleet SPEC [ARGS]: generates a synthetic fleet with fleetgen.py into
# $O/test-fleets/SPEC-<key>/ once, where key hashes the generator, the
# schema and the arguments (a fleet costs seconds; reruns reuse it), and
# sets FLEET (its directory) and RANGE (--since/--until of its report).

O=${O:-build}
PY=${PYTHON:-/usr/bin/python3}
MMHITM=$O/mmhitm

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ -x "$MMHITM" ] || fail "$MMHITM is not built"
[ -x "$PY" ] || skip "no $PY"
"$PY" -c 'import numpy' 2>/dev/null || skip "python3-numpy is missing (make deps-test)"

fleet() {
	spec=$1; shift
	key=$(cat tests/integration/fleetgen.py schema/[0-9]*.sql | { cat; echo "$spec $*"; } |
	      md5sum | cut -c1-10)
	FLEET=$O/test-fleets/$spec-$key
	if [ ! -f "$FLEET/range" ]; then
		rm -rf "$O/test-fleets/$spec"-*	# stale generations
		mkdir -p "$FLEET"
		"$PY" tests/integration/fleetgen.py "$spec" "$FLEET" "$@" > "$FLEET/range.tmp" ||
			fail "fleetgen.py $spec failed"
		mv "$FLEET/range.tmp" "$FLEET/range"
	fi
	# "since=@S until=@S" -> "--since @S --until @S"
	RANGE=$(sed 's/since=/--since /; s/ until=/ --until /' "$FLEET/range")
}

# jq-like checks without jq: json FILE PYTHON-EXPRESSION (r is the report)
json() {
	"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(v)' "$@"
}

# expect FILE EXPRESSION WANT: the JSON expression is WANT
expect() {	# FILE EXPRESSION WANT
	got=$(json "$1" "$2") || fail "cannot evaluate $2 on $1"
	[ "$got" = "$3" ] || fail "$(basename "$1"): $2 is '$got', want '$3'"
	echo "ok: $(basename "$1"): $2 = $3"
}
