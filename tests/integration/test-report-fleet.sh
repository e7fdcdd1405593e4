#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm report on synthetic fleets whose effects are known (fleetgen.py):
# the verdicts must come out as constructed, an all-noise fleet must say
# "no change" on every path, too few hosts must say "insufficient data",
# and the rollback, the PMU-less host, the gaps, an unreadable database and
# a hostile hostname must all be handled and reported.
set -u
. tests/integration/report-lib.sh
out=$O/test-report-fleet
rm -rf "$out"
mkdir -p "$out"

# --- the constructed fleet ------------------------------------------------
fleet mixed
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/mixed.json" \
	"$FLEET"/*.db > "$out/mixed.txt" || fail "report on the mixed fleet failed"
cat "$out/mixed.txt"
m=$out/mixed.json
expect "$m" "[p['verdict'] for p in r['paths']]" "['improved', 'improved', 'regressed', 'no change']"
expect "$m" "[p['basis'] for p in r['paths']]" "['difference in differences', 'difference in differences', 'difference in differences', 'difference in differences']"
# The estimates land on the constructed effects (-40 %, -25 %, +20 %, 0).
expect "$m" "[abs(p['did']['change'] - e) < 0.03 for p, e in zip(r['paths'], (-0.40, -0.25, 0.20, 0.0))]" "[True, True, True, True]"
expect "$m" "[p['did']['ci_low'] < p['did']['change'] < p['did']['ci_high'] for p in r['paths']]" "[True, True, True, True]"
# 14 hosts rolled, one has no PMU: 13 compared, 10 hosts kept their kernel.
expect "$m" "(r['summary']['hosts'], r['summary']['hosts_rolled'], r['summary']['kernel_changes'], r['summary']['rollbacks'])" "(24, 14, 15, 1)"
expect "$m" "[(p['hosts']['compared'], p['hosts']['controls'], p['excluded']['no_pmu']) for p in r['paths']]" "[(13, 10, 1), (13, 10, 1), (13, 10, 1), (13, 10, 1)]"
expect "$m" "'no PMU on 1 of 24 hosts' in r['paths'][0]['reason']" "True"
expect "$m" "[h['paths']['P1']['excluded'] for h in r['hosts'] if h['no_pmu']]" "['HITM not measured (no PMU)']"
# The rollback: P1 comes back up on the host that went back to 6.1.
expect "$m" "[round(c['change'], 1) for h in r['hosts'] for c in h['paths']['P1']['comparisons'] if h['rollouts'][c['rollout']]['rollback']]" "[0.7]"
expect "$m" "[h['rollouts'][1]['patches']['P1'] for h in r['hosts'] if len(h['rollouts']) == 2]" "['lost']"
expect "$m" "[(k['hosts'], k['rollbacks'], k['patches']['P1']) for k in r['kernel_changes']]" "[(14, 0, ['lacks', 'carries']), (1, 1, ['carries', 'lacks'])]"
# Reboots onto the same kernel are no rollout; P4 came from the ksym marker.
expect "$m" "[len(h['rollouts']) for h in r['hosts'] if h['hostname'].startswith('rebooted')]" "[0, 0]"
expect "$m" "sorted(set(k['patches']['P4']['why'] for h in r['hosts'] for k in h['kernels']))" "['ksym maybe_lru_add_drain (patches.conf:4)', 'release 6.1.* (patches.conf:2)']"
# Gaps and lost events are counted where they were made.
expect "$m" "[(h['quality']['gaps'], h['quality']['events_lost'] > 0) for h in r['hosts'] if h['hostname'] == 'rolled-02']" "[(1, True)]"
expect "$m" "sum(h['hostname'] == 'web-<b>09</b> & \"x' + chr(39) + 'y\"' for h in r['hosts'])" "1"
grep -q '^P1   improved' "$out/mixed.txt" || fail "text summary lacks the P1 verdict line"
# Cohorts by closeness: the three waves (days 9-11, hours apart) chain into
# one cohort at --cohort 1d; at 6h the 13-hour nights split them into three
# (and the rollback two days later is a fourth),
# and the 10 hosts that kept their kernel are still 10 control hosts.
expect "$m" "[(c['kernel_changes'], c['first'] < c['last']) for c in r['cohorts']]" "[(15, True)]"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --cohort 6h --json "$out/waves.json" --quiet \
	"$FLEET"/*.db || fail "report with --cohort 6h failed"
expect "$out/waves.json" "[c['kernel_changes'] for c in r['cohorts']]" "[5, 5, 4, 1]"
expect "$out/waves.json" "[(p['hosts']['controls'], p['did']['cohorts']) for p in r['paths']]" "[(10, 3), (10, 3), (10, 3), (10, 3)]"
# The JSON holds every number the fleet used: each control host's change
# per cohort, each compared host's log change; the DiD counts match them.
treated_cohorts="set(i for h in r['hosts'] for c in [h['paths']['P1']['chosen']] if c is not None for i, co in enumerate(r['cohorts']) if co['first_ns'] <= h['rollouts'][h['paths']['P1']['comparisons'][c]['rollout']]['time_ns'] <= co['last_ns'])"
expect "$out/waves.json" "sorted($treated_cohorts)" "[0, 1, 2]"
expect "$out/waves.json" "[p['did']['control_measurements'] == sum(c['cohort'] in $treated_cohorts for h in r['hosts'] for c in h['paths'][p['path']]['controls']) for p in r['paths']]" "[True, True, True, True]"
expect "$m" "[p['hosts']['compared'] == sum(h['paths'][p['path']]['chosen'] is not None and h['paths'][p['path']]['comparisons'][h['paths'][p['path']]['chosen']]['log_change'] is not None for h in r['hosts']) for p in r['paths']]" "[True, True, True, True]"

# Same inputs, same numbers: everything but the clock is reproducible.
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/again.json" --quiet \
	"$FLEET"/*.db || fail "second run failed"
for f in mixed again; do
	json "$out/$f.json" "json.dumps({k: v for k, v in r.items() if k not in ('generated', 'generated_ns', 'summary')}, sort_keys=True)" > "$out/$f.cmp"
done
cmp -s "$out/mixed.cmp" "$out/again.cmp" || fail "two runs on the same databases differ"
echo "ok: reproducible"

# --- too few hosts ---------------------------------------------------------
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --min-hosts 20 --json "$out/few.json" \
	--quiet "$FLEET"/*.db || fail "report with --min-hosts 20 failed"
expect "$out/few.json" "[p['verdict'] for p in r['paths']]" "['insufficient data', 'insufficient data', 'insufficient data', 'insufficient data']"
expect "$out/few.json" "r['paths'][0]['reason'].split(';')[0]" "13 hosts with a before/after comparison, 20 needed (--min-hosts)"

# One host that never changed kernel, and a file that is no database.
echo "not a database" > "$out/garbage.db"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/one.json" --quiet \
	"$FLEET/steady-old-00.db" "$out/garbage.db" 2>"$out/one.err" || fail "report on one host failed"
expect "$out/one.json" "(r['paths'][0]['verdict'], r['paths'][0]['reason'])" "('insufficient data', 'no host changed to a kernel carrying P1 in range')"
expect "$out/one.json" "[u['db'].endswith('garbage.db') for u in r['unreadable']]" "[True]"
# With the shipped patch map the 6.12 kernels carry only P4 (its ksym marker).
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches reports/patches.conf --json "$out/nomap.json" --quiet "$FLEET"/*.db ||
	fail "report without patch map failed"
expect "$out/nomap.json" "[p['verdict'] for p in r['paths']]" "['insufficient data', 'insufficient data', 'insufficient data', 'no change']"
expect "$out/nomap.json" "'the patch map does not say' in r['paths'][0]['reason']" "True"
# As the systemd unit runs it: the database from --db (or $MMHITM_DB), the
# files into --output-dir, dated by the range's last day, latest.* pointing there.
# shellcheck disable=SC2086
MMHITM_DB="$FLEET/rolled-00.db" "$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --quiet \
	--output-dir "$out/reports" || fail "report --output-dir failed"
[ "$(readlink "$out/reports/latest.html")" = report-2025-03-16.html ] || fail "latest.html"
expect "$out/reports/latest.json" "[h['hostname'] for h in r['hosts']]" "['rolled-00']"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/db.json" --quiet \
	--db "$FLEET/rolled-01.db" "$FLEET/rolled-02.db" || fail "report --db failed"
expect "$out/db.json" "[h['hostname'] for h in r['hosts']]" "['rolled-01', 'rolled-02']"
# Nothing readable at all is an error.
"$MMHITM" report --quiet "$out/garbage.db" 2>/dev/null && fail "a report from no readable database succeeded"

# --- the all-noise fleet ------------------------------------------------------
fleet noise
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/noise.json" \
	"$FLEET"/*.db > "$out/noise.txt" || fail "report on the noise fleet failed"
cat "$out/noise.txt"
expect "$out/noise.json" "[p['verdict'] for p in r['paths']]" "['no change', 'no change', 'no change', 'no change']"
echo "PASS"
