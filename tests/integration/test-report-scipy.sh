#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The report's statistics against Debian's python3-scipy on the same
# generated inputs (report-scipy.py says what is compared and how): the
# scipy fleet's sample shapes, the mixed fleet's difference in
# differences against the control hosts the JSON lists, and the drift
# fleet's regression-adjusted one.
set -u
. tests/integration/report-lib.sh
"$PY" -c 'import scipy.stats' 2>/dev/null || skip "python3-scipy is missing (make deps-test)"
out=$O/test-report-scipy
rm -rf "$out"
mkdir -p "$out"

fleet scipy
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --min-intervals 10 --min-hosts 2 \
	--json "$out/scipy.json" --quiet "$FLEET"/*.db || fail "report failed"
"$PY" -W ignore tests/integration/report-scipy.py "$out/scipy.json" ||
	fail "the report disagrees with scipy (scipy fleet)"

fleet mixed
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/mixed.json" --quiet \
	"$FLEET"/*.db || fail "report failed"
# Every path has a difference in differences over the one cohort.
"$PY" -W ignore tests/integration/report-scipy.py "$out/mixed.json" 4 ||
	fail "the report disagrees with scipy (mixed fleet)"

# 12 rolled hosts against 12 controls: enough for the regression-adjusted
# difference in differences on every path (each counts twice).
fleet drift --hosts 12
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/drift.json" --quiet \
	"$FLEET"/*.db || fail "report failed"
"$PY" -W ignore tests/integration/report-scipy.py "$out/drift.json" 8 ||
	fail "the report disagrees with scipy (drift fleet)"
echo "PASS"
