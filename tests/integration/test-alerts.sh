#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The Prometheus alert rules (monitoring/mmhitm-alerts.yml): promtool
# accepts them, and its rule tests (monitoring/mmhitm-alerts-test.yml)
# raise each alert on the series that should and none on a healthy host;
# and every mmhitm_* series a rule reads is one a daemon really writes
# (a short recording with metrics_file here).
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || skip "no promtool (prometheus; make deps-test)"
RULES=monitoring/mmhitm-alerts.yml
TMP=$(mktemp -d /tmp/mmhitm-test-alerts.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

promtool check rules "$RULES" >"$TMP/check" 2>&1 && pass "promtool check rules: $(grep -o '[0-9]* rules found' "$TMP/check")" ||
	fail "promtool check rules: $(cat "$TMP/check")"
(cd monitoring && promtool test rules mmhitm-alerts-test.yml) >"$TMP/test" 2>&1 &&
	pass "promtool test rules: each alert fires where it should, and only there" ||
	fail "promtool test rules: $(grep -v '^$' "$TMP/test" | head -20)"
alerts=$(grep -c '^ *- alert:' "$RULES")
tested=$(sed -n 's/^ *alertname: //p' monitoring/mmhitm-alerts-test.yml | sort -u | wc -l)
check "every alert has a rule test" "$tested" -eq "$alerts"

require_root
require_tracefs
"$O/mmhitmd" --foreground --db "$TMP/a.db" --instance "mmhitm-test-alerts-$$" --interval 1s \
	--metrics-file "$TMP/a.prom" --duration 3s 2>"$TMP/daemon.log" ||
	fail "mmhitmd: $(tail -3 "$TMP/daemon.log")"
for m in $(grep -o 'mmhitm_[a-z_]*' "$RULES" | sort -u); do
	grep -q "^$m[ {]" "$TMP/a.prom" && pass "the daemon writes $m" || fail "no daemon writes $m, which a rule reads"
done
finish
