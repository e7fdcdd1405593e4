# SPDX-License-Identifier: GPL-2.0
"""
The end-to-end attribution scenario of tests/integration/test-analyze.sh.

  hitm_scenario.py write DB KALLSYMS OUT.perf.data EXPECT.json [options]
      (KALLSYMS db:FILE: use the symbols the daemon stored, written to FILE
      for the import, when the recorded kernel's /proc/kallsyms is not here)
      From what mmhitmd learned on this machine (DB: the helper processes'
      mm_structs, the vmemmap base, contended locks, the BTF layouts) and
      this kernel's kallsyms, writes perf.data with HITM samples at those
      real addresses (+ BTF field offsets) with real IPs and callchains of
      the path functions, each group meant for one path, and EXPECT.json
      saying which.

  hitm_scenario.py check DB EXPECT.json
      After `mmhitm import` and `mmhitm analyze`: where did each group
      land? Prints a table and the attribution accuracy (HITM-weighted
      share of samples in the intended path, object type, field and owner);
      exit 1 on any miss.
"""

import json
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata_write as pw  # noqa: E402

IMPORT_INTERVAL_NS = 100_000_000        # mmhitm import --interval 100ms


def u64(v):
    return v & (2**64 - 1)


def s64(v):
    v = u64(v)
    return v - 2**64 if v >= 2**63 else v


class Kallsyms:
    def __init__(self, path, rows=None):
        if rows is None:
            rows = []
            for line in open(path):
                f = line.split()
                if len(f) >= 3 and f[1] in "tTwW":
                    rows.append((int(f[0], 16), f[2]))
        rows.sort()
        self.start, self.size = {}, {}
        for i, (a, n) in enumerate(rows):
            if n in self.start or a == 0:
                continue
            nxt = next((b for b, _ in rows[i + 1:] if b > a), a + 16)
            self.start[n], self.size[n] = a, nxt - a

    @staticmethod
    def from_db(db, boot, out):
        """The symbols the daemon stored for the boot (a recording whose
        /proc/kallsyms we do not have, e.g. a QEMU guest's), also written
        to out in kallsyms format for `mmhitm import --kallsyms`, each
        followed by an end marker so sizes stay the real ones."""
        rows, lines = [], []
        for a, size, name in db.execute("SELECT addr, size, name FROM ksyms WHERE boot_id = ?"
                                        " ORDER BY addr", (boot,)):
            a = u64(a)
            rows += [(a, name), (a + (size or 16), name + ".mmhitm_end")]
            lines += ["%016x T %s" % (a, name), "%016x t %s.mmhitm_end" % (a + (size or 16), name)]
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")
        return Kallsyms(None, rows)

    def has(self, *names):
        return all(n in self.start for n in names)

    def ip(self, name, off=0x10):
        """An address inside the function: off bytes in, or its middle
        when it is shorter."""
        size = self.size[name]
        return self.start[name] + (off if off < size else size // 2)


class Scenario:
    def __init__(self, db, ks, opts):
        self.db, self.ks, self.o = db, ks, opts
        self.samples, self.groups = [], []
        self.cpu = 0
        q = db.execute
        self.boot, self.build_id, self.host, self.release = q(
            "SELECT boot_id, kernel_build_id, hostname, kernel_release FROM boots"
            " JOIN hosts USING (host_id) WHERE source = 'live' ORDER BY boot_id DESC LIMIT 1").fetchone()
        self.t_first, self.t_last = q("SELECT min(start_ns), max(end_ns) FROM intervals"
                                      " WHERE boot_id = ?", (self.boot,)).fetchone()
        self.layout = {(s, f): (o, z) for s, f, o, z in q(
            "SELECT struct, field, offset, size FROM btf_layouts WHERE boot_id = ?", (self.boot,))}
        cal = q("SELECT base, struct_page_size, pairs FROM vmemmap_calibration WHERE boot_id = ?"
                " ORDER BY pairs DESC", (self.boot,)).fetchall()
        self.vmemmap = (u64(cal[0][0]), cal[0][1]) if cal else None
        self.pfns = [r[0] for r in q("SELECT pfn FROM page_pairs WHERE boot_id = ? ORDER BY pfn",
                                     (self.boot,))]
        self.mms = [dict(id=r[0], addr=u64(r[1]), tgid=r[2], alloc=r[3], free=r[4], how=r[5])
                    for r in q("SELECT mm_object_id, addr, tgid, alloc_ns, free_ns, learned_from"
                               " FROM mm_objects WHERE boot_id = ?", (self.boot,))]
        self.locks = [u64(r[0]) for r in q("SELECT addr FROM lock_objects WHERE boot_id = ?",
                                           (self.boot,))]
        # Sample times: from 1 s into the recording; import intervals are
        # IMPORT_INTERVAL_NS from the first sample, so a time says which.
        # The first sample is at t0 exactly, so the grid is known.
        self.t0 = self.t_first + 100_000_000
        self.next_t = self.t0

    # --- helpers -----------------------------------------------------------

    def off(self, st, field):
        return self.layout.get((st, field), (None, None))[0]

    def interval_of(self, t):
        k = (t - self.t0) // IMPORT_INTERVAL_NS
        return self.t0 + k * IMPORT_INTERVAL_NS, self.t0 + (k + 1) * IMPORT_INTERVAL_NS

    def a_time(self):
        t = self.next_t
        self.next_t += 7_000_000        # spread over intervals
        if self.next_t > self.t_last - 500_000_000:
            self.next_t = self.t0 + 1
        return t

    def add(self, desc, path, addr, ip, chain, n, kind, object_type, field, tgid=None,
            times=None, ip_off=None, intended=None):
        """A group of n samples the rules should put in path; intended is
        where a perfect attribution would put them, when the rules cannot
        know (the known gaps, which count against the accuracy but do not
        fail the test). Each group gets IPs of its own (a distinct offset
        into the function) so its rows are its own."""
        if isinstance(ip, tuple) and not self.ks.has(ip[0]):
            self.skipped.append("%s: no %s among this kernel's symbols" % (desc, ip[0]))
            return
        group = len(self.groups)
        ip_v = self.ks.ip(ip[0], ip_off if ip_off is not None else 0x10 + group) \
            if isinstance(ip, tuple) else ip
        # frames this kernel lacks (inlined, renamed) are left out
        chain_v = [self.ks.ip(c, 0x20) for c in chain if self.ks.has(c)]
        for i in range(n):
            t = times[i % len(times)] if times else self.a_time()
            self.cpu ^= 1
            self.samples.append(dict(
                ip=ip_v, addr=addr, data_src=pw.data_src(kind if kind != "mix" else
                                                          ("lcl", "rmt")[i % 2]),
                time=t, pid=tgid or 0, tid=tgid or 0, cpu=self.cpu,
                callchain=chain_v, weight=150 + i))
        self.groups.append(dict(desc=desc, path=path, intended=intended or path, addr=addr,
                                ip=ip_v, chain=chain_v, n=n, object_type=object_type,
                                field=field, tgid=tgid))

    def range_free(self, a, span=4096):
        """No learned object (any time) within span bytes of a."""
        if self.vmemmap and self.vmemmap[0] <= a < self.vmemmap[0] + (1 << 40):
            return False
        for m in self.mms:
            if m["addr"] - span <= a < m["addr"] + span:
                return False
        for lk in self.locks:
            if lk - span <= a < lk + span:
                return False
        return True

    # --- the groups ----------------------------------------------------------

    def mm_groups(self):
        ks, o = self.ks, self.o
        # the process's mm, alive through every sample: learned from its
        # mmap_lock (older than the daemon), else from fork/exec and not freed
        old = sorted((m for m in self.mms if m["tgid"] == o.old_pid and m["free"] is None),
                     key=lambda m: m["how"] != "mmap_lock")
        if not old:
            sys.exit("hitm_scenario: process %d's mm_struct was not learned" % o.old_pid)
        mm = old[0]
        mm_size = self.layout[("mm_struct", "")][1]
        bitmap = self.off("mm_struct", "lru_gen.bitmap")
        if bitmap is not None and ks.has("__schedule"):
            self.add("P1: lru_gen.bitmap stored by the context switch", "P1",
                     mm["addr"] + bitmap, ("__schedule",), ["schedule", "do_sched_yield"], 8,
                     "mix", "mm_struct", "lru_gen.bitmap", mm["tgid"])
        else:
            self.skipped.append("P1 positive: this kernel has no mm_struct.lru_gen.bitmap "
                                "(no CONFIG_LRU_GEN_WALKS_MMU)")
        self.add("not P1: context-switch HITM on mm_count", "other:mm_struct",
                 mm["addr"] + self.off("mm_struct", "mm_count"), ("__schedule",),
                 ["schedule", "do_sched_yield", "do_syscall_64"], 6, "lcl", "mm_struct",
                 "mm_count", mm["tgid"])
        self.add("not P1: context-switch HITM on membarrier_state", "other:mm_struct",
                 mm["addr"] + self.off("mm_struct", "membarrier_state"), ("__schedule",),
                 ["schedule"], 3, "rmt", "mm_struct", "membarrier_state", mm["tgid"])
        self.add("not P1: the mm_cpumask behind struct mm_struct", "other:mm_struct",
                 mm["addr"] + mm_size, ("switch_mm_irqs_off",), ["__schedule", "schedule"], 2,
                 "rmt", "mm_struct", "cpu_bitmap", mm["tgid"])

        # A forked child's mm, during its life and after its free.
        kids = [m for m in self.mms if m["tgid"] in o.fork_pids and m["how"] == "fork"
                and m["alloc"] and m["free"]]
        alive_done = dead_done = False
        # learned mms whose object (sizeof + the cpumasks behind it) holds a
        mm_span = self.layout[("mm_struct", "")][1] + 128
        for m in sorted(kids, key=lambda m: m["alloc"]):
            same = [x for x in self.mms if x["addr"] <= m["addr"] < x["addr"] + mm_span]
            if not alive_done:
                t = (m["alloc"] + m["free"]) // 2
                lo, hi = self.interval_of(t)
                others = [x for x in same if x is not m and
                          (x["alloc"] or -1) < hi and (x["free"] or 2**63) > lo]
                if m["alloc"] <= lo and hi <= m["free"] and not others and t > self.t0:
                    self.add("a forked child's mm while it lived", "other:mm_struct",
                             m["addr"] + self.off("mm_struct", "mm_count"), ("__schedule",),
                             ["schedule"], 2, "lcl", "mm_struct", "mm_count", m["tgid"],
                             times=[t])
                    alive_done = True
            if not dead_done:
                t = m["free"] + 3 * IMPORT_INTERVAL_NS
                lo, hi = self.interval_of(t)
                alive = [x for x in same if (x["alloc"] or -1) < hi + IMPORT_INTERVAL_NS and
                         (x["free"] or 2**63) > lo - IMPORT_INTERVAL_NS]
                if not alive and hi < self.t_last - 300_000_000 and t > self.t0:
                    self.add("a freed mm's address after its free: nobody's", "unresolved",
                             m["addr"] + self.off("mm_struct", "mm_count"), ("__schedule",),
                             ["schedule"], 2, "lcl", None, None, None, times=[t], ip_off=0x7)
                    dead_done = True
        if not alive_done:
            self.skipped.append("a forked child's mm while alive: no child lived a whole "
                                "import interval alone at its address")
        if not dead_done:
            self.skipped.append("a freed mm: every freed address was reused too soon")

    def page_groups(self):
        ks = self.ks
        if not self.vmemmap or len(self.pfns) < 8:
            self.skipped.append("struct page groups: vmemmap not calibrated")
            return
        base, size = self.vmemmap
        page = lambda i, field: base + self.pfns[i * 3 % len(self.pfns)] * size + \
            self.off("folio", field)
        walk = [f for f in ("folio_update_gen", "walk_update_folio", "walk_pte_range")
                if ks.has(f)]
        if walk:    # folio_update_gen() is static: often inlined into the walk
            self.add("P2: folio flags cmpxchg in the aging walk", "P2", page(1, "flags"),
                     (walk[0],), ["walk_pte_range", "walk_pmd_range", "walk_pud_range",
                                  "walk_page_range", "try_to_inc_max_seq"], 5, "rmt",
                     "page", "flags")
        else:
            self.skipped.append("P2 positive: this kernel has no folio_update_gen or "
                                "walk_pte_range (no CONFIG_LRU_GEN)")
        self.add("P3: folio flags from folio_mark_accessed", "P3", page(2, "flags"),
                 ("folio_mark_accessed",), ["filemap_read", "shmem_file_read_iter"], 4, "lcl",
                 "page", "flags")
        self.add("P3: folio flags from folio_activate", "P3", page(3, "flags"),
                 ("folio_activate",), ["folio_mark_accessed", "filemap_read"], 3, "rmt",
                 "page", "flags")
        self.add("not P3: the refcount next to the flags", "other:page", page(4, "_refcount"),
                 ("folio_mark_accessed",), ["filemap_read"], 2, "lcl", "page", "_refcount")
        self.add("not P4: page flags in a drain", "other:page", page(5, "flags"),
                 ("folio_batch_move_lru",), ["lru_add_drain_cpu", "lru_add_drain",
                                             "zap_page_range_single"], 2, "lcl", "page", "flags")

    def lruvec_groups(self):
        ks, o = self.ks, self.o
        lock = next((a for a in o.lru_locks if a in self.locks), None) or \
            (o.lru_locks[0] if o.lru_locks else None)
        if lock is None:
            self.skipped.append("lruvec groups: no lru_lock contention seen on this machine")
            return
        self.lru_lock = lock
        slow = o.slowpath
        lru_off, age_off = self.off("lruvec", "lru_lock"), self.off("lruvec", "nonresident_age")
        base = lock - lru_off
        drain = ["_raw_spin_lock_irqsave", "folio_lruvec_lock_irqsave", "folio_batch_move_lru",
                 "lru_add_drain_cpu", "lru_add_drain", "zap_page_range_single",
                 "madvise_vma_behavior", "do_madvise", "__x64_sys_madvise", "do_syscall_64"]
        self.add("P4: lru_lock taken by folio_batch_move_lru under lru_add_drain", "P4", lock,
                 (slow,), drain, 8, "rmt", "lruvec", "lru_lock")
        self.add("not P4: lru_lock from folio_batch_move_lru, no drain (lru_add batch)",
                 "other:lruvec", lock, (slow,),
                 ["_raw_spin_lock_irqsave", "folio_lruvec_lock_irqsave", "folio_batch_move_lru",
                  "folio_add_lru", "shmem_alloc_and_add_folio"], 3, "lcl", "lruvec", "lru_lock")
        self.add("P3: nonresident_age from workingset_age_nonresident on activation", "P3",
                 base + age_off, ("workingset_age_nonresident",),
                 ["workingset_activation", "folio_mark_accessed", "filemap_read"], 5, "lcl",
                 "lruvec", "nonresident_age")
        self.add("not P3: nonresident_age aged by eviction", "other:lruvec", base + age_off,
                 ("workingset_age_nonresident",), ["workingset_eviction", "__remove_mapping",
                                                   "shrink_folio_list"], 2, "rmt", "lruvec",
                 "nonresident_age")
        # Known gaps: what the rules cannot tell.
        self.add("gap: a drain's lru_lock HITM without a callchain", "other:lruvec", lock,
                 (slow,), [], 3, "rmt", "lruvec", "lru_lock", intended="P4", ip_off=0x11)
        self.add("gap: eviction-aged nonresident_age without a callchain", "P3", base + age_off,
                 ("workingset_age_nonresident",), [], 2, "lcl", "lruvec", "nonresident_age",
                 intended="other:lruvec", ip_off=0x12)
        size = self.layout[("lruvec", "")][1]
        # another lruvec, in the direct map: one in the kernel image (a node's
        # static pglist_data) is typed by its kallsyms data symbol instead
        other = [a for a in o.lru_locks if abs(a - lock) >= size and a < 0xffffffff80000000]
        if other:
            # an lruvec no anchoring sample ever touched: its list heads in a drain
            self.add("gap: a drain on the list heads of an lruvec never anchored", "unresolved",
                     other[0] - lru_off + self.off("lruvec", "lists") + 72, ("lru_add",),
                     ["folio_batch_move_lru", "lru_add_drain_cpu", "lru_add_drain"], 2, "lcl",
                     None, None, intended="P4")

    def unknown_groups(self):
        # an address in the direct map that no learned object covers
        a = 0xffff888100000000 + 0x5a5a40
        while not self.range_free(a):
            a += 0x10000
        self.add("an address nobody learned", "unresolved", a, ("__schedule",), ["schedule"],
                 3, "lcl", None, None)
        # a contended lock whose context is not an lruvec's
        lruvec_size = self.layout[("lruvec", "")][1]
        other = [lk for lk in self.locks
                 if not (getattr(self, "lru_lock", 0) - 4096 < lk < getattr(self, "lru_lock", 0) + lruvec_size)
                 and all(not (m["addr"] <= lk < m["addr"] + 4096) for m in self.mms)]
        if other and self.ks.has("try_to_wake_up"):
            self.add("a contended lock of unknown type", "unresolved", other[0],
                     (self.o.slowpath,), ["_raw_spin_lock_irqsave", "try_to_wake_up"], 2, "rmt",
                     None, None)

    def build(self):
        self.skipped = []
        self.mm_groups()
        self.page_groups()
        self.lruvec_groups()
        self.unknown_groups()
        self.samples.sort(key=lambda s: s["time"])
        assert self.samples[0]["time"] == self.t0


def write(args):
    import argparse
    p = argparse.ArgumentParser(prog="hitm_scenario.py write")
    p.add_argument("db")
    p.add_argument("kallsyms")
    p.add_argument("out")
    p.add_argument("expect")
    p.add_argument("--old-pid", type=int, help="a process whose mm lives through the samples"
                   " (default: any learned mm never freed)")
    p.add_argument("--fork-pids", type=lambda s: [int(x) for x in s.split(",") if x],
                   help="forked processes for the lifetime groups (default: every one learned)")
    p.add_argument("--lru-locks", type=lambda s: [int(x, 16) for x in s.split(",") if x], default=[])
    p.add_argument("--slowpath", default="native_queued_spin_lock_slowpath")
    o = p.parse_args(args)
    db = sqlite3.connect(o.db)
    if o.kallsyms.startswith("db:"):
        boot = db.execute("SELECT max(boot_id) FROM boots WHERE source = 'live'").fetchone()[0]
        ks = Kallsyms.from_db(db, boot, o.kallsyms[3:])
    else:
        ks = Kallsyms(o.kallsyms)
    if o.old_pid is None:
        row = db.execute("SELECT tgid FROM mm_objects WHERE free_ns IS NULL AND tgid IS NOT NULL"
                         " ORDER BY learned_from != 'mmap_lock', mm_object_id LIMIT 1").fetchone()
        o.old_pid = row[0] if row else -1
    if o.fork_pids is None:
        o.fork_pids = [r[0] for r in db.execute("SELECT DISTINCT tgid FROM mm_objects"
                                                " WHERE learned_from = 'fork'")]
    sc = Scenario(db, ks, o)
    sc.build()
    # perf's times are CLOCK_MONOTONIC; CLOCK_DATA maps them back to wall time
    mono = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    wall = time.time_ns()
    for s in sc.samples:
        s["time"] = s["time"] - wall + mono
    pw.write(o.out, sc.samples, hostname=sc.host, osrelease=sc.release, clock_ref=(wall, mono),
             kernel_build_id=sc.build_id, nr_cpus=(os.cpu_count(), os.cpu_count()))
    json.dump(dict(groups=sc.groups, skipped=sc.skipped, samples=len(sc.samples),
                   lru_lock=getattr(sc, "lru_lock", None)), open(o.expect, "w"), indent=1)
    print("wrote %d samples in %d groups to %s" % (len(sc.samples), len(sc.groups), o.out))
    for s in sc.skipped:
        print("not on this kernel/run: " + s)


def check(args):
    dbp, expect = args
    db = sqlite3.connect(dbp)
    e = json.load(open(expect))
    ok_hitm = tot_hitm = 0
    misses = 0
    per_path = {}
    gap_hitm = 0
    print("%-66s %-16s %-16s %-22s %5s %s" % ("group", "rules say", "got", "object.field", "HITM",
                                               "owner"))
    for g in e["groups"]:
        chain_txt = " ".join("0x%x" % c for c in g["chain"])
        rows = db.execute(
            "SELECT a.path, a.object_type, a.field, m.tgid, l.lcl_hitm + l.rmt_hitm, a.reason,"
            " coalesce(c.ips, '')"
            " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
            " JOIN intervals i USING (interval_id) JOIN boots b USING (boot_id)"
            " LEFT JOIN callchains c ON c.callchain_id = a.callchain_id"
            " LEFT JOIN mm_objects m ON a.object_type = 'mm_struct' AND m.mm_object_id = a.object_ref"
            " WHERE b.source = 'import' AND a.line_addr + a.offset = ? AND a.ip = ?",
            (s64(g["addr"]), s64(g["ip"]))).fetchall()
        rows = [r for r in rows if " ".join("0x%x" % int(x, 16) for x in r[6].split()) == chain_txt]
        got = sum(r[4] for r in rows)
        good = sum(r[4] for r in rows if r[0] == g["path"] and r[1] == g["object_type"] and
                   (g["field"] is None or r[2] == g["field"]) and
                   (g["tgid"] is None or g["object_type"] != "mm_struct" or r[3] == g["tgid"]))
        if got != g["n"] or good != g["n"]:
            misses += 1
        right = good if g["intended"] == g["path"] else 0
        if g["intended"] != g["path"]:
            gap_hitm += g["n"]
        tot_hitm += g["n"]
        ok_hitm += right
        pp = per_path.setdefault(g["intended"], [0, 0])
        pp[0] += right
        pp[1] += g["n"]
        paths = ",".join(sorted({r[0] for r in rows})) or "(no row)"
        objf = ",".join(sorted({"%s.%s" % (r[1], r[2]) for r in rows})) or "-"
        owner = ",".join(sorted({str(r[3]) for r in rows if r[3]})) or "-"
        mark = "ok " if good == g["n"] and got == g["n"] else "MISS"
        print("%s %-62s %-16s %-16s %-22s %2d/%-2d %s" % (mark, g["desc"][:62], g["path"], paths,
                                                       objf[:22], good, g["n"], owner))
        if g["intended"] != g["path"]:
            print("     (a perfect attribution would say %s; the rules cannot know)" % g["intended"])
        if mark != "ok ":
            for r in rows:
                print("      row: path %s, %s.%s, tgid %s, hitm %d: %s" % r[:6])
    print()
    for p, (a, n) in sorted(per_path.items()):
        print("  %-16s %3d of %3d HITM samples where intended (%.1f %%)" % (p, a, n, 100.0 * a / n))
    print("attribution accuracy: %d of %d HITM samples (%.1f %%) in the intended path, object, "
          "field and owner; %d of them in known gaps the rules cannot decide" %
          (ok_hitm, tot_hitm, 100.0 * ok_hitm / max(tot_hitm, 1), gap_hitm))
    print("without the known gaps: %d of %d (%.1f %%); %d groups not where the rules should put them"
          % (ok_hitm, tot_hitm - gap_hitm, 100.0 * ok_hitm / max(tot_hitm - gap_hitm, 1), misses))
    for s in e["skipped"]:
        print("not tested here: " + s)
    return 1 if misses else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "write":
        write(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2:]))
    else:
        sys.exit(__doc__)
