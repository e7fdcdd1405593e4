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
  - the interval of the change: each side cut into two blocks of whole
    days (the first one days // 2 long), the blocks' medians recomputed;
    their logs through scipy.stats.ttest_ind(after, before,
    equal_var=False) give the standard error and, with the
    Welch-Satterthwaite degrees of freedom, the p-value; the interval is
    the pooled medians' log change +- scipy.stats.t.ppf * se;
  - the fleet's Wilcoxon signed-rank test must equal scipy.stats.wilcoxon
    (method="approx") on the per-host log changes, and the paired interval
    scipy.stats.t.interval around scipy.stats.ttest_1samp's mean and sem;
  - what the fleet takes from each host (its "fleet" object): the windows'
    levels, scipy.stats.trim_mean(rates, 0.1), their log change, and the
    covariates, each side's 2 days next to the change against the rest;
  - every interval's equivalence interval (eq_low, eq_high): the same t
    interval at level 2 * level - 1 (scipy.stats.t.interval(0.90, ...));
  - with one cohort, the difference in differences must equal Welch's
    interval (ttest_ind(equal_var=False)) of the treated hosts' log changes
    against the controls' that the JSON lists per host; when it is
    regression-adjusted, the slopes must equal numpy.linalg.lstsq of the
    log changes on (1, rolled, covariates), the estimate its coefficient of
    "rolled", and the standard error and degrees of freedom the ones
    docs/statistics.md defines.

Usage: report-scipy.py REPORT.json [MIN_DID_CHECKS]
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


def t_check(lo, hi, est, se, df, level, mine_lo, mine_hi, what):
    q = stats.t.ppf(1 - (1 - level) / 2, df)
    check(close(est - q * se, mine_lo, rel=1e-7, abs_=1e-9),
          "%s: CI low %r vs scipy %r" % (what, mine_lo, est - q * se))
    check(close(est + q * se, mine_hi, rel=1e-7, abs_=1e-9),
          "%s: CI high %r vs scipy %r" % (what, mine_hi, est + q * se))


def welch(a, b):
    """se and Welch-Satterthwaite df of mean(a) - mean(b), checked against ttest_ind."""
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    if se == 0:
        return se, math.nan
    res = stats.ttest_ind(a, b, equal_var=False)
    if se > 0:
        check(close(res.statistic, (np.mean(a) - np.mean(b)) / se, rel=1e-9), "Welch statistic")
        check(close(res.pvalue, 2 * stats.t.sf(abs(res.statistic), df), rel=1e-7), "Welch df")
    return se, df


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


def fleet_input(db, p, lo, t, hi, warmup_ns, fi, what):
    """A host's levels (10 %-trimmed means), their log change and the near-days covariates."""
    near = 2 * DAY
    level = lambda a, b: stats.trim_mean(rates(db, p, a, b, warmup_ns), 0.1)
    lb, la = level(lo, t), level(t, hi)
    check(close(lb, fi["level_before"]) and close(la, fi["level_after"]), "%s: levels" % what)
    check(close(math.log(la / lb), fi["log_change"]), "%s: level log change" % what)
    if t - lo <= near or hi - t <= near:
        check(fi["near"] is None, "%s: covariates without the days" % what)
        return
    parts = [level(t - near, t), level(lo, t - near), level(t, t + near), level(t + near, hi)]
    if not all(v > 0 for v in parts):   # a part without rates (nan) or with a level of 0
        check(fi["near"] is None, "%s: covariates without rates in each part" % what)
        return
    x = [math.log(parts[0] / parts[1]), math.log(parts[2] / parts[3])]
    check(fi["near"] is not None and np.allclose(x, fi["near"], rtol=1e-9, atol=1e-12),
          "%s: covariates %r vs %r" % (what, fi["near"], x))


def eq_check(est, se, df, level, ci, what):
    """The equivalence interval: the same t interval at 2 * level - 1."""
    lo, hi = stats.t.interval(2 * level - 1, df, loc=est, scale=se) if se > 0 else (est, est)
    check(close(lo, math.log1p(ci["eq_low"]), rel=1e-7, abs_=1e-9) and
          close(hi, math.log1p(ci["eq_high"]), rel=1e-7, abs_=1e-9), "%s: equivalence interval" % what)


def adjusted(ya, xa, yb, xb):
    """One cohort: the regression-adjusted DiD's estimate, slopes, se and df (docs/statistics.md)."""
    na, nb, k = len(ya), len(yb), xa.shape[1]
    n = na + nb
    design = np.column_stack([np.ones(n), np.r_[np.ones(na), np.zeros(nb)], np.vstack([xa, xb])])
    beta, *_ = np.linalg.lstsq(design, np.r_[ya, yb], rcond=None)
    theta = beta[2:]
    xc = np.vstack([xa - xa.mean(0), xb - xb.mean(0)])
    resid = np.r_[ya - ya.mean(), yb - yb.mean()] - xc @ theta
    rdf = n - 2 - k
    gap = xa.mean(0) - xb.mean(0)
    vt = resid @ resid / rdf * gap @ np.linalg.solve(xc.T @ xc, gap)
    aa, bb = ya - xa @ theta, yb - xb @ theta
    dfa, dfb = na - 1 - k * na / n, nb - 1 - k * nb / n
    va = ((aa - aa.mean()) ** 2).sum() / dfa / na
    vb = ((bb - bb.mean()) ** 2).sum() / dfb / nb
    v = va + vb + vt
    return beta[1], theta, math.sqrt(v), v * v / (va * va / dfa + vb * vb / dfb + vt * vt / rdf)


def check_did(rep, fp, p, d, xd, level):
    """One cohort: the DiD is Welch's interval of treated against control log changes, or adjusted."""
    if fp["did"] is None or len(rep["cohorts"]) != 1:
        return 0
    b, xb = [], []
    for h in rep["hosts"]:
        for c in h["paths"][p]["controls"]:
            check(close(c["log_change"], math.log(c["after"]["median"] / c["before"]["median"])),
                  "%s %s: control log change" % (h["hostname"], p))
            db = sqlite3.connect("file:%s?mode=ro" % h["db"], uri=True)
            fleet_input(db, p, c["before"]["from_ns"], c["before"]["to_ns"], c["after"]["to_ns"],
                        int(rep["parameters"]["warmup_s"] * 1e9), c["fleet"], "%s %s control" % (h["hostname"], p))
            db.close()
            b.append(c["fleet"]["log_change"])
            xb.append(c["fleet"]["near"])
    b = np.array(b)
    adj = fp["did"]["adjustment"]
    if adj["applied"]:
        est, theta, se, df = adjusted(d, np.array(xd, dtype=float), b, np.array(xb, dtype=float))
        check(np.allclose(theta, adj["theta"], rtol=1e-7, atol=1e-12), "%s: DiD slopes" % p)
    else:
        se, df = welch(d, b)
        est = d.mean() - b.mean()
    check(close(est, fp["did"]["log_change"], rel=1e-9, abs_=1e-12), "%s: DiD estimate" % p)
    check(close(se, fp["did"]["log_se"], rel=1e-9) and close(df, fp["did"]["df"], rel=1e-9),
          "%s: DiD se/df" % p)
    t_check(0, 0, est, se, df, level, math.log1p(fp["did"]["ci_low"]), math.log1p(fp["did"]["ci_high"]),
            "%s fleet DiD" % p)
    eq_check(est, se, df, level, fp["did"], "%s fleet DiD" % p)
    return 1 + adj["applied"]


DAY = 86400 * 10**9


def main():
    rep = json.load(open(sys.argv[1]))
    par = rep["parameters"]
    level = par["confidence_level"]
    warmup_ns = int(par["warmup_s"] * 1e9)
    day = DAY
    compared = 0
    intervals = 0
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
                if np.median(x) > 0 and np.median(y) > 0:
                    fleet_input(db, p, c["before"]["from_ns"], c["before"]["to_ns"], c["after"]["to_ns"],
                                warmup_ns, c["fleet"], what)
                mw = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
                check(close(mw.statistic, c["mann_whitney_u"]),
                      "%s: U %r vs scipy %r" % (what, c["mann_whitney_u"], mw.statistic))
                check(close(mw.pvalue, c["mann_whitney_p"], rel=1e-7, abs_=1e-300),
                      "%s: p %r vs scipy %r" % (what, c["mann_whitney_p"], mw.pvalue))
                check(c["too_short"] == (c["data_days_before"] < 2 or c["data_days_after"] < 2), "%s: too short" % what)
                if rep["hosts"][0]["hostname"] == "large":     # the scipy fleet
                    check(c["too_short"] == (h["hostname"] == "small"), "%s: only the 8-hour host is too short" % what)
                if c["ci_low"] is None:
                    check(c["too_short"] or min(len(x), len(y)) < par["min_intervals"],
                          "%s: no interval without a reason" % what)
                    continue
                intervals += 1
                b0, a0 = c["before"]["from_ns"], c["after"]["from_ns"]
                cb, ca = b0 + c["days_before"] // 2 * day, a0 + c["days_after"] // 2 * day
                bm = [np.median(rates(db, p, b0, cb, warmup_ns)), np.median(rates(db, p, cb, c["before"]["to_ns"], warmup_ns))]
                am = [np.median(rates(db, p, a0, ca, warmup_ns)), np.median(rates(db, p, ca, c["after"]["to_ns"], warmup_ns))]
                check(np.allclose(bm, c["blocks"]["before_medians"], rtol=1e-12) and
                      np.allclose(am, c["blocks"]["after_medians"], rtol=1e-12), "%s: block medians" % what)
                se, df = welch(np.log(am), np.log(bm))
                est = math.log(np.median(y) / np.median(x))
                check(close(est, c["log_change"]), "%s: log change" % what)
                if se == 0:
                    # Every block's median equal: no spread, the interval is the point.
                    check(c["blocks"]["log_se"] == 0 and c["ci_low"] == c["ci_high"] == c["change"],
                          "%s: a point interval" % what)
                    continue
                check(close(se, c["blocks"]["log_se"], rel=1e-9) and close(df, c["blocks"]["df"], rel=1e-9),
                      "%s: se/df %r/%r vs %r/%r" % (what, c["blocks"]["log_se"], c["blocks"]["df"], se, df))
                t_check(0, 0, est, se, df, level, math.log1p(c["ci_low"]), math.log1p(c["ci_high"]), what)
                eq_check(est, se, df, level, c, what)
        db.close()
    check(compared >= 8, "only %d comparisons checked" % compared)
    check(intervals >= 8, "only %d intervals checked" % intervals)

    # The fleet: per-host log changes of the chosen comparisons' levels.
    dids = 0
    for fp in rep["paths"]:
        p = fp["path"]
        d, xd = [], []
        for h in rep["hosts"]:
            hp = h["paths"][p]
            if hp["chosen"] is None:
                continue
            c = hp["comparisons"][hp["chosen"]]
            d.append(c["fleet"]["log_change"])
            xd.append(c["fleet"]["near"])
        if not d or fp["paired"] is None:
            continue
        d = np.array(d)
        check(close(math.exp(d.mean()) - 1, fp["paired"]["change"]), "%s: paired change" % p)
        if np.any(d != 0):
            w = stats.wilcoxon(d, method="approx")
            check(close(w.statistic, fp["wilcoxon_t"]), "%s: Wilcoxon T %r vs %r" % (p, fp["wilcoxon_t"], w.statistic))
            check(close(w.pvalue, fp["wilcoxon_p"], rel=1e-7), "%s: Wilcoxon p %r vs %r" % (p, fp["wilcoxon_p"], w.pvalue))
        tt = stats.ttest_1samp(d, 0)
        check(close(tt.pvalue, fp["paired"]["p"], rel=1e-7), "%s: paired p %r vs %r" % (p, fp["paired"]["p"], tt.pvalue))
        lo, hi = stats.t.interval(level, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
        check(close(lo, math.log1p(fp["paired"]["ci_low"]), rel=1e-7) and
              close(hi, math.log1p(fp["paired"]["ci_high"]), rel=1e-7),
              "%s fleet paired: %r..%r vs scipy %r..%r" % (p, fp["paired"]["ci_low"], fp["paired"]["ci_high"],
                                                         math.expm1(lo), math.expm1(hi)))
        eq_check(d.mean(), stats.sem(d), len(d) - 1, level, fp["paired"], "%s fleet paired" % p)
        dids += check_did(rep, fp, p, d, xd, level)

    if len(sys.argv) > 2:
        check(dids >= int(sys.argv[2]), "only %d difference-in-differences intervals checked" % dids)
    print("%d of %d checks failed" % (failures, checks) if failures else "%d checks passed" % checks)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
