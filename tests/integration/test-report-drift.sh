#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm report end to end on fleets whose hosts drift day to day, cycle
# daily, burst and differ 2x (fleetgen.py drift): with no effect, no fleet
# verdict and few per-host verdicts (intervals that assumed independent
# intervals called 25-37 % of such hosts improved or regressed); with a
# -20 % P1 and a +15 % P4 effect under a fleet-wide +8 % load step, the
# difference in differences finds both and its intervals cover all four
# truths, while the paired changes carry the load step. The calibration
# over many seeds is tests/unit/test-calibration.c.
set -u
. tests/integration/report-lib.sh
out=$O/test-report-drift
rm -rf "$out"
mkdir -p "$out"

false_hosts=0
for seed in 1 2 3; do
	fleet drift --hosts 8 --seed $seed
	# shellcheck disable=SC2086
	"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/null-$seed.json" --quiet \
		"$FLEET"/*.db || fail "report on the null drift fleet (seed $seed) failed"
	expect "$out/null-$seed.json" "[p['verdict'] in ('improved', 'regressed') for p in r['paths']]" "[False, False, False, False]"
	expect "$out/null-$seed.json" "[(p['basis'], p['hosts']['compared'], p['hosts']['controls']) for p in r['paths']][0]" "('difference in differences', 8, 8)"
	n=$(json "$out/null-$seed.json" "sum(p['hosts']['improved'] + p['hosts']['regressed'] for p in r['paths'])") ||
		fail "cannot count per-host verdicts"
	false_hosts=$((false_hosts + n))
done
# 96 host comparisons with no effect: 5 % is about 5 (these seeds: 7).
[ "$false_hosts" -le 10 ] || fail "$false_hosts of 96 per-host comparisons without an effect got a verdict"
echo "ok: $false_hosts of 96 per-host comparisons without an effect got a verdict"

fleet drift --hosts 20 --effect P1=-0.2,P4=0.15 --load-step 0.08
e=$out/effect.json
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$e" --quiet "$FLEET"/*.db ||
	fail "report on the drift fleet with effects failed"
expect "$e" "[p['verdict'] for p in r['paths']][0::3]" "['improved', 'regressed']"
expect "$e" "[p['verdict'] in ('improved', 'regressed') for p in r['paths']][1:3]" "[False, False]"
expect "$e" "[p['did']['ci_low'] <= t <= p['did']['ci_high'] for p, t in zip(r['paths'], (-0.2, 0, 0, 0.15))]" "[True, True, True, True]"
# The answer shows the interval that decided: for "no change" the 90 % one
# of the two one-sided tests, inside +-5 %; for the others the 95 % one.
expect "$e" "[(a['verdict'] == 'no change') == (round(a['ci_level'], 2) == 0.9) for a in r['summary']['paths'].values()]" "[True, True, True, True]"
expect "$e" "all(-0.05 < a['ci_low'] and a['ci_high'] < 0.05 and (a['ci_low'], a['ci_high']) == (p['did']['eq_low'], p['did']['eq_high']) for a, p in zip(r['summary']['paths'].values(), r['paths']) if a['verdict'] == 'no change')" "True"
# Without the controls the load step would pass for a regression of every path.
expect "$e" "[p['paired']['change'] > 0.05 for p in r['paths']][1:3]" "[True, True]"
echo "PASS"
