#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The HTML charts read: in headless Chromium at a laptop's 1280 px and a
# phone's 390 px, each path section renders within the page's width (no
# sideways scrolling), chart text is at least 11 px as rendered (a phone
# gets each chart's narrow drawing), and its charts carry what a
# reader needs, checked by text in the SVG: the event study (days since
# each host's kernel change, the controls beside it) with its y axis in
# the path's unit, and time axes with full dates (the year). Screenshots
# stay in $O/test-artifacts/ to be looked at.
set -u
. tests/integration/report-lib.sh
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null 2>&1 || skip "no chromium (make deps-test)"
out=$O/test-report-charts
art=$O/test-artifacts
rm -rf "$out"
mkdir -p "$out" "$art"
out=$(cd "$out" && pwd)

fleet mixed
# shellcheck disable=SC2086
"$MMHITM" report $RANGE --patches "$FLEET/patches.conf" --html "$out/report.html" --quiet \
	"$FLEET"/*.db || fail "report failed"

# By text in the SVG, per path.
"$PY" - "$out/report.html" <<'PY' || fail "the charts lack what a reader needs"
import re, sys
html = open(sys.argv[1]).read()
for p in ("P1", "P2", "P3", "P4"):
    sec = html[html.index('<section id="path-%s"' % p):]
    sec = sec[:sec.index("</section>")]
    svgs = re.findall(r'<svg class="chart wide".*?</svg>', sec, re.S)
    # each chart drawn again for a phone, where the stylesheet shows it
    narrow = re.findall(r'<svg class="chart narrow".*?</svg>', sec, re.S)
    label = lambda s: re.search(r'aria-label="([^"]*)"', s).group(1)
    assert [label(s) for s in svgs] == [label(s) for s in narrow], (p, "wide and narrow charts differ")
    assert all('viewBox="0 0 340 ' in s for s in narrow), (p, "a narrow chart is not 340 px wide")
    ev = [s for s in svgs if "event study" in s]
    assert len(ev) == 1, (p, "event study charts", len(ev))
    assert "days since the host&#39;s kernel change" in ev[0] or "days since the host's kernel change" in ev[0], p
    assert "controls (kept their kernel)" in ev[0], (p, "no control line")
    assert re.search(r"% change of HITM per [0-9.]+ [^<]+ from the host", ev[0]), p
    # the per-host view leads; the raw medians come after, saying what they mix
    assert sec.index(ev[0]) < sec.index("rate over time"), (p, "the event study does not lead")
    assert "read the change from the event study above" in sec, (p, "no caption under the medians")
    assert "Ticks along the bottom" in sec, (p, "the time chart's marks are not explained beside it")
    times = [s for s in svgs if "rate over time" in s]
    assert times and re.search(r'class="tick"[^>]*>20\d\d-\d\d-\d\d', times[0]), (p, "no full dates")
assert "max-width:100%" in html, "charts do not scale"
# patch coverage: no line drawn over another; each path named in one legend
cov = [s for s in re.findall(r'<svg class="chart wide".*?</svg>', html, re.S) if "carrying each patch" in s]
assert len(cov) == 1, "no coverage chart"
pts = re.findall(r'<polyline class="p\d" points="([^"]*)"', cov[0])
assert pts and len(pts) == len(set(pts)), ("coverage lines drawn over each other", len(pts), len(set(pts)))
legend = " ".join(re.findall(r'<text class="legend"[^>]*>([^<]*)', cov[0]))
for p in ("P1", "P2", "P3", "P4"):
    assert len(re.findall(r"\b%s\b" % p, legend)) == 1, (p, legend)
# legends in English: "kernels that carry P1", never "kernels that carries P1"
assert re.search(r"kernels that (carry|lack) P[1-4]", html), "no patch-state legend"
assert not re.search(r"kernels that (carries|lacks) ", html), "a legend's verb does not agree"
print("charts: event study with controls, units and full dates in all 4 paths")
PY

# A time axis spans the data it shows: a recording of 19 s (the bundled
# trace.dat, imported), read with the default range (a week and the
# fortnight before it), is binned and labelled over those seconds, not
# over three weeks (it was 2 h bins then, and one sliver).
short=$out/short.db
"$MMHITM" import tests/fixtures/real/tracedat_elainecole_sched_switch_4cpu.trace.dat --db "$short" >/dev/null 2>&1 &&
	"$MMHITM" report --json --output "$out/short.json" --html "$out/short.html" --quiet "$short" ||
	fail "import and report of the bundled trace.dat failed"
"$PY" - "$short" "$out/short.json" "$out/short.html" <<'PY' || fail "a short recording's time axis does not span its data"
import calendar, json, re, sqlite3, sys
lo, hi = sqlite3.connect(sys.argv[1]).execute("SELECT min(first_seen_ns), max(last_seen_ns) FROM boots").fetchone()
d = json.load(open(sys.argv[2]))
s = d["paths"][0]["series"]
n = len(s["all"]["median"])
assert s["bin_s"] <= 30 and n * s["bin_s"] <= (hi - lo) / 1e9 + 2 * s["bin_s"], (s["bin_s"], n, (hi - lo) / 1e9)
html = open(sys.argv[3]).read()
ticks = [calendar.timegm(tuple(map(int, re.split("[-: ]", t))) + (0, 0, 0))
         for t in re.findall(r'class="tick"[^>]*>(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)<', html)]
assert len(ticks) >= 2, ("second-resolution ticks", len(ticks))
assert all(lo / 1e9 - s["bin_s"] <= t <= hi / 1e9 + s["bin_s"] for t in ticks), (lo, hi, ticks)
# One host: no event study, and no caption describing one.
for sec in re.split(r'<section id="path-', html)[1:]:
    if "No event study" in sec:
        assert "Each compared host against its own rate" not in sec, "an event study's caption without one"
assert "No event study" in html, "a one-host report drew an event study"
print("short recording: %d bins of %d s over %.1f s of data, %d time ticks inside it" % (n, s["bin_s"], (hi - lo) / 1e9, len(ticks)))
PY

# The P1 section alone, screenshot at both widths; the page must not be
# wider than the window (Chromium's layout, read back from the DOM).
"$PY" - "$out/report.html" "$out/p1.html" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index('<section id="path-P1"')
open(sys.argv[2], "w").write(s[:s.index("<body")] + "<body>" + s[i:s.index("</section>", i) + 10] +
                             "</body></html>")
PY
# measure PAGE WIDTH SCRIPT: what SCRIPT (JavaScript ending in an
# expression's value) reads of PAGE laid out WIDTH px wide. A copy without
# the page's policy, so that the script may write it into the DOM.
measure() {
	_js=$(printf '%s' "$3" | tr '\n\t' '  ')
	sed -e 's/<meta http-equiv="Content-Security-Policy"[^>]*>//' \
	    -e "s#</body>#<script>document.body.setAttribute('data-m', (function(){$_js})())</script></body>#" \
	    "$1" >"$1.measure.html"
	_profile=$(mktemp -d)
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$_profile" --window-size=$2,1800 --dump-dom "file://$1.measure.html" \
		2>/dev/null | sed -n 's/.*data-m="\([^"]*\)".*/\1/p' | head -n1
	rm -rf "$_profile"
}
for w in 1280 390; do
	profile=$(mktemp -d)
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
		--user-data-dir="$profile" --window-size=$w,1800 --screenshot="$art/report-P1-$w.png" \
		"file://$out/p1.html" >/dev/null 2>&1 || fail "chromium failed at $w px"
	rm -rf "$profile"
	size=$("$PY" -c 'import struct, sys
d = open(sys.argv[1], "rb").read(24)
assert d[:8] == b"\x89PNG\r\n\x1a\n"
print("%dx%d" % struct.unpack(">II", d[16:24]))' "$art/report-P1-$w.png") || fail "no PNG at $w px"
	[ "$size" = "${w}x1800" ] || fail "screenshot at $w px is $size"
	[ "$(stat -c %s "$art/report-P1-$w.png")" -gt 20000 ] || fail "the $w px screenshot is blank"
	# The layout's width, read back.
	sw=$(measure "$out/p1.html" $w 'var d=document.documentElement;return d.scrollWidth+" "+d.clientWidth')
	[ -n "$sw" ] || fail "no layout width read back at $w px"
	# headless Chromium may lay out a narrow window a little wider than
	# asked: what matters is no sideways scrolling in the window it has
	set -- $sw
	[ "${1:-99999}" -le "${2:-0}" ] || fail "at $w px the page is $1 px wide in a $2 px window"
	[ "${2:-99999}" -le 600 ] || [ "$w" -ge 600 ] || fail "at $w px Chromium laid out $2 px"
	echo "ok: $w px: the page is $1 px wide in a $2 px window; $art/report-P1-$w.png"
	# The whole report: no sideways scrolling (a table too wide scrolls in
	# its own box; the verdicts become one card per path on a phone), and
	# no text outside the charts under 11 px.
	m=$(measure "$out/report.html" $w 'var d=document.documentElement,f=99;
		document.querySelectorAll("body *").forEach(function(e){if(e.closest("svg"))return;
		for(var n of e.childNodes)if(n.nodeType==3\&\&n.textContent.trim()){
		f=Math.min(f,parseFloat(getComputedStyle(e).fontSize));break}});
		var tr=document.querySelector("\#summary tr:nth-child(2)");
		var cf=99,nc=0;document.querySelectorAll("svg.chart").forEach(function(s){
		var r=s.getBoundingClientRect();if(!r.width)return;nc++;
		var k=r.width/s.viewBox.baseVal.width;s.querySelectorAll("text").forEach(function(t){
		cf=Math.min(cf,parseFloat(getComputedStyle(t).fontSize)*k)})});
		return d.scrollWidth+" "+d.clientWidth+" "+f+" "+(tr?getComputedStyle(tr).display:"none")+" "+
		Math.round(cf*10)/10+" "+nc')
	set -- $m
	[ "${1:-99999}" -le "${2:-0}" ] || fail "at $w px the whole report is ${1:-?} px wide in a ${2:-?} px window"
	[ "${3:-0}" -ge 11 ] 2>/dev/null || awk -v f="${3:-0}" 'BEGIN { exit !(f >= 11) }' ||
		fail "at $w px some text is ${3:-?} px"
	if [ "$w" -lt 600 ]; then
		[ "${4:-}" = block ] || fail "at $w px the verdicts are not cards (display ${4:-?})"
	else
		[ "${4:-}" = table-row ] || fail "at $w px the verdicts are not a table (display ${4:-?})"
	fi
	# A chart's text shrinks with the chart: on a phone the report shows
	# each chart's narrow drawing, which is not scaled down.
	[ "${6:-0}" -ge 10 ] || fail "at $w px only ${6:-0} charts are shown"
	awk -v f="${5:-0}" 'BEGIN { exit !(f >= 11) }' || fail "at $w px some chart text is ${5:-?} px"
	echo "ok: $w px: the whole report is ${1:-?} px wide in a ${2:-?} px window, text at least ${3:-?} px, verdict rows '${4:-?}', the text of ${6:-?} charts at least ${5:-?} px"
done
echo "all checks passed"
