#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm report --fail-on, a rollout pipeline's gate: exit 4 exactly when a
# path's fleet verdict is "regressed" (regression) or either change
# (any-change), each tripping path named on stderr; 0 otherwise, with the
# report still written. On the constructed fleet (P3 made 20 % worse, P1
# and P2 better) and on the all-noise fleet.
set -u
. tests/integration/report-lib.sh
out=$O/test-report-gate
rm -rf "$out"
mkdir -p "$out"

# run FLEET_SPEC FAIL_ON: the exit code, stderr in $out/err, JSON in $out/r.json
run() {
	fleet "$1"
	# shellcheck disable=SC2086
	"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/r.json" --quiet \
		--fail-on "$2" "$FLEET"/*.db 2>"$out/err"
}

for spec in mixed noise; do
	for mode in regression any-change; do
		run $spec $mode
		rc=$?
		case $mode in
		regression) pick="v == 'regressed'" ;;
		*) pick="v in ('regressed', 'improved')" ;;
		esac
		want=$(json "$out/r.json" "' '.join(p['path'] for p in r['paths'] for v in [p['verdict']] if $pick)")
		[ -f "$out/r.json" ] || fail "$spec --fail-on $mode: no JSON written"
		if [ -n "$want" ]; then
			[ $rc -eq 4 ] || fail "$spec --fail-on $mode: exit $rc with $want tripping, want 4"
		else
			[ $rc -eq 0 ] || fail "$spec --fail-on $mode: exit $rc with nothing tripping: $(cat "$out/err")"
		fi
		got=$(sed -n 's/^mmhitm report: \(P[0-9]*\) .* across the fleet.*/\1/p' "$out/err" | tr '\n' ' ')
		[ "$got" = "${want:+$want }" ] || fail "$spec --fail-on $mode: stderr names '$got', want '$want'"
		echo "ok: $spec --fail-on $mode: exit $rc, tripped by '${want:-nothing}'"
		[ $spec = mixed ] && [ $mode = regression ] && [ -z "$want" ] &&
			fail "the mixed fleet's P3 regression was not found: the gate was not tested"
	done
done

"$MMHITM" report --fail-on sometimes >/dev/null 2>"$out/err"
[ $? -eq 2 ] || fail "--fail-on sometimes: not a usage error"
grep -q "regression or any-change" "$out/err" || fail "--fail-on sometimes: $(cat "$out/err")"
echo "all checks passed"
