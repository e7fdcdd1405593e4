#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
window-stats.py URL DATABASE REPORT.json PATHS.conf: the statistics
`mmhitm report` computes per host, path and window from the roll-up
buckets, computed instead in the cluster, and checked against the report.

The question behind it (issue 30, point 4): can the cluster answer what the
verdicts need, per window rather than per bucket, exactly, on ClickHouse
18.16, and how long does it take? The windows are the report's own (a
host's comparisons: before, after, their day blocks, the near and far days
of the regression adjustment; and its control windows), read from the
report's JSON of the same cluster (`mmhitm report --source clickhouse://...
--json`). For each, the cluster computes the measured count, the median
and quartiles (numpy's linear rule), the 10 % trimmed mean, the mean
sampling duty and the excluded counts (warm-up, no PMU, idle), in one
query per BATCH (256) hosts; the answer is compared with the report's
numbers: counts exactly, the rest to 1e-9 relative (a trimmed mean sums in
another order).

How the query is built on 18.16, which has one JOIN per SELECT and no
window functions:
  - a bucket's time is its first interval's start (interval_rollup's
    start_ns, as the report's), joined per shard to path_rollup with a
    local (non-GLOBAL) join: the tables shard by machine_id, so each shard
    joins and aggregates its own hosts (distributed_group_by_no_merge);
  - the warm-up needs each boot's start: boots_local, joined inside it;
  - the windows travel in the query as per-host constants, one
    transform(machine_id, ...) per window slot (a hash lookup a row);
    an array of arrays indexed per row copies the whole constant into
    every row, ten times slower;
  - each row joins the windows containing it (arrayJoin), and the
    statistics are taken from the sorted rates of each (host, path, window).

Prints how many numbers were checked, how many differ, the worst relative
difference per statistic, and the queries' wall time. Exit 1 when any
differs.
"""
import json
import math
import os
import sys
import time
import urllib.error
import urllib.request

DAY = 86400 * 10**9
NEAR = 2 * DAY          # reports/report-model.h NEAR_DAYS
REL = 1e-9
COUNTS = ("n", "warmup", "no_pmu", "idle")
STATS = ("n", "median", "p25", "p75", "tmean", "duty", "warmup", "no_pmu", "idle")


def path_pers(conf):
    """path id -> its 'per' (HITM per this many units), from paths.conf."""
    per, cur = {}, None
    for line in open(conf):
        f = line.split()
        if len(f) >= 2 and f[0] == "path":
            cur = f[1]
        elif len(f) >= 2 and f[0] == "per" and cur:
            per[cur] = f[1]
    return per


class Windows:
    """Every host's windows, and the numbers the report gave for them."""

    def __init__(self, report, per):
        self.hosts = []         # machine_id
        self.wins = []          # per host: {(lo, hi): slot}
        self.checks = []        # (host, path, statistic, slot or (slot, slot), expected)
        for h in report["hosts"]:
            self.host(h, per)

    def slot(self, x, lo, hi):
        w = self.wins[x]
        return w.setdefault((lo, hi), len(w))

    def host(self, h, per):
        x = len(self.hosts)
        self.hosts.append(h["machine_id"])
        self.wins.append({})
        for p, hp in h["paths"].items():
            if p not in per:
                continue
            for c in hp["comparisons"]:
                self.comparison(x, p, c)
            for ct in hp["controls"]:
                b, a = ct["before"], ct["after"]
                self.window(x, p, b, False)
                self.window(x, p, a, False)
                self.fleet(x, p, b["from_ns"], b["to_ns"], a["to_ns"], ct["fleet"])

    def window(self, x, p, wj, full):
        i = self.slot(x, wj["from_ns"], wj["to_ns"])
        keys = ("n", "median") + (("p25", "p75") if full else ())
        for k in keys:
            self.checks.append((x, p, k, i, wj[k]))
        if full:
            self.checks.append((x, p, "duty", i, wj["duty_cycle"]))
            for e in ("warmup", "no_pmu", "idle"):
                self.checks.append((x, p, e, i, wj["excluded"][e]))

    def comparison(self, x, p, c):
        b, a = c["before"], c["after"]
        t = b["to_ns"]
        self.window(x, p, b, True)
        self.window(x, p, a, True)
        if c["blocks"] is not None:
            fb, fa = c["blocks"]["first_block_days"]
            lo = b["from_ns"]
            blocks = {
                "before_medians": ((lo, lo + fb * DAY), (lo + fb * DAY, lo + c["days_before"] * DAY)),
                "after_medians": ((t, t + fa * DAY), (t + fa * DAY, t + c["days_after"] * DAY)),
            }
            for side, bounds in blocks.items():
                for k, (l, h) in enumerate(bounds):
                    self.checks.append((x, p, "median", self.slot(x, l, h), c["blocks"][side][k]))
        self.fleet(x, p, b["from_ns"], t, a["to_ns"], c["fleet"])

    def fleet(self, x, p, lo, t, hi, fj):
        self.checks.append((x, p, "tmean", self.slot(x, lo, t), fj["level_before"]))
        self.checks.append((x, p, "tmean", self.slot(x, t, hi), fj["level_after"]))
        if fj["near"] is not None:
            self.checks.append((x, p, "near_before",
                                (self.slot(x, t - NEAR, t), self.slot(x, lo, t - NEAR)), fj["near"][0]))
            self.checks.append((x, p, "near_after",
                                (self.slot(x, t, t + NEAR), self.slot(x, t + NEAR, hi)), fj["near"][1]))


def arr(items):
    return "[" + ",".join(items) + "]"


def query(db, grain, warm_ns, per, hosts, wins, final="FINAL"):
    """The statistics of every window of hosts (a range of machine_ids)."""
    ids = arr("'" + m + "'" for m in hosts)
    slots = max(len(w) for w in wins)
    ordered = [list(w) for w in wins]   # a dict keeps its insertion order: the slots'

    def bound(k, end):
        vals = [str(b[k][end]) if k < len(b) else "0" for b in ordered]
        return "toInt64(transform(machine_id, %s, %s, toUInt64(0)))" % (ids, arr(vals))
    los = ",".join(bound(k, 0) for k in range(slots))
    his = ",".join(bound(k, 1) for k in range(slots))
    paths = sorted(per)
    names = arr("'" + p + "'" for p in paths)
    pers = arr(per[p] if "." in per[p] else per[p] + "." for p in paths)
    rate = f"toFloat64(assumeNotNull(hitm)) * transform(path, {names}, {pers}, nan) / assumeNotNull(work)"
    keys = f"machine_id >= '{min(hosts)}' AND machine_id <= '{max(hosts)}'"
    # numpy's linear quantile of the sorted s, as stats_quantile_sorted()
    def quantile(q):
        i = f"toUInt64(floor((n - 1) * {q}))"
        f = f"((n - 1) * {q} - floor((n - 1) * {q}))"
        return (f"if(n = 0, nan, if({i} + 1 >= n, s[n], if({f} = 0 OR s[{i} + 1] = s[{i} + 2], s[{i} + 1],"
                f" s[{i} + 1] + {f} * (s[{i} + 2] - s[{i} + 1]))))")
    return f"""
SELECT machine_id, path, wi, n, med, p25, p75, tmean, duty, warm, no_pmu, idle FROM (
SELECT machine_id, path, wi,
  countIf(m) AS n,
  arraySort(groupArrayIf(rate, m)) AS s,
  if(n = 0, nan, if(n % 2 = 1, s[intDiv(n, 2) + 1], (s[intDiv(n, 2)] + s[intDiv(n, 2) + 1]) / 2)) AS med,
  {quantile(0.25)} AS p25,
  {quantile(0.75)} AS p75,
  if(2 * toUInt64(0.1 * n) >= n, toUInt64(intDiv(n - 1, 2)), toUInt64(0.1 * n)) AS k,
  if(n = 0, nan, arraySum(arraySlice(s, k + 1, n - 2 * k)) / (n - 2 * k)) AS tmean,
  sumIf(d, m AND NOT isNaN(d)) / countIf(m AND NOT isNaN(d)) AS duty,
  countIf(w) AS warm,
  countIf(NOT w AND hitm IS NULL) AS no_pmu,
  countIf(NOT w AND hitm IS NOT NULL AND NOT m) AS idle
FROM (
  SELECT machine_id, path, hitm, work,
    [{los}] AS los, [{his}] AS his,
    arrayJoin(arrayFilter((i, lo, hi) -> st >= lo AND st < hi, arrayEnumerate(los), los, his)) - 1 AS wi,
    st < boot_start + {warm_ns} AS w,
    NOT w AND hitm IS NOT NULL AND work IS NOT NULL AND work != 0 AS m,
    if(m, {rate}, nan) AS rate,
    if(sampled > 0 AND end_ns > st, toFloat64(toFloat32(active_ns / (end_ns - st))), nan) AS d
  FROM {db}.path_rollup {final}
  ANY INNER JOIN (
    SELECT machine_id, boot_uuid, bucket_ns, start_ns AS st, end_ns, sampled, active_ns, boot_start
    FROM {db}.interval_rollup_local {final}
    ANY INNER JOIN (SELECT machine_id, boot_uuid, ifNull(boot_time_ns, first_seen_ns) AS boot_start
      FROM {db}.boots_local FINAL WHERE {keys}) USING (machine_id, boot_uuid)
    WHERE grain_s = {grain} AND {keys}
  ) USING (machine_id, boot_uuid, bucket_ns)
  WHERE grain_s = {grain} AND has({names}, path) AND {keys}
) GROUP BY machine_id, path, wi
) FORMAT TabSeparated"""


def ask(url, q):
    req = urllib.request.Request(url + "/?distributed_group_by_no_merge=1&max_query_size=100000000",
                                 data=q.encode())
    try:
        return urllib.request.urlopen(req).read().decode()
    except urllib.error.HTTPError as e:
        sys.exit("window-stats: the cluster refused the query: " + e.read().decode()[:500])
    except urllib.error.URLError as e:
        sys.exit(f"window-stats: cannot reach {url}: {e.reason}")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().split("\n")[0])
    url, db, report_json, conf = sys.argv[1:]
    report = json.load(open(report_json))
    params = report["parameters"]
    per = path_pers(conf)
    win = Windows(report, per)
    order = sorted(range(len(win.hosts)), key=lambda x: win.hosts[x])
    batch = int(os.environ.get("BATCH", "256"))
    # FINAL=no: without ReplacingMergeTree's de-duplication at read time,
    # exact only on merged parts (what the time would be if it were paid once)
    final = "" if os.environ.get("FINAL") == "no" else "FINAL"
    got, queried, seconds, qbytes, abytes = {}, 0, 0.0, 0, 0
    index = {m: x for x, m in enumerate(win.hosts)}
    for first in range(0, len(order), batch):
        part = order[first:first + batch]
        part = [x for x in part if win.wins[x]]
        if not part:
            continue
        q = query(db, int(params["rollup_s"]), int(round(params["warmup_s"] * 1e9)), per,
                  [win.hosts[x] for x in part], [win.wins[x] for x in part], final)
        t0 = time.monotonic()
        out = ask(url, q)
        seconds += time.monotonic() - t0
        queried += 1
        qbytes += len(q)
        abytes += len(out)
        for line in out.splitlines():
            f = line.split("\t")
            for k, v in zip(STATS, f[3:]):
                got[(index[f[0]], f[1], k, int(f[2]))] = float(v)

    def value(x, p, k, i):
        return got.get((x, p, k, i), 0.0 if k in COUNTS else math.nan)
    bad, worst = 0, {}
    for x, p, k, i, want in win.checks:
        if k.startswith("near"):
            a, b = value(x, p, "tmean", i[0]), value(x, p, "tmean", i[1])
            have = math.log(a / b) if a > 0 and b > 0 else math.nan
        else:
            have = value(x, p, k, i)
        want = math.nan if want is None else float(want)
        if math.isnan(want) and math.isnan(have):
            continue
        d = abs(have - want) / max(abs(want), 1e-300) if k not in COUNTS else abs(have - want)
        worst[k] = max(worst.get(k, 0.0), d)
        if not d <= (0 if k in COUNTS else REL):
            bad += 1
            if bad <= 5:
                print(f"differs: host {win.hosts[x]} {p} {k} window {i}: cluster {have}, report {want}")
    print(f"{len(win.checks)} numbers of {len(win.hosts)} hosts checked, {bad} differ;"
          " worst difference (counts absolute, the rest relative): "
          + " ".join(f"{k} {v:.1e}" for k, v in sorted(worst.items())))
    print(f"{queried} queries of {batch} hosts: {seconds:.1f} s, {qbytes / 1e6:.1f} MB asked,"
          f" {abytes / 1e6:.1f} MB answered")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
