#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The report's JSON matches its documented schema (docs/report.schema.json,
# JSON Schema 2020-12, no undocumented keys) on every kind of report: the
# constructed fleet, the all-noise fleet, the drift fleet, one with an
# unreadable database and a host name full of markup, and one host alone
# (no rollout, no verdict). A report with a key dropped or renamed fails the schema, so the
# check can fail.
set -u
. tests/integration/report-lib.sh
"$PY" -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is missing (make deps-test)"
out=$O/test-report-schema
rm -rf "$out"
mkdir -p "$out"
SCHEMA=docs/report.schema.json

validate() {	# NAME FILE: 0 when FILE matches the schema
	"$PY" - "$SCHEMA" "$2" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))),
                key=lambda e: list(e.path))
for e in errors[:5]:
    print("  %s: %s" % (e.json_path, e.message[:200]))
sys.exit(1 if errors else 0)
PY
}

for spec in mixed noise drift; do
	fleet $spec
	# shellcheck disable=SC2086
	"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/$spec.json" --quiet \
		--no-progress "$FLEET"/*.db 2>/dev/null || fail "report on the $spec fleet"
	validate $spec "$out/$spec.json" || fail "the $spec fleet's report does not match the schema"
	echo "ok: $spec fleet: the report matches the schema"
done

# An unreadable database beside a hostile hostname's (the mixed fleet has one).
fleet mixed
printf 'not a database' >"$out/bad.db"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --json "$out/bad.json" --quiet --no-progress "$FLEET"/*.db "$out/bad.db" \
	2>/dev/null
validate unreadable "$out/bad.json" || fail "a report with an unreadable database does not match"
[ "$(json "$out/bad.json" "len(r['unreadable'])")" = 1 ] || fail "the unreadable database is not listed"
echo "ok: unreadable database: matches, listed"

fleet noise
"$MMHITM" report $RANGE --json "$out/one.json" --quiet --no-progress "$(ls "$FLEET"/*.db | head -n1)" \
	2>/dev/null || fail "report on one host"
validate one "$out/one.json" || fail "a report on one host without a rollout does not match"
echo "ok: one host, no rollout: matches"

# The check can fail: a key dropped, a key renamed.
"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1])); del r["paths"][0]["grades"]; json.dump(r, open(sys.argv[2], "w"))' \
	"$out/mixed.json" "$out/dropped.json"
validate dropped "$out/dropped.json" >/dev/null && fail "a report without paths[0].grades passed the schema"
"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1])); r["summary"]["hostz"] = r["summary"].pop("hosts"); json.dump(r, open(sys.argv[2], "w"))' \
	"$out/mixed.json" "$out/renamed.json"
validate renamed "$out/renamed.json" >/dev/null && fail "a report with summary.hostz passed the schema"
echo "ok: a dropped and a renamed key fail the schema"
echo "all checks passed"
