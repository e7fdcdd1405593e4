#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
Synthetic fleets for `mmhitm report`: one SQLite database per host, made
with the real schema (schema/*.sql applied in order, user_version set as
mmhitmd would), holding what the daemon and the analyzer would leave there:
hosts, boots (kernel changes are the rollouts), ksyms markers, intervals with
collector health, sampling, path_intervals (HITM and work per path), and a
few typed cache lines (mem_lines, line_attribution, mm_objects). Each file
says it is simulated (meta 'simulated' = 'fleetgen.py'), and every report
over it says so.

Every effect is constructed and known, so the report's verdicts can be
checked against it:

  mixed   24 hosts: 14 roll 6.1 -> 6.12-mmfix over three days (one rolls back
          two days later, one has no PMU), 6 stay on 6.1, 2 were already on
          6.12; a fleet-wide load trend, per-host noise, gaps, lost events,
          hostile strings (a hostname with markup, a process named
          <script>alert(1)</script>). Effects of 6.12-mmfix: P1 -40 %,
          P2 -25 %, P3 +20 %, P4 none.
  noise   the same fleet with no effect on any path.
  scipy   5 hosts with one rollout each and different sample shapes
          (small n, heavy ties, large n, no effect, odd/even counts), for
          the comparison with scipy.
  bench   N hosts (--hosts) over --days days at --interval seconds, a third
          of them rolling mid-range: for timing the report.
  drift   hosts as they misbehave: --hosts roll 6.1 -> 6.12-mmfix over a
          day and as many keep 6.1; each host's level drifts day to day
          (AR(1) on the log, 4 % a day, phi 0.8), the rate cycles daily,
          2 % of intervals burst 3x, baselines differ 2x, and a fleet-wide
          load step of --load-step (relative, e.g. 0.08) raises every host's
          rate from the rollout's first day. Effects: --effect P1=-0.2,P4=0.15
          (none by default). The calibration over many seeds is
          tests/unit/test-calibration.c; this is the same model end to end.
  one     one host, as its own weekly report sees it: 6.1 from a week
          before, 6.12-mmfix from 06:00 for --days-after days (7), the drift
          fleet's drift, boots with LRU_GEN --lru-gen (on, off, absent),
          effects as --effect.

Usage: fleetgen.py SPEC OUTDIR [--hosts N] [--days D] [--interval S] [--seed S]
                  [--effect P1=-0.2,...] [--load-step X] [--days-after D] [--lru-gen STATE]
                  [--clickhouse URL [--grain S] [--batch N]] [--sqlite-first N]
Writes OUTDIR/<host>.db and OUTDIR/patches.conf; prints the report range as
"since=@S until=@S".

--clickhouse http://HOST:PORT/?database=DB loads the same fleet into the
cluster (schema/clickhouse, `mmhitm ship --init`): hosts, boots, ksyms,
hitm_lines and the roll-ups interval_rollup and path_rollup at --grain
seconds, with exactly the rows `mmhitm ship` would send for the hosts'
SQLite files (only final buckets, as common/rollup.c defines them), but
without writing or shipping them; the per-interval tables (intervals,
event_counts, path_intervals) are not loaded. --sqlite-first N writes only
the first N hosts' SQLite files (the same draws), for a comparison on a
subset; 0 writes none. 10,000 hosts x 7 days (bench --days 3.5 --interval
600) is ~10 M buckets and ~60 M path rows, sent as RowBinary.

Rates are Poisson counts of HITM over Poisson work with
log-normal overdispersion; the RNG is numpy's PCG64 seeded with --seed.
"""
import argparse
import hashlib
import math
import os
import sqlite3
import sys
from glob import glob

import numpy as np

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NS = 1_000_000_000
DAY = 86400 * NS
T0 = 1740960000 * NS          # 2025-03-03T00:00:00Z, a Monday

PATHS = ["P1", "P2", "P3", "P4"]
# Per path: mean work per 10 minutes, units per `per` of paths.per, and the
# mean HITM per `per` units of work (what the report's rate is).
WORK_PER_10MIN = {"P1": 300000.0, "P2": 3.0, "P3": 60000.0, "P4": 120000.0}
PER = {"P1": 1000.0, "P2": 1.0, "P3": 1000.0, "P4": 1000.0}
RATE = {"P1": 0.5, "P2": 40.0, "P3": 2.0, "P4": 1.5}

KERNELS = {
    "old": dict(release="6.1.0-47-cloud-amd64",
                version="#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-02-10)",
                build_id="0d1e2f3a4b5c6d7e8f9000112233445566778899", markers=[]),
    "new": dict(release="6.12.38-mmfix1-cloud-amd64",
                version="#1 SMP PREEMPT_DYNAMIC Debian 6.12.38-1mmfix1 (2025-03-01)",
                build_id="5a3c1e0f9d2b7a6c5e4f30211f0e0d0c0b0a0908",
                markers=["maybe_lru_add_drain"]),
}

# Column lists everywhere: later schema versions add columns.
PATH_INSERT = ("INSERT INTO path_intervals (interval_id, path, lcl_hitm, rmt_hitm, peer, samples, work)")

PATCH_MAP = """# Synthetic fleet (tests/integration/fleetgen.py)
lacks   all    release 6.1.*
carries P1-P3  release 6.12.*-mmfix*
carries P4     ksym    maybe_lru_add_drain
"""


class Host:
    def __init__(self, name, boots, interval_s=600, pmu=True, effects=None,
                 gaps=(), lost=0, comm=None, ties=False, hostname=None,
                 host_scale=1.0, drift=None, step=None, lru_gen="unknown"):
        self.name = name                  # file name, and hostname unless given
        self.hostname = hostname or name
        self.boots = boots                # [(kernel key, start_ns, end_ns)]
        self.interval_s = interval_s
        self.pmu = pmu
        self.effects = effects or {}      # path -> multiplier on kernels carrying it
        self.gaps = gaps                  # [(lo_ns, hi_ns)] with no intervals
        self.lost = lost                  # intervals with lost events
        self.comm = comm or "postgres"
        self.ties = ties                  # small integer rates: many ties
        self.host_scale = host_scale
        self.drift = drift                # (phi, sd per day, burst share) or None
        self.step = step                  # (t_ns, factor): fleet-wide load step
        # boots.lru_gen: 'on', 'off', 'absent', or 'unknown' (as an imported
        # recording's): these fleets draw every path on every host, which no
        # one LRU_GEN state runs (P2 needs it on, P3 off), so they say unknown.
        self.lru_gen = lru_gen


def drift_factor(h, rng, t):
    """Per interval: the host's drifting daily level, a daily cycle of the rate, bursts."""
    if not h.drift:
        return np.ones(len(t))
    phi, sd, burst = h.drift
    day = ((t - T0) // DAY).astype(np.int64)
    lo = int(day.min())
    n = int(day.max()) - lo + 1
    level = np.empty(n)
    x = rng.normal(0, sd / math.sqrt(1 - phi * phi))
    for d in range(n):
        x = phi * x + rng.normal(0, sd)
        level[d] = x
    hour = ((t - T0) % DAY) / (3600 * NS)
    f = np.exp(level[day - lo]) * (1 + 0.15 * np.sin(2 * np.pi * hour / 24))
    f[rng.random(len(t)) < burst] *= 3
    if h.step:
        f[t >= h.step[0]] *= h.step[1]
    return f


def carries(kernel, path):
    if kernel == "old":
        return False
    return True   # 6.12-mmfix carries P1-P3 by release, P4 by its ksym marker


def create_db(path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    db = sqlite3.connect(path)
    # A generated file needs no durability: no fsync per statement.
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA journal_mode = MEMORY")
    last = 0
    for f in sorted(glob(os.path.join(TOP, "schema", "[0-9]*.sql"))):
        db.executescript(open(f).read())
        last = int(os.path.basename(f).split("-")[0])
    db.execute("PRAGMA user_version = %d" % last)
    db.commit()
    return db


def trend(t_ns):
    """Fleet-wide load: a slow swell of +-6 % over four days, and a daily cycle."""
    d = (t_ns - T0) / DAY
    return (1 + 0.06 * np.sin(2 * np.pi * d / 4.0)) * (1 + 0.1 * np.sin(2 * np.pi * d))


PERIODIC_LINES = [("P1", "mm_struct", "lru_gen.bitmap", 0x3c8), ("P2", "page", "flags", 0),
                  ("P3", "lruvec", "nonresident_age", 0x50), ("P4", "lruvec", "lru_lock", 0x40),
                  ("other:mm_struct", "mm_struct", "mm_count", 0x40)]
LINE_SYMBOLS = ["lru_gen_use_mm+0x2c", "folio_update_gen+0x41", "workingset_age_nonresident+0x12",
                "folio_batch_move_lru+0x9a", "mmgrab+0x8"]
DUTY = 0.25      # sampling's active share of an interval


def gen_host(h, rng, seed_tag):
    """Everything a host's database holds, drawn from rng in one fixed order
    (the SQLite file and the cluster load are written from the same draws)."""
    g = dict(machine_id=hashlib.md5(("%s/%s" % (seed_tag, h.name)).encode()).hexdigest(), boots=[])
    base = {p: RATE[p] * h.host_scale * math.exp(rng.normal(0, 0.3)) for p in PATHS}
    iv = h.interval_s * NS
    interval_id = 0
    mm_id = 0
    for b, (kernel, start, end) in enumerate(h.boots, start=1):
        bt = dict(b=b, kernel=kernel, start=start, end=end,
                  uuid="%s-%04x" % (g["machine_id"][:8], b), n=0, paths={}, lines=[], mm=None)
        g["boots"].append(bt)
        t = np.arange(start + 30 * NS, end - iv, iv, dtype=np.int64)
        for lo, hi in h.gaps:
            t = t[(t + iv <= lo) | (t >= hi)]
        n = len(t)
        bt["t"], bt["n"] = t, n
        if n == 0:
            continue
        ids = np.arange(interval_id + 1, interval_id + 1 + n)
        bt["ids"] = ids
        interval_id += n
        lost = np.zeros(n, dtype=np.int64)
        if h.lost:
            lost[rng.choice(n, size=min(h.lost, n), replace=False)] = rng.integers(1, 500, size=min(h.lost, n))
        bt["lost"] = lost
        scale = h.interval_s / 600.0
        lt = trend(t)
        # One drift for all paths of a boot: the host's load mix moves them together.
        df = drift_factor(h, rng, t)
        for p in PATHS:
            eff = h.effects.get(p, 1.0) if carries(kernel, p) else 1.0
            lam_w = WORK_PER_10MIN[p] * scale * lt
            work = rng.poisson(lam_w).astype(float)
            if h.ties:
                work[:] = 1000.0 if PER[p] == 1000.0 else 10.0
            noise = np.exp(rng.normal(0, 0.25, size=n))
            lam = base[p] * eff * noise * df * work / PER[p]
            hitm = rng.poisson(lam)
            if h.ties:
                hitm = rng.poisson(np.full(n, 3.0 * eff))
            lcl = rng.binomial(hitm, 0.6)
            rmt = rng.binomial(hitm - lcl, 0.7)
            peer = hitm - lcl - rmt
            # (lcl, rmt, peer, samples) are NULL without a PMU
            bt["paths"][p] = ((lcl, rmt, peer, hitm * 3) if h.pmu else None, work)
        # What stays outside P1..P4 stays visible.
        if h.pmu:
            one = np.ones(n, dtype=np.int64)
            bt["paths"]["other:mm_struct"] = ((2 * one, one, 0 * one, 6 * one), None)
            bt["paths"]["unresolved"] = ((one, 0 * one, one, 4 * one), None)
            # Typed cache lines, once a day per path, so the tables have rows.
            mm_id += 1
            bt["mm"] = (mm_id, -0x76ff00000000 + mm_id * 0x1000, 4000 + mm_id, h.comm)
            for d in range(0, n, max(1, int(86400 / h.interval_s))):
                for pi, (p, obj, field, off) in enumerate(PERIODIC_LINES):
                    line = -0x76ff00000000 + mm_id * 0x1000 + pi * 0x100 + (off & ~63)
                    ip = -0x7effff000000 + pi * 0x40
                    c = int(rng.integers(5, 50))
                    if h.comm != "postgres":
                        c *= 20     # the hostile name must reach the top lines
                    bt["lines"].append((int(ids[d]), int(t[d]), line, off & 63, ip, c, obj, field, pi, p))
    return g


def write_host(outdir, h, rng, seed_tag, g=None):
    if g is None:
        g = gen_host(h, rng, seed_tag)
    db = create_db(os.path.join(outdir, h.name + ".db"))
    cur = db.cursor()
    cur.execute("BEGIN")
    # Generated, not recorded: the report labels these hosts simulated.
    cur.execute("INSERT INTO meta (key, value) VALUES ('simulated', 'fleetgen.py')")
    cur.execute("INSERT INTO hosts (host_id, machine_id, hostname) VALUES (1, ?, ?)",
                (g["machine_id"], h.hostname))
    iv = h.interval_s * NS
    for bt in g["boots"]:
        b, start, end = bt["b"], bt["start"], bt["end"]
        k = KERNELS[bt["kernel"]]
        cur.execute(
            "INSERT INTO boots (boot_id, host_id, boot_uuid, boot_time_ns, first_seen_ns,"
            " last_seen_ns, kernel_release, kernel_version, kernel_build_id, arch,"
            " nr_cpus_online, cache_line_size, page_size, pmu_kind, pmu_detail, lru_gen,"
            " lru_gen_features, btf) VALUES (?,1,?,?,?,?,?,?,?,'x86_64',64,64,4096,?,?,?,?,'vmlinux')",
            (b, bt["uuid"], start, start + 30 * NS, end, k["release"], k["version"], k["build_id"],
             "intel-pebs" if h.pmu else "none", pmu_detail(h), h.lru_gen,
             {"on": "0x0007", "off": "0x0000"}.get(h.lru_gen)))
        for i, m in enumerate(k["markers"]):
            cur.execute("INSERT INTO ksyms (boot_id, addr, size, name) VALUES (?, ?, 512, ?)",
                        (b, -0x7e000000 + i * 4096, m))
        n = bt["n"]
        if n == 0:
            continue
        t, ids = bt["t"], bt["ids"]
        idl = ids.tolist()
        tl = t.tolist()
        cur.executemany(
            "INSERT INTO intervals (interval_id, boot_id, start_ns, end_ns, events_lost,"
            " cpu_user_ns, cpu_sys_ns, rss_kb, ctxt, forks) VALUES (?,?,?,?,?,20000000,10000000,9000,5000000,300)",
            zip(idl, [b] * n, tl, (t + iv).tolist(), bt["lost"].tolist()))
        if h.pmu:
            cur.executemany(
                "INSERT INTO sampling (interval_id, pmu_events, active_ns, samples, samples_kernel)"
                " VALUES (?, 'cpu/mem-loads,ldlat=30/P', ?, 5000, 4800)",
                zip(idl, [int(DUTY * iv)] * n))
        for p, (hv, work) in bt["paths"].items():
            if hv is None:
                nul = [None] * n
                rows = zip(idl, [p] * n, nul, nul, nul, nul, work.tolist())
            else:
                rows = zip(idl, [p] * n, hv[0].tolist(), hv[1].tolist(), hv[2].tolist(), hv[3].tolist(),
                           work.tolist() if work is not None else [None] * n)
            cur.executemany(PATH_INSERT + " VALUES (?,?,?,?,?,?,?)", rows)
        cur.execute("INSERT INTO analysis_state (boot_id, last_interval_id, rules_digest, analyzed_ns,"
                    " struct_page_size, calibration) VALUES (?, ?, 'synthetic', ?, 64, 'synthetic')",
                    (b, int(ids[-1]), end))
        if bt["mm"]:
            mm_id, addr, tgid, comm = bt["mm"]
            cur.execute("INSERT INTO mm_objects (mm_object_id, boot_id, addr, tgid, comm, memcg_id,"
                        " learned_from, alloc_ns, first_seen_ns, last_seen_ns)"
                        " VALUES (?, ?, ?, ?, ?, 3, 'fork', ?, ?, ?)",
                        (mm_id, b, addr, tgid, comm, start, start, end))
            for (iid, _t, line, off, ip, c, obj, field, pi, p) in bt["lines"]:
                cur.execute("INSERT INTO mem_lines (interval_id, line_addr, offset, ip, callchain_id,"
                            " kernel, loads, stores, lcl_hitm, rmt_hitm, lcl_peer) VALUES (?,?,?,?,0,1,?,?,?,?,?)",
                            (iid, line, off, ip, c * 4, c, c, c // 2, c // 4))
                cur.execute("INSERT INTO line_attribution (interval_id, line_addr, offset, ip,"
                            " callchain_id, object_type, object_ref, field, field_offset, symbol,"
                            " path, reason) VALUES (?,?,?,?,0,?,?,?,?,?,?,'synthetic')",
                            (iid, line, off, ip, obj, mm_id if obj == "mm_struct" else None, field, off,
                             LINE_SYMBOLS[pi], p))
    db.commit()
    db.close()


def pmu_detail(h):
    return ("cpu/mem-loads,ldlat=30/P,cpu/mem-stores/P" if h.pmu else
            "perf_event_open(mem-loads): ENOENT: no PEBS in this VM")


# --- the cluster ------------------------------------------------------------
#
# A fleet loaded straight into the ClickHouse cluster (schema/clickhouse):
# hosts, boots, ksyms markers, the typed lines (hitm_lines) and the two
# roll-up tables the report reads (002-rollup.sql), with exactly what
# `mmhitm ship` sends for the same hosts' SQLite files: every interval in
# the bucket of grain_s its start falls in, summed per boot. The roll-ups
# go as RowBinary built from numpy structured arrays (a row is its
# columns' bytes: no per-row Python), one INSERT per table and 100 hosts.

def tsv(v):
    if v is None:
        return "\\N"
    if isinstance(v, str):
        return v.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return str(v)


def rowbinary(n, cols):
    """n rows of cols [(kind, value)]: kind 'str' (bytes, one length for
    all rows), 'u4', 'i8', 'u8', 'f8' (a scalar or n values), 'null' (a
    Nullable that is NULL) or 'nn:<kind>' (a Nullable with values)."""
    fields, fill = [], []
    for i, (kind, v) in enumerate(cols):
        if kind == "str":
            v = np.asarray(v, dtype="S")
            size = v.dtype.itemsize
            assert size < 128 and (v.ndim == 0 or (np.char.str_len(v) == size).all())
            fields += [("l%d" % i, "u1"), ("v%d" % i, "S%d" % size)]
            fill += [("l%d" % i, size), ("v%d" % i, v)]
        elif kind == "null":
            fields.append(("n%d" % i, "u1"))
            fill.append(("n%d" % i, 1))
        elif kind.startswith("nn:"):
            fields += [("n%d" % i, "u1"), ("v%d" % i, "<" + kind[3:])]
            fill += [("n%d" % i, 0), ("v%d" % i, v)]
        else:
            fields.append(("v%d" % i, "<" + kind))
            fill.append(("v%d" % i, v))
    a = np.empty(n, dtype=np.dtype(fields))     # packed: a row is its columns' bytes
    for name, v in fill:
        a[name] = v
    return a.tobytes()


class Stream:
    """The INSERTs of one table, one per chunk of hosts, sent by a thread of
    its own while the next chunk is drawn. One endless INSERT would be
    fewer parts, but 18.16 charges a streamed INSERT's blocks to the query
    until it ends and stops it at max_memory_usage."""

    def __init__(self, url, table, fmt):
        import http.client
        import queue
        import threading
        import urllib.parse
        u = urllib.parse.urlsplit(url)
        params = dict(urllib.parse.parse_qsl(u.query))
        self.db = params.pop("database", "mmhitm")
        params["query"] = "INSERT INTO %s.%s FORMAT %s" % (self.db, table, fmt)
        # Every shard has its rows when the INSERT returns.
        params["insert_distributed_sync"] = "1"
        self.path = (u.path or "/") + "?" + urllib.parse.urlencode(params)
        # A connection per INSERT: ClickHouse closes an idle one after 3 s,
        # and writing SQLite files between two chunks takes longer.
        self.connect = lambda: http.client.HTTPConnection(u.hostname, u.port or 8123, timeout=3600)
        self.table, self.rows, self.bytes, self.inserts, self.error = table, 0, 0, 0, None
        self.q = queue.Queue(maxsize=2)
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        while True:
            b = self.q.get()
            if b is None:
                return
            if self.error:      # the first failure stands; the rest is drained
                continue
            try:
                conn = self.connect()
                conn.request("POST", self.path, body=b)
                r = conn.getresponse()
                text = r.read().decode(errors="replace")
                conn.close()
                if r.status != 200:
                    self.error = "HTTP %d: %s" % (r.status, text.strip()[:500])
                self.inserts += 1
            except Exception as e:      # the server went away: say so
                self.error = str(e)

    def put(self, data, rows):
        if data:
            self.q.put(data)
            self.rows += rows
            self.bytes += len(data)

    def close(self):
        self.q.put(None)
        self.th.join()
        if self.error:
            raise RuntimeError("ClickHouse did not take %s: %s" % (self.table, self.error))


class ClusterLoad:
    TABLES = [("hosts", "TabSeparated"), ("boots", "TabSeparated"), ("ksyms", "TabSeparated"),
              ("hitm_lines", "TabSeparated"), ("interval_rollup", "RowBinary"),
              ("path_rollup", "RowBinary")]

    def __init__(self, url, grain_s, batch, chunk_hosts=100):
        self.grain_s, self.batch, self.chunk_hosts = grain_s, batch, chunk_hosts
        self.streams = {t: Stream(url, t, f) for t, f in self.TABLES}
        self.pending = 0
        self._reset()

    def _reset(self):
        self.text = {t: [] for t, f in self.TABLES if f == "TabSeparated"}
        self.ivr = []       # (machine_id, uuid, arrays...) per boot
        self.pr = {}        # (path, measured, has work) -> [arrays per boot]

    def add(self, h, g):
        mid, bat, G = g["machine_id"], self.batch, self.grain_s
        self.text["hosts"].append("\t".join(map(tsv, [mid, h.hostname, bat])))
        iv = h.interval_s * NS
        for bt in g["boots"]:
            k = KERNELS[bt["kernel"]]
            self.text["boots"].append("\t".join(map(tsv, [
                mid, bt["uuid"], "live", bt["start"], bt["start"] + 30 * NS, bt["end"], k["release"],
                k["version"], k["build_id"], "x86_64", 64, 64, 4096, "intel-pebs" if h.pmu else "none",
                pmu_detail(h), h.lru_gen, "vmlinux", bat])))
            for i, m in enumerate(k["markers"]):
                self.text["ksyms"].append("\t".join(map(tsv, [mid, bt["uuid"], -0x7e000000 + i * 4096, 512, m,
                                                              None, bat])))
            if bt["mm"]:
                _mm, _addr, tgid, comm = bt["mm"]
                for (_iid, t, line, off, ip, c, obj, field, pi, p) in bt["lines"]:
                    own = obj == "mm_struct"
                    self.text["hitm_lines"].append("\t".join(map(tsv, [
                        mid, bt["uuid"], t, line, off, ip, "", obj, field, LINE_SYMBOLS[pi], p, None, None,
                        tgid if own else None, comm if own else None, c * 4, c, c, c // 2, c // 4, 0, bat])))
            n = bt["n"]
            if n == 0:
                continue
            t = bt["t"]
            gn = G * NS
            # Only final buckets are shipped (common/rollup.c): the host's
            # newest boot holds back the bucket its newest interval is in.
            if bt is g["boots"][-1]:
                t = t[(t // gn) * gn + gn <= t[-1]]
                n = len(t)
                if n == 0:
                    continue
            bucket = (t // gn) * gn
            first = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
            last = np.r_[first[1:], n] - 1
            cnt = (last - first + 1).astype(np.uint32)
            nb = len(first)
            lost = np.add.reduceat(bt["lost"][:n], first)
            self.ivr.append((mid, bt["uuid"], nb, bucket[first], t[first], t[last] + iv, cnt, lost,
                             cnt if h.pmu else np.zeros(nb, np.uint32),
                             cnt.astype(np.int64) * int(DUTY * iv) if h.pmu else np.zeros(nb, np.int64)))
            for p, (hv, work) in bt["paths"].items():
                key = (p, hv is not None, work is not None)
                hitm = np.add.reduceat((hv[0] + hv[1] + hv[2])[:n], first) if hv is not None else None
                samples = np.add.reduceat(hv[3][:n], first) if hv is not None else None
                w = np.add.reduceat(work[:n], first) if work is not None else None
                ws = cnt * float(h.interval_s) if work is not None else np.zeros(nb)
                self.pr.setdefault(key, []).append((mid, bt["uuid"], nb, bucket[first], cnt, hitm, samples, w, ws))
        self.pending += 1
        if self.pending >= self.chunk_hosts:
            self.flush()

    def flush(self):
        for t, lines in self.text.items():
            if lines:
                self.streams[t].put(("\n".join(lines) + "\n").encode(), len(lines))
        if self.ivr:
            n = sum(x[2] for x in self.ivr)
            cat = lambda i: np.concatenate([x[i] for x in self.ivr])
            rep = lambda i: np.repeat(np.array([x[i] for x in self.ivr], dtype="S"), [x[2] for x in self.ivr])
            z64 = np.zeros(n, np.int64)
            self.streams["interval_rollup"].put(rowbinary(n, [
                ("str", rep(0)), ("str", rep(1)), ("u4", self.grain_s), ("i8", cat(3)), ("i8", cat(4)),
                ("i8", cat(5)), ("u4", cat(6)), ("u4", 0), ("u4", 0), ("i8", cat(7)), ("i8", z64),
                ("u4", cat(8)), ("i8", cat(9)), ("i8", z64), ("i8", z64), ("u8", self.batch)]), n)
        for (p, measured, has_work), parts in self.pr.items():
            n = sum(x[2] for x in parts)
            cat = lambda i: np.concatenate([x[i] for x in parts])
            rep = lambda i: np.repeat(np.array([x[i] for x in parts], dtype="S"), [x[2] for x in parts])
            self.streams["path_rollup"].put(rowbinary(n, [
                ("str", rep(0)), ("str", rep(1)), ("u4", self.grain_s), ("i8", cat(3)), ("str", p.encode()),
                ("u4", cat(4)), ("nn:i8", cat(5)) if measured else ("null", None),
                ("nn:i8", cat(6)) if measured else ("null", None),
                ("nn:f8", cat(7)) if has_work else ("null", None), ("f8", cat(8)), ("u8", self.batch)]), n)
        self.pending = 0
        self._reset()

    def close(self):
        self.flush()
        err = None
        for s in self.streams.values():
            try:
                s.close()
            except RuntimeError as e:
                err = err or e
        if err:
            raise err
        return {t: (s.rows, s.bytes, s.inserts) for t, s in self.streams.items()}


def staggered(day, hour):
    return T0 + day * DAY + hour * 3600 * NS


def fleet_mixed(effects, seed_tag):
    end = T0 + 14 * DAY
    begin = T0 - 3600 * NS
    hosts = []
    # 14 hosts roll onto the fix in three waves: days 9, 10 and 11.
    for i in range(14):
        t = staggered(9 + i % 3, 2 + i)
        boots = [("old", begin, t - 90 * NS), ("new", t, end)]
        kw = {}
        if i == 4:
            # Rolls back two days later.
            boots = [("old", begin, t - 90 * NS), ("new", t, t + 2 * DAY - 90 * NS),
                     ("old", t + 2 * DAY, end)]
        if i == 7:
            kw["pmu"] = False
        if i == 2:
            kw["gaps"] = [(t - 2 * DAY, t - 2 * DAY + 6 * 3600 * NS)]
            kw["lost"] = 40
        if i == 5:
            kw["comm"] = "<script>alert(1)</script>"
        if i == 9:
            kw["hostname"] = 'web-<b>09</b> & "x\'y"'
        hosts.append(Host("rolled-%02d" % i, boots, effects=effects, **kw))
    for i in range(6):
        hosts.append(Host("steady-old-%02d" % i, [("old", begin, end)], effects=effects))
    for i in range(2):
        hosts.append(Host("steady-new-%02d" % i, [("new", begin, end)], effects=effects))
    # Two reboots without a kernel change are no rollout.
    hosts.append(Host("rebooted-00", [("old", begin, T0 + 10 * DAY), ("old", T0 + 10 * DAY + 120 * NS, end)],
                      effects=effects))
    hosts.append(Host("rebooted-01", [("new", begin, T0 + 11 * DAY), ("new", T0 + 11 * DAY + 120 * NS, end)],
                      effects=effects))
    return hosts, T0 + 7 * DAY, end


def fleet_scipy(seed_tag):
    end = T0 + 14 * DAY
    t = T0 + 10 * DAY
    eff = {"P1": 0.7, "P2": 0.9, "P3": 1.1, "P4": 1.0}
    hosts = [
        # ~45 intervals a side.
        Host("small", [("old", t - 8 * 3600 * NS - 60 * NS, t - 90 * NS), ("new", t, t + 8 * 3600 * NS + 31 * 60 * NS)],
             effects=eff),
        Host("ties", [("old", T0 - 3600 * NS, t - 90 * NS), ("new", t, end)], effects=eff, ties=True,
             interval_s=1800),
        Host("large", [("old", T0 - 3600 * NS, t - 90 * NS), ("new", t, end)], effects=eff, interval_s=300),
        Host("null", [("old", T0 - 3600 * NS, t - 90 * NS), ("new", t + 3600 * NS, end)], effects={}),
        Host("odd", [("old", T0 - 3600 * NS, t - 90 * NS), ("new", t + 7200 * NS, end)], effects=eff,
             interval_s=900, host_scale=3.0),
    ]
    return hosts, T0 + 7 * DAY, end


def fleet_bench(n, days, interval_s):
    span = int(days * DAY)      # days may be a fraction: 3.5 is a week of data
    end = T0 + 2 * span
    begin = T0 - 3600 * NS
    eff = {"P1": 0.6, "P2": 0.75, "P3": 1.2, "P4": 1.0}
    hosts = []
    for i in range(n):
        if i % 3 == 0:
            t = T0 + span + (i % max(1, int(days * 24))) * 3600 * NS
            boots = [("old", begin, t - 90 * NS), ("new", t, end)]
        else:
            boots = [("old", begin, end)]
        hosts.append(Host("host-%04d" % i, boots, interval_s=interval_s, effects=eff,
                          pmu=(i % 50 != 7)))
    return hosts, T0 + span, end


def fleet_drift(n, effects, load_step):
    end = T0 + 14 * DAY
    begin = T0 - 3600 * NS
    t0 = T0 + 7 * DAY
    step = (t0, 1 + load_step) if load_step else None
    hosts = []
    for i in range(n):
        t = t0 + (i * 24 * 3600 * NS) // n     # over one day: one cohort
        hosts.append(Host("rolled-%02d" % i, [("old", begin, t - 90 * NS), ("new", t, end)],
                          effects=effects, drift=(0.8, 0.04, 0.02), step=step,
                          host_scale=math.exp(0.35 * (2 * (i * 0.618 % 1) - 1))))
    for i in range(n):
        hosts.append(Host("steady-%02d" % i, [("old", begin, end)], drift=(0.8, 0.04, 0.02), step=step,
                          host_scale=math.exp(0.35 * (2 * (i * 0.382 % 1) - 1))))
    return hosts, t0, end


def fleet_one(days_after, effects, lru_gen):
    """One host, as one host's own report sees it: a week of 6.1, the change at
    06:00, days_after days of 6.12-mmfix, the drift fleet's day-to-day drift."""
    begin = T0 - 3600 * NS
    t = T0 + 7 * DAY + 6 * 3600 * NS
    end = t + int(days_after * DAY)
    h = Host("rolled-00", [("old", begin, t - 90 * NS), ("new", t, end)], effects=effects,
             drift=(0.8, 0.04, 0.02), lru_gen=lru_gen)
    return [h], T0 + 7 * DAY, end


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spec", choices=["mixed", "noise", "scipy", "bench", "drift", "one"])
    ap.add_argument("outdir")
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--days", type=float, default=7,
                    help="bench: days in the report range (3.5: half days); data starts as long before")
    ap.add_argument("--interval", type=int, default=None,
                    help="seconds per interval (bench: default 300; the others keep their own)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first", type=int, default=0, help="bench: write hosts from this index")
    ap.add_argument("--step", type=int, default=1, help="bench: every step-th host (parallel runs)")
    ap.add_argument("--effect", default="", help="drift, one: PATH=RELATIVE,... e.g. P1=-0.2,P4=0.15")
    ap.add_argument("--days-after", type=float, default=7, help="one: days recorded after the change")
    ap.add_argument("--lru-gen", default="on", choices=["on", "off", "absent", "unknown"],
                    help="one: the boots' LRU_GEN state")
    ap.add_argument("--load-step", type=float, default=0.0, help="drift: fleet-wide step at the rollout")
    ap.add_argument("--clickhouse", metavar="URL",
                    help="also load the fleet into the cluster at URL (http://HOST:PORT/?database=DB):"
                    " hosts, boots, ksyms, hitm_lines and the roll-ups; SQLite files only with --sqlite-first")
    ap.add_argument("--grain", type=int, default=600, help="--clickhouse: the roll-up's grain_s")
    ap.add_argument("--batch", type=int, default=1, help="--clickhouse: the rows' batch (version)")
    ap.add_argument("--sqlite-first", type=int, default=None, metavar="N",
                    help="write SQLite files for the first N hosts only (the same draws as the cluster's)")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    if a.spec == "mixed":
        hosts, since, until = fleet_mixed({"P1": 0.6, "P2": 0.75, "P3": 1.2, "P4": 1.0}, a.spec)
    elif a.spec == "noise":
        hosts, since, until = fleet_mixed({}, a.spec)
    elif a.spec == "scipy":
        hosts, since, until = fleet_scipy(a.spec)
    elif a.spec in ("drift", "one"):
        eff = {k: 1 + float(v) for k, v in (e.split("=") for e in a.effect.split(",") if e)}
        if a.spec == "one":
            hosts, since, until = fleet_one(a.days_after, eff, a.lru_gen)
        else:
            hosts, since, until = fleet_drift(a.hosts, eff, a.load_step)
    else:
        hosts, since, until = fleet_bench(a.hosts, a.days, a.interval or 300)
        hosts = hosts[a.first::a.step]
    if a.interval and a.spec != "bench":
        # The same fleet recorded at another interval (e.g. 60 s, the daemon's default).
        for h in hosts:
            h.interval_s = a.interval
    load = ClusterLoad(a.clickhouse, a.grain, a.batch) if a.clickhouse else None
    n_sqlite = len(hosts) if a.sqlite_first is None else a.sqlite_first
    for i, h in enumerate(hosts):
        rng = np.random.Generator(np.random.PCG64([a.seed, i + a.first, sum(map(ord, h.name))]))
        g = gen_host(h, rng, a.spec)
        if i < n_sqlite:
            write_host(a.outdir, h, rng, a.spec, g)
        if load:
            load.add(h, g)
    if load:
        for t, (rows, size, inserts) in load.close().items():
            print("%s: %d rows, %.1f MB in %d inserts" % (t, rows, size / 1e6, inserts), file=sys.stderr)
    with open(os.path.join(a.outdir, "patches.conf"), "w") as f:
        f.write(PATCH_MAP)
    print("since=@%d until=@%d" % (since // NS, until // NS))


if __name__ == "__main__":
    sys.exit(main())
