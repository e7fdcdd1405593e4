#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
Checks the statistics of `mmhitm report` against scipy on the same inputs:
for every host's before/after comparison in the report's JSON, the rates
are read back from the database's path_rates view with the same window and
warm-up rule, and

  - medians and the relative change must equal numpy's;
  - the Mann-Whitney U statistic and p-value must equal
    scipy.stats.mannwhitneyu(method="asymptotic") (tie and continuity
    corrections, two-sided);
  - the bootstrap interval must agree with scipy.stats.bootstrap
    (method="percentile", same number of resamples) within its Monte Carlo
    resolution: each end within the spread of scipy's own bootstrap
    distribution between the neighbouring quantiles (level +- 1 %), since
    the PRNGs differ;
  - the fleet's Wilcoxon signed-rank test must equal scipy.stats.wilcoxon
    (method="approx") on the per-host log changes, and the paired interval
    must agree with scipy's bootstrap of their mean as above.

Usage: report-scipy.py REPORT.json
"""
import json
import math
import sqlite3
import sys

import numpy as np
from scipy import stats

failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


def close(a, b, rel=1e-9, abs_=1e-12):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def resolution(dist, q):
    """The spread of a bootstrap distribution around its q-quantile."""
    lo = np.percentile(dist, max(0.0, 100 * (q - 0.01)))
    hi = np.percentile(dist, min(100.0, 100 * (q + 0.01)))
    return hi - lo


def check_ci(mine_lo, mine_hi, res, level, what):
    a = (1 - level) / 2
    dist = res.bootstrap_distribution
    tol_lo = resolution(dist, a) + 1e-9 * max(1.0, abs(mine_lo))
    tol_hi = resolution(dist, 1 - a) + 1e-9 * max(1.0, abs(mine_hi))
    check(abs(mine_lo - res.confidence_interval.low) <= tol_lo,
          "%s: CI low %.6g vs scipy %.6g (tolerance %.3g)" % (what, mine_lo, res.confidence_interval.low, tol_lo))
    check(abs(mine_hi - res.confidence_interval.high) <= tol_hi,
          "%s: CI high %.6g vs scipy %.6g (tolerance %.3g)" % (what, mine_hi, res.confidence_interval.high, tol_hi))


def rates(db, path, lo, hi, warmup_ns):
    # The report's rule: measured rates (hitm_per_work not NULL) of intervals
    # starting in [lo, hi), except those within the warm-up after their boot.
    rows = db.execute(
        "SELECT r.hitm_per_work FROM path_rates r JOIN boots b USING (boot_id)"
        " WHERE r.path = ? AND r.start_ns >= ? AND r.start_ns < ?"
        "   AND r.hitm_per_work IS NOT NULL"
        "   AND r.start_ns >= coalesce(b.boot_time_ns, b.first_seen_ns) + ?",
        (path, lo, hi, warmup_ns)).fetchall()
    return np.array([r[0] for r in rows], dtype=float)


def main():
    rep = json.load(open(sys.argv[1]))
    par = rep["parameters"]
    level = par["confidence_level"]
    B = par["bootstrap_resamples"]
    warmup_ns = int(par["warmup_s"] * 1e9)
    rng = np.random.default_rng(12345)
    compared = 0
    for h in rep["hosts"]:
        db = sqlite3.connect("file:%s?mode=ro" % h["db"], uri=True)
        for p, hp in h["paths"].items():
            for c in hp["comparisons"]:
                what = "%s %s rollout %d" % (h["hostname"], p, c["rollout"])
                x = rates(db, p, c["before"]["from_ns"], c["before"]["to_ns"], warmup_ns)
                y = rates(db, p, c["after"]["from_ns"], c["after"]["to_ns"], warmup_ns)
                check(len(x) == c["before"]["n"] and len(y) == c["after"]["n"],
                      "%s: counts %d/%d vs %d/%d" % (what, c["before"]["n"], c["after"]["n"], len(x), len(y)))
                if len(x) == 0 or len(y) == 0:
                    continue
                compared += 1
                check(close(np.median(x), c["before"]["median"]), "%s: median before" % what)
                check(close(np.median(y), c["after"]["median"]), "%s: median after" % what)
                check(close(np.percentile(x, 25), c["before"]["p25"]), "%s: p25 before" % what)
                check(close(np.median(y) / np.median(x) - 1, c["change"]), "%s: change" % what)
                mw = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
                check(close(mw.statistic, c["mann_whitney_u"]),
                      "%s: U %r vs scipy %r" % (what, c["mann_whitney_u"], mw.statistic))
                check(close(mw.pvalue, c["mann_whitney_p"], rel=1e-7, abs_=1e-300),
                      "%s: p %r vs scipy %r" % (what, c["mann_whitney_p"], mw.pvalue))
                if c["ci_low"] is None:
                    continue
                res = stats.bootstrap((x, y), lambda a, b, axis: np.median(b, axis=axis) / np.median(a, axis=axis) - 1,
                                      vectorized=True, paired=False, n_resamples=B, confidence_level=level,
                                      method="percentile", random_state=rng)
                check_ci(c["ci_low"], c["ci_high"], res, level, what)
        db.close()
    check(compared >= 8, "only %d comparisons checked" % compared)

    # The fleet: per-host log changes of the chosen comparisons.
    for fp in rep["paths"]:
        p = fp["path"]
        d = []
        for h in rep["hosts"]:
            hp = h["paths"][p]
            if hp["chosen"] is None:
                continue
            c = hp["comparisons"][hp["chosen"]]
            d.append(math.log(c["after"]["median"] / c["before"]["median"]))
        if not d or fp["paired"] is None:
            continue
        d = np.array(d)
        check(close(math.exp(d.mean()) - 1, fp["paired"]["change"]), "%s: paired change" % p)
        if np.any(d != 0):
            w = stats.wilcoxon(d, method="approx")
            check(close(w.statistic, fp["wilcoxon_t"]), "%s: Wilcoxon T %r vs %r" % (p, fp["wilcoxon_t"], w.statistic))
            check(close(w.pvalue, fp["wilcoxon_p"], rel=1e-7), "%s: Wilcoxon p %r vs %r" % (p, fp["wilcoxon_p"], w.pvalue))
        res = stats.bootstrap((d,), lambda a, axis: np.exp(np.mean(a, axis=axis)) - 1, vectorized=True,
                              n_resamples=B, confidence_level=level, method="percentile", random_state=rng)
        check_ci(fp["paired"]["ci_low"], fp["paired"]["ci_high"], res, level, "%s fleet paired" % p)

    print("%d of %d checks failed" % (failures, checks) if failures else "%d checks passed" % checks)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
