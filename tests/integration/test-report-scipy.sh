#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The report's statistics against Debian's python3-scipy on the same
# generated inputs (report-scipy.py says what is compared and how).
set -u
. tests/integration/report-lib.sh
"$PY" -c 'import scipy.stats' 2>/dev/null || skip "python3-scipy is missing (make deps)"
out=$O/test-report-scipy
rm -rf "$out"
mkdir -p "$out"

fleet scipy
for seed in 7; do
	# shellcheck disable=SC2086
	"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --min-intervals 10 --min-hosts 1 \
		--bootstrap 10000 --seed $seed --json "$out/scipy-$seed.json" --quiet "$FLEET"/*.db ||
		fail "report failed"
	"$PY" -W ignore tests/integration/report-scipy.py "$out/scipy-$seed.json" ||
		fail "the report disagrees with scipy (seed $seed)"
done
echo "PASS"
