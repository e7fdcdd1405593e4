#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The HTML report in headless Chromium: it loads without a single console
# message (the page has no script; a Content-Security-Policy violation or
# an error would be one), every section is there, the charts are, the
# process named <script>alert(1)</script> is text and no element, and
# nothing is fetched. The screenshot stays in $O/test-artifacts/.
set -u
. tests/integration/report-lib.sh
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null 2>&1 || skip "no chromium (make deps-test)"
out=$O/test-report-html
art=$O/test-artifacts
rm -rf "$out"
mkdir -p "$out" "$art"
out=$(cd "$out" && pwd)

chrome() {	# ARGS... (stderr to $out/chrome.err)
	profile=$(mktemp -d)
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" --enable-logging=stderr --v=0 "$@" 2>"$out/chrome.err"
	rc=$?
	rm -rf "$profile"
	return $rc
}

fleet mixed
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --html "$out/report.html" --quiet \
	"$FLEET"/*.db || fail "report failed"
html=$out/report.html

# Self-contained: no script, no URL to fetch, the policy that forbids both.
grep -qi '<script' "$html" && fail "the HTML has a <script>"
grep -Eqi '(src|href)="?(https?:|//)' "$html" && fail "the HTML refers to the network"
grep -Eqi 'https?://' "$html" && fail "the HTML holds a URL"
grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$html" || fail "no CSP"
echo "ok: self-contained"

# The console check must be able to fail: a control page that logs.
printf '<!DOCTYPE html><html><body><script>console.error("mmhitm-control")</script></body></html>' \
	> "$out/control.html"
chrome --dump-dom "file://$out/control.html" > /dev/null || skip "chromium does not run here"
grep -q 'CONSOLE.*mmhitm-control' "$out/chrome.err" ||
	skip "this chromium does not log console messages to stderr; cannot check them"

chrome --dump-dom "file://$html" > "$out/dom.html" || fail "chromium failed on the report"
if grep -q 'CONSOLE' "$out/chrome.err"; then
	grep 'CONSOLE' "$out/chrome.err" | head -5
	fail "console messages while loading the report"
fi
echo "ok: no console messages"
for id in summary rollouts path-P1 path-P2 path-P3 path-P4 hitm-share hosts quality methods; do
	grep -q "<section id=\"$id\"" "$out/dom.html" || fail "section $id missing from the DOM"
done
echo "ok: every section"
svgs=$(grep -o '<svg' "$out/dom.html" | wc -l)
[ "$svgs" -ge 14 ] || fail "only $svgs charts"
echo "ok: $svgs charts"
# The hostile strings are text: escaped in the serialized DOM, never an element.
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$out/dom.html" || fail "the <script> process name is not shown as text"
grep -qi '<script' "$out/dom.html" && fail "a <script> element made it into the DOM"
grep -q 'web-&lt;b&gt;09&lt;/b&gt; &amp;' "$out/dom.html" || fail "the hostname with markup is not shown as text"
grep -q '<b>09</b>' "$out/dom.html" && fail "a hostname became markup"
echo "ok: hostile strings are text"

chrome --window-size=1280,5000 --screenshot="$out/report.png" "file://$html" > /dev/null ||
	fail "screenshot failed"
[ -s "$out/report.png" ] || fail "empty screenshot"
cp "$out/report.png" "$art/report.png"
cp "$html" "$art/report.html"
echo "ok: screenshot in $art/report.png"
echo "PASS"
