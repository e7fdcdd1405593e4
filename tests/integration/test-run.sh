#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The test runner's own accounting, on a fake repository with a fake build
# directory: it says how many tests the sources call for before running
# any; a test binary the sources call for but the build lacks is a failure
# (and the run says fewer ran than expected); a skip counts as skipped only
# with its reason; with CI=true a skip not in tests/allowed-skips is a
# failure. Also: every test tests/allowed-skips names exists.

. "$(dirname "$0")/lib.sh"

TMP=$(mktemp -d /tmp/mmhitm-test-run-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
F=$TMP/repo
mkdir -p "$F/tests/unit" "$F/tests/integration" "$F/tests/fuzz" \
	"$F/build/tests" "$F/build/tests-san"
cp tests/run "$F/tests/run"

# two unit tests (plain and ASan each) and two integration scripts: 6 tests
: >"$F/tests/unit/test-ok.c"
: >"$F/tests/unit/test-lacks.c"
for d in tests tests-san; do
	printf '#!/bin/sh\necho 3 checks passed\n' >"$F/build/$d/test-ok"
	printf '#!/bin/sh\necho "SKIP: no widget here"\nexit 77\n' >"$F/build/$d/test-lacks"
	chmod +x "$F/build/$d/test-ok" "$F/build/$d/test-lacks"
done
printf 'echo ok\n' >"$F/tests/integration/test-fine.sh"
printf 'echo "SKIP: no gadget here"\nexit 77\n' >"$F/tests/integration/test-gadget.sh"
cat >"$F/tests/allowed-skips" <<'EOF'
# what the fake CI machine lacks
unit/test-lacks		# no widget
asan/test-lacks		# no widget
EOF

# runner [ENV...]: runs the fake repository's runner; output in $OUT, status in $RC
runner() {
	OUT=$TMP/out
	env -u CI -u MMHITM_FIXTURES O=build "$@" sh "$F/tests/run" unit integration >"$OUT" 2>&1
	RC=$?
	sed 's/^/    | /' "$OUT"
}
first() { head -n 1 "$OUT"; }
closing() { grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$OUT" | tail -n 1; }

check_str "--list: the tests the sources call for" \
	"$(sh "$F/tests/run" --list unit integration | tr '\n' ' ')" \
	"unit/test-lacks unit/test-ok asan/test-lacks asan/test-ok integration/test-fine integration/test-gadget "

runner
check_str "all built: first line" "$(first)" "6 expected"
check_str "all built: closing line" "$(closing)" "3 passed, 0 failed, 3 skipped"
check_str "all built: exit" "$RC" 0
grep -q '^SKIP  integration/test-gadget  *no gadget here$' "$OUT" ||
	fail "a skip's reason is not printed"

# a binary the sources call for, missing from the build: a failure
rm "$F/build/tests-san/test-ok"
runner
check_str "missing binary: first line" "$(first)" "6 expected"
check_str "missing binary: exit" "$RC" 1
grep -q '^FAIL  asan/test-ok .*missing' "$OUT" || fail "the missing binary is not named"
grep -q '^only 5 of 6 expected tests ran$' "$OUT" || fail "fewer tests than expected, unsaid"
check_str "missing binary: closing line" "$(closing)" "2 passed, 1 failed, 3 skipped"
cp "$F/build/tests/test-ok" "$F/build/tests-san/test-ok"

# CI=true: a listed skip is a skip, an unlisted one a failure
runner CI=true
check_str "CI, unlisted skip: exit" "$RC" 1
grep -q '^FAIL  integration/test-gadget .*not in tests/allowed-skips: no gadget here' "$OUT" ||
	fail "the unlisted skip is not a failure"
grep -q '^SKIP  unit/test-lacks ' "$OUT" || fail "a listed skip is not a skip"
check_str "CI, unlisted skip: closing line" "$(closing)" "3 passed, 1 failed, 2 skipped"
check_str "CI, unlisted skip: the failure is listed" "$(tail -n 1 "$OUT")" "failed: integration/test-gadget"

echo "integration/test-gadget	# no gadget on this machine" >>"$F/tests/allowed-skips"
runner CI=true
check_str "CI, every skip listed: exit" "$RC" 0
check_str "CI, every skip listed: closing line" "$(closing)" "3 passed, 0 failed, 3 skipped"

# exit 77 without a line saying why is not a skip
printf 'exit 77\n' >"$F/tests/integration/test-gadget.sh"
runner
check_str "skip without a reason: exit" "$RC" 1
grep -q '^FAIL  integration/test-gadget .*without a SKIP line' "$OUT" ||
	fail "a skip without a reason is not a failure"

# a failing test fails the run, with its log's tail
printf 'echo it broke\nexit 3\n' >"$F/tests/integration/test-fine.sh"
runner
check_str "failing test: exit" "$RC" 1
grep -q '^FAIL  integration/test-fine .*(exit 3' "$OUT" || fail "the failing test's exit status is not shown"
grep -q '| it broke$' "$OUT" || fail "the failing test's log is not shown"

sh "$F/tests/run" nosuchsuite >/dev/null 2>&1
check_str "unknown suite: exit" "$?" 2

# This repository's list names only tests that exist.
all=$(sh tests/run --list unit fuzz integration kernels)
for t in $(sed 's/#.*//' tests/allowed-skips | awk 'NF { print $1 }'); do
	printf '%s\n' "$all" | grep -qxF "$t" || fail "tests/allowed-skips names $t, which is no test"
done
check "tests this repository expects" "$(printf '%s\n' "$all" | wc -l)" -gt 0

finish
