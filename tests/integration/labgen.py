#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
Lab databases with known truth, and an independent recomputation of
`mmhitm lab report`'s table from a database (test-lab.sh, test-rollout).

  labgen.py gen DB [--seed N] [--boots B] [--runs R] [--name NAME]
      A lab of mmhitm-load ctxswitch at 1, 2 and 4 CPUs with its private-mm
      controls, B boots of a base and a patched kernel, as `mmhitm lab run`
      and mmhitmd would leave it: each run between two interval edges (one
      run also cut by a regular flush), the gaps between runs, and on one
      boot no daemon cuts at all (one long interval over every run, which
      belongs to none). The patched kernel is 2.4 % faster on the shared
      configurations, the controls unchanged; HITM sampled on the base and
      the patched side, P1's rate 2.0 -> 0.5 per 1000 same-mm switches on the
      shared configurations, 0.1 on both sides of the controls.

  labgen.py check DB REPORT.json
      Recomputes every configuration from the tables (lab_runs, lab_boots,
      intervals, path_intervals; not the views the report reads) with
      Python's statistics and scipy's t quantiles, and compares.
"""
import json
import math
import os
import random
import sqlite3
import statistics
import sys
import uuid
from glob import glob

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NS = 1000000000
KERNELS = {"base": ("6.1.0-lab", "#1 SMP PREEMPT_DYNAMIC base"),
           "patched": ("6.12.0-lab", "#1 SMP PREEMPT_DYNAMIC patched")}


def create_db(path):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    db = sqlite3.connect(path)
    last = 0
    for f in sorted(glob(os.path.join(TOP, "schema", "[0-9]*.sql"))):
        db.executescript(open(f).read())
        last = int(os.path.basename(f).split("-")[0])
    db.execute("PRAGMA user_version = %d" % last)
    db.execute("PRAGMA application_id = %d" % 0x4d4d4854)
    db.execute("INSERT INTO meta (key, value) VALUES ('simulated', 'labgen.py')")
    return db


class Boot:
    def __init__(self, db, rng, side, seq, boot_id, t0, cuts):
        self.db, self.rng, self.side, self.seq, self.id = db, rng, side, seq, boot_id
        self.uuid = str(uuid.UUID(int=rng.getrandbits(128)))
        self.t, self.cuts, self.level = t0, cuts, math.exp(rng.gauss(0, 0.004))
        rel, ver = KERNELS[side]
        db.execute("INSERT INTO boots (boot_id, host_id, boot_uuid, first_seen_ns, last_seen_ns,"
                   " kernel_release, kernel_version, arch, nr_cpus_online, cache_line_size,"
                   " page_size, pmu_kind, lru_gen) VALUES (?, 1, ?, ?, ?, ?, ?, 'x86_64', 8, 64,"
                   " 4096, 'intel-pebs', 'on')", (boot_id, self.uuid, t0, t0, rel, ver))
        db.execute("INSERT INTO lab_boots VALUES (1, ?, ?, ?, ?, ?, ?, NULL)",
                   (self.uuid, rel, ver, side, seq, t0))
        self.open_start = t0

    def interval(self, start, end, switches, rate):
        cur = self.db.execute("INSERT INTO intervals (boot_id, start_ns, end_ns, partial, ctxt)"
                              " VALUES (?, ?, ?, 1, ?)", (self.id, start, end, switches))
        iid = cur.lastrowid
        hitm = int(round(switches * rate / 1000))
        for p in ("P1", "P2", "P3", "P4"):
            own = p == "P1"
            self.db.execute("INSERT INTO path_intervals (interval_id, path, lcl_hitm, rmt_hitm, peer,"
                            " samples, work, work_source, work_unit) VALUES (?, ?, ?, 0, 0, ?, ?, ?, ?)",
                            (iid, p, hitm if own else 7, 100, switches if own else 1000,
                             "derived:same_mm_switches" if own else "tlb:tlb_flush",
                             "same-mm context switches" if own else "TLB flushes and zaps"))

    def run(self, config, run, value, seconds, rate, split):
        start, end = self.t + NS // 50, self.t + NS // 50 + int(seconds * NS)
        switches = int(value * seconds * 4)
        if self.cuts:
            self.interval(self.open_start, start - NS // 1000, 1000, rate)   # the gap
            if split:   # a regular flush in the midst of the run
                mid = (start + end) // 2
                self.interval(start - NS // 1000, mid, switches // 2, rate)
                self.interval(mid, end + NS // 1000, switches - switches // 2, rate)
            else:
                self.interval(start - NS // 1000, end + NS // 1000, switches, rate)
            self.open_start = end + NS // 1000
        self.db.execute("INSERT INTO lab_runs VALUES (1, ?, ?, ?, ?, ?, ?, 'context_switches_per_s_per_cpu',"
                        " '/s/CPU', 1, NULL)", (self.uuid, config, run, start, end, value))
        self.t = end

    def finish(self):
        if not self.cuts:   # one interval over every run: it belongs to none
            self.interval(self.open_start, self.t + NS, 10 ** 9, 9.0)
        else:
            self.interval(self.open_start, self.t + NS, 1000, 2.0)
        self.db.execute("UPDATE lab_boots SET done_ns = ? WHERE boot_uuid = ?", (self.t + NS, self.uuid))
        self.db.execute("UPDATE boots SET last_seen_ns = ? WHERE boot_id = ?", (self.t + NS, self.id))


def gen(path, seed, boots, runs, name):
    rng = random.Random(seed)
    db = create_db(path)
    db.execute("INSERT INTO hosts VALUES (1, 'labgen', 'labgen')")
    db.execute("INSERT INTO labs VALUES (1, ?, 'ctxswitch', 'P1', ?, ?, 10000000000, NULL, 0)",
               (name, runs, boots))
    configs = []
    for at in (1, 2, 4):
        for control in (0, 1):
            args = "--cpus 0-%d%s --duration 10000ms" % (at - 1, " --private-mm" if control else "")
            configs.append((len(configs), at, control, args))
            db.execute("INSERT INTO lab_configs VALUES (1, ?, ?, ?, ?)", configs[-1])
    level = {1: 1.10e6, 2: 1.09e6, 4: 1.08e6}
    t, boot_id = 1796000000 * NS, 1
    for side in ("base", "patched"):
        for seq in range(1, boots + 1):
            b = Boot(db, rng, side, seq, boot_id, t, cuts=not (side == "base" and seq == 2))
            for run in range(1, runs + 1):
                for c, at, control, _ in configs:
                    eff = 1.024 if side == "patched" and not control else 1.0
                    v = level[at] * eff * b.level * math.exp(rng.gauss(0, 0.003))
                    rate = 0.1 if control else 2.0 if side == "base" else 0.5
                    b.run(c, run, round(v, 3), 10.0, rate, split=(run == 2 and c == 0))
            b.finish()
            t, boot_id = b.t + 600 * NS, boot_id + 1
    db.commit()
    db.close()


def t_quantile(p, df):
    from scipy import stats
    return stats.t.ppf(p, df)


def expected(db, lab, level=0.95):
    """Per configuration: the sides' boot medians, means, change, interval, HITM rates."""
    out = {}
    cfgs = db.execute("SELECT config, at, control FROM lab_configs WHERE lab_id = ?", (lab,)).fetchall()
    for config, at, control in cfgs:
        e = {"at": at, "control": bool(control)}
        for side in ("base", "patched"):
            meds = []
            for (u,) in db.execute("SELECT boot_uuid FROM lab_boots WHERE lab_id = ? AND side = ?"
                                   " ORDER BY seq", (lab, side)).fetchall():
                v = [r[0] for r in db.execute("SELECT value FROM lab_runs WHERE lab_id = ? AND boot_uuid = ?"
                                              " AND config = ? AND value IS NOT NULL", (lab, u, config))]
                if v:
                    meds.append(statistics.median(v))
            e[side] = meds
        b, p = e["base"], e["patched"]
        e["change"] = statistics.mean(p) / statistics.mean(b) - 1 if b and p else None
        e["interval"] = None
        if len(b) >= 2 and len(p) >= 2:
            lb, lp = [math.log(x) for x in b], [math.log(x) for x in p]
            se = math.sqrt(statistics.variance(lb) / len(lb) + statistics.variance(lp) / len(lp))
            d = statistics.mean(lp) - statistics.mean(lb)
            q = t_quantile(0.5 + level / 2, min(len(lb), len(lp)) - 1)
            e["interval"] = [math.expm1(d - q * se), math.expm1(d + q * se)]
        e["rate"] = {s: hitm_rate(db, lab, config, s) for s in ("base", "patched")}
        out[config] = e
    return out


def hitm_rate(db, lab, config, side):
    """P1's HITM per 1000 units of work over the intervals lying mostly in the side's runs."""
    hitm = work = 0
    rows = db.execute("SELECT r.start_ns, r.end_ns, b.boot_id FROM lab_runs r JOIN lab_boots l"
                      " USING (lab_id, boot_uuid) JOIN boots b ON b.boot_uuid = r.boot_uuid"
                      " WHERE r.lab_id = ? AND r.config = ? AND l.side = ? AND r.value IS NOT NULL",
                      (lab, config, side))
    for start, end, boot in rows.fetchall():
        for iid, s, e in db.execute("SELECT interval_id, start_ns, end_ns FROM intervals WHERE boot_id = ?",
                                    (boot,)).fetchall():
            overlap = min(e, end) - max(s, start)
            if overlap <= 0 or 2 * overlap <= e - s:
                continue
            row = db.execute("SELECT lcl_hitm + rmt_hitm + peer, work FROM path_intervals WHERE"
                             " interval_id = ? AND path = 'P1'", (iid,)).fetchone()
            if row and row[0] is not None and row[1] is not None:
                hitm, work = hitm + row[0], work + row[1]
    return hitm * 1000.0 / work if work else None


def close(a, b, what, tol=1e-9):
    if a is None or b is None:
        if a is not b:
            raise SystemExit("%s: %r vs %r" % (what, a, b))
        return
    if abs(a - b) > tol * max(1.0, abs(a), abs(b)):
        raise SystemExit("%s: report %r, recomputed %r" % (what, a, b))


def check(path, report):
    db = sqlite3.connect(path)
    rep = json.load(open(report))
    lab = db.execute("SELECT lab_id FROM labs WHERE name = ?", (rep["lab"],)).fetchone()
    if not lab:
        raise SystemExit("no lab %r in %s" % (rep["lab"], path))
    exp = expected(db, lab[0])
    n = 0
    for c in rep["configs"]:
        e = exp[c["config"]]
        w = "config %d (at %d%s)" % (c["config"], e["at"], ", control" if e["control"] else "")
        for side in ("base", "patched"):
            got = [b["median"] for b in c[side]["boots"]]
            if len(got) != len(e[side]):
                raise SystemExit("%s %s: %d boot medians, recomputed %d" % (w, side, len(got), len(e[side])))
            for k, (g, x) in enumerate(zip(got, e[side])):
                close(g, x, "%s %s boot %d median" % (w, side, k + 1))
            close(c[side]["value"], statistics.mean(e[side]) if e[side] else None, w + " " + side + " value")
            close(c[side].get("hitm_per_work") if c[side]["hitm"] is not None else None,
                  e["rate"][side], w + " " + side + " HITM per work")
        close(c["change"], e["change"], w + " change")
        if (c["interval"] is None) != (e["interval"] is None):
            raise SystemExit("%s interval: %r vs %r" % (w, c["interval"], e["interval"]))
        if e["interval"]:
            close(c["interval"][0], e["interval"][0], w + " interval low", 1e-6)
            close(c["interval"][1], e["interval"][1], w + " interval high", 1e-6)
            shown = "higher" if e["interval"][0] > 0 else "lower" if e["interval"][1] < 0 else "not shown"
            if c["shown"] != shown:
                raise SystemExit("%s: shown %r, recomputed %r" % (w, c["shown"], shown))
        n += 1
    if n != len(exp):
        raise SystemExit("the report has %d configurations, the database %d" % (n, len(exp)))
    print("%d configurations: boot medians, values, changes, intervals and HITM rates as recomputed" % n)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "gen":
        args = sys.argv[3:]
        opt = {"--seed": "1", "--boots": "2", "--runs": "5", "--name": "p1-gen"}
        for i in range(0, len(args) - 1, 2):
            opt[args[i]] = args[i + 1]
        gen(sys.argv[2], int(opt["--seed"]), int(opt["--boots"]), int(opt["--runs"]), opt["--name"])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
