#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every report answers (issue 27): on one host's database, as the weekly
# timer and a developer testing a patch run it, the first lines of the
# text and the JSON's summary are the host's own verdict per path, with
# its interval and basis (fleetgen.py one: a week either side of a change
# whose P1 rate fell 40 %, drifting day to day); with one day after the
# change they say when it can be judged; a path the boots' LRU_GEN state
# cannot run is "not applicable", on the host and in the fleet; a kernel
# the patch map does not know gets the line to add and the file; and
# --min-hosts below 2 is a usage error instead of a silent 2. The answer is
# the same however it is asked for: --json on stdout is the report the old
# --json FILE writes (which says its new spelling once), --csv's rows and
# columns are the JSON's summary.paths, and --output FILE holds the CSV.
set -u
. tests/integration/report-lib.sh
out=$O/test-report-answer
rm -rf "$out"
mkdir -p "$out"

has() {		# FILE TEXT: TEXT is in FILE
	grep -qF -- "$2" "$1" || { cat "$1"; fail "$(basename "$1") lacks '$2'"; }
	echo "ok: $(basename "$1") says '$2'"
}

# The first line after the simulated label (fleetgen's databases carry it)
first_answer() { grep -v '^simulated data:' "$1" | head -n 1; }

# A week either side, P1 -40 %: the host's own verdict is the answer.
fleet one --effect P1=-0.4 --days-after 7
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/week.json" "$FLEET/rolled-00.db" \
	>"$out/week.txt" 2>"$out/week.err" || fail "report on one host failed"
first_answer "$out/week.txt" | grep -Eq '^P1 improved -[0-9.]+ % \(95 % CI -[0-9.]+ % \.\. -[0-9.]+ %\), by the host'"'"'s own before/after' ||
	{ cat "$out/week.txt"; fail "the first answer line is not P1's own verdict with its interval"; }
echo "ok: the first line: $(first_answer "$out/week.txt" | cut -c1-60)..."
expect "$out/week.json" "r['summary']['paths']['P1']['scope'], r['summary']['paths']['P1']['verdict']" "('host', 'improved')"
# The summary is the host's chosen comparison, and its interval holds the truth.
expect "$out/week.json" "(lambda s, c: (s['change'], s['ci_low'], s['ci_high']) == (c['change'], c['ci_low'], c['ci_high']))(r['summary']['paths']['P1'], r['hosts'][0]['paths']['P1']['comparisons'][0])" "True"
expect "$out/week.json" "r['summary']['paths']['P1']['ci_low'] < -0.4 < r['summary']['paths']['P1']['ci_high']" "True"
# LRU_GEN on in every boot: P3's route cannot run there.
expect "$out/week.json" "r['summary']['paths']['P3']['verdict'], r['paths'][2]['verdict'], r['hosts'][0]['paths']['P3']['comparisons'][0]['verdict']" "('not applicable', 'not applicable', 'not applicable')"
has "$out/week.txt" "P3 not applicable: LRU_GEN on in every boot: with multi-gen LRU enabled, folio_mark_accessed() returns after folio_inc_refs()"

# The same report the other ways it is written (issue "The house,
# redesigned", 4): --json on stdout, --csv on stdout, --output FILE.
# The old --json FILE above still wrote the file, with one note.
[ "$(cat "$out/week.err")" = "mmhitm: note: 'mmhitm report --json $out/week.json' is now 'mmhitm report --json --output $out/week.json' (--json alone prints to stdout)" ] ||
	{ cat "$out/week.err"; fail "report --json FILE: not the one note on stderr"; }
echo "ok: --json FILE: the file, and the note"
tail -n 1 "$out/week.txt" | grep -qxF "JSON: $out/week.json" || fail "--json FILE: the summary does not end with the file"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$FLEET/rolled-00.db" \
	>"$out/stdout.json" 2>"$out/stdout.err" || fail "report --json (stdout) failed"
[ -s "$out/stdout.err" ] && { cat "$out/stdout.err"; fail "report --json (stdout): stderr not empty"; }
same_json() {	# A B: the same report but for when it ran and how long it took
	"$PY" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):
    del r["generated"], r["generated_ns"], r["summary"]["seconds"]
sys.exit(a != b)' "$1" "$2"
}
same_json "$out/week.json" "$out/stdout.json" || fail "--json on stdout is not the report --json FILE wrote"
echo "ok: --json on stdout: the report --json FILE wrote, no summary beside it"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --csv "$FLEET/rolled-00.db" \
	>"$out/week.csv" 2>"$out/week-csv.err" || fail "report --csv failed"
[ -s "$out/week-csv.err" ] && { cat "$out/week-csv.err"; fail "report --csv: stderr not empty"; }
# Every column a summary.paths key, every row a path's answer: equal.
"$PY" -c 'import csv, json, math, sys
r = json.load(open(sys.argv[1]))["summary"]["paths"]
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
want = ["path"] + list(next(iter(r.values())).keys())
got = list(rows[0].keys()) if rows else []
if got != want:
    sys.exit("columns %s, want %s" % (got, want))
if [row["path"] for row in rows] != list(r):
    sys.exit("rows %s, want %s" % ([row["path"] for row in rows], list(r)))
for row in rows:
    for k, v in r[row["path"]].items():
        c = row[k]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            ok = float(c) == v
        elif v in ("inf", "-inf"):
            ok = float(c) == float(v)
        else:
            ok = c == ("" if v is None else v)
        if not ok:
            sys.exit("%s %s: csv %r, json %r" % (row["path"], k, c, v))
print("ok: --csv: %d rows of %d columns, each the JSON summary.paths value" % (len(rows), len(want)))' \
	"$out/week.json" "$out/week.csv" || fail "--csv is not the JSON's summary.paths"
grep -q '^P1,host,improved,-0\.' "$out/week.csv" || { cat "$out/week.csv"; fail "--csv: P1 is not improved"; }
# --output FILE: the CSV there, whole; the summary on stdout names it.
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --csv --output "$out/out.csv" "$FLEET/rolled-00.db" \
	>"$out/out-csv.txt" || fail "report --csv --output FILE failed"
cmp -s "$out/week.csv" "$out/out.csv" || fail "--csv --output FILE is not what --csv printed"
first_answer "$out/out-csv.txt" | grep -q '^P1 improved' || fail "--output FILE: no summary on stdout"
tail -n 1 "$out/out-csv.txt" | grep -qxF "CSV: $out/out.csv" || fail "--output FILE: the summary does not name it"
echo "ok: --csv --output FILE: the CSV in FILE, the summary on stdout"

# The fleet verdict stays what it was, and says what --min-hosts says.
expect "$out/week.json" "r['paths'][0]['verdict']" "insufficient data"
has "$out/week.json" "1 host with a before/after comparison, 3 needed (--min-hosts)"
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --min-hosts 4 --json "$out/min4.json" --quiet \
	"$FLEET/rolled-00.db" || fail "report --min-hosts 4 failed"
has "$out/min4.json" "1 host with a before/after comparison, 4 needed (--min-hosts)"

# One day after the change, the range as the timer takes it: when it can judge.
fleet one --effect P1=-0.4 --days-after 1
"$MMHITM" report --patches "$FLEET/patches.conf" --json "$out/day.json" "$FLEET/rolled-00.db" \
	>"$out/day.txt" || fail "report one day after failed"
t=$(json "$out/day.json" "r['hosts'][0]['rollouts'][0]['time_ns']")
expect "$out/day.json" "r['summary']['paths']['P1']['verdict'], r['summary']['paths']['P1']['judgeable_from_ns'] - $t" "('insufficient data', 172800000000000)"
when=$(json "$out/day.json" "r['summary']['paths']['P1']['judgeable_from']")
first_answer "$out/day.txt" | grep -qF "P1 insufficient data: the after-window holds P1 rates on 1 whole day; a verdict needs 2 whole days a side, from $when" ||
	{ cat "$out/day.txt"; fail "the first answer line does not say when P1 can be judged"; }
echo "ok: the first line says when: $when"

# LRU_GEN absent: P1 and P2 cannot run, P3 can; the fleet of one such host
# and one with it on leaves each side's host out of the path it cannot run.
# (fleet() keeps one generation of a spec: each host is copied out first.)
fleet one --effect P1=-0.4 --days-after 7 --lru-gen absent
cp "$FLEET/rolled-00.db" "$out/absent.db" || fail "cannot copy the LRU_GEN-less host"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --json "$out/absent.json" --quiet "$out/absent.db" ||
	fail "report on the LRU_GEN-less host failed"
expect "$out/absent.json" "[r['summary']['paths'][p]['verdict'] == 'not applicable' for p in ('P1', 'P2', 'P3', 'P4')]" "[True, True, False, False]"
fleet one --effect P1=-0.4 --days-after 7
cp "$FLEET/rolled-00.db" "$out/on.db" || fail "cannot copy the host"
"$PY" -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE hosts SET machine_id = ?, hostname = ?", ("absent-host", "absent-host"))
db.commit()' "$out/absent.db" || fail "cannot rename the second host"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --min-hosts 2 --json "$out/two.json" --quiet \
	"$out/on.db" "$out/absent.db" || fail "report on two hosts failed"
expect "$out/two.json" "[(r['summary']['paths'][p]['scope'], p in r['summary']['paths'][p]['reason'] and '1 of 2 hosts left out as not applicable' in r['paths'][i]['reason']) for i, p in enumerate(('P1', 'P2', 'P3'))]" "[('fleet', True), ('fleet', True), ('fleet', True)]"
expect "$out/two.json" "[p['excluded']['not_applicable'] for p in r['paths']]" "[1, 1, 1, 0]"

# A kernel the patch map does not know: the line to add, and where.
printf 'lacks all release 6.1.*\n' >"$out/patches.conf"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$out/patches.conf" "$FLEET/rolled-00.db" >"$out/unknown.txt" ||
	fail "report with a patch map that does not know 6.12 failed"
has "$out/unknown.txt" "patch map: $out/patches.conf; 2 kernels in range"
has "$out/unknown.txt" "6.1.0-47-cloud-amd64 (0d1e2f3a4b5c): P1 P2 P3 P4 lacks by release 6.1.* (patches.conf:1)"
has "$out/unknown.txt" "P1 P2 P3 P4 unknown, no rule matches: add \"carries P1,P2,P3,P4 release 6.12.38-mmfix1-cloud-amd64\" (or \"lacks ...\") to $out/patches.conf"
# The line works: added, the kernel is known and P1 is judged again.
echo "carries P1,P2,P3,P4 release 6.12.38-mmfix1-cloud-amd64" >>"$out/patches.conf"
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$out/patches.conf" "$FLEET/rolled-00.db" >"$out/known.txt" ||
	fail "report with the added line failed"
grep -q "unknown" "$out/known.txt" && { cat "$out/known.txt"; fail "a kernel is still unknown"; }
has "$out/known.txt" "P1 P2 P3 P4 carries by release 6.12.38-mmfix1-cloud-amd64 (patches.conf:2)"

# --min-hosts means compared hosts for a fleet verdict: below 2 is refused.
"$MMHITM" report --min-hosts 1 "$FLEET/rolled-00.db" >"$out/min1.out" 2>"$out/min1.err"
rc=$?
[ "$rc" -eq 2 ] || fail "--min-hosts 1 exited $rc, want 2"
[ "$(wc -l <"$out/min1.err")" -eq 1 ] && grep -q "min-hosts.*2 or more" "$out/min1.err" ||
	{ cat "$out/min1.err"; fail "--min-hosts 1: not one clear line"; }
echo "ok: --min-hosts 1: exit 2, $(cat "$out/min1.err")"
echo "PASS"
