#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Foreign perf c2c recordings at real kernel layouts, and their score
(tests/integration/test-foreign-attribution.sh).

  c2c_cases.py write KDIR OUT.perf.data EXPECT.json
      KDIR is a tests/fixtures/kernels/<release> directory: the layouts
      (layout.btf, a real kernel's BTF cut down by btf_extract.py) and the
      kallsyms lines of one boot of that kernel. Writes a perf.data as
      `perf c2c record -g` on a host that never ran mmhitmd would: HITM
      samples at addresses placed the way that kernel places its objects
      (mm_structs from a cache-line-aligned slab in the direct map, struct
      pages in a 1 GiB-aligned vmemmap, an lruvec inside a memcg's per-node
      data, root_user in the image's data, user space), with IPs and
      callchains of the functions that kernel really has (inlined callers
      are absent from its kallsyms and so from the chains). Each group is
      one route by which the kernel reaches a path, or a look-alike that
      is no path; EXPECT.json says which.

  c2c_cases.py score DB EXPECT.json
      After `mmhitm import` (BTF and kallsyms only) and `mmhitm analyze`:
      prints per group where its HITM went, then the score: the share of
      P1-P4 HITM on the right path, HITM on a wrong path, unresolved lines
      whose reason names no missing input, and whether static data and
      user space were typed. Exit 1 when a wrong path has HITM, an
      unresolved line names nothing, a look-alike became a path, or a group
      marked `must` missed its path.
"""

import json
import os
import sqlite3
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata_write as pw  # noqa: E402

T0 = 1_700_000_000_000_000_000          # wall ns of the first sample
MONO0 = 5_000_000_000_000               # its CLOCK_MONOTONIC ns
# The recorded boot's memory map (KASLR places each region on a 1 GiB
# boundary: arch/x86/mm/kaslr.c). --vmemmap-base is not passed to import.
PAGE_OFFSET = 0xffff9b3e40000000
VMEMMAP = 0xffffe3c580000000


def u64(v):
    return v & (2**64 - 1)


def s64(v):
    v = u64(v)
    return v - 2**64 if v >= 2**63 else v


# --- the BTF written by btf_extract.py (Documentation/bpf/btf.rst) ----------

class Btf:
    def __init__(self, path):
        data = open(path, "rb").read()
        magic, ver, flags, hdr_len, toff, tlen, soff, slen = struct.unpack_from("<HBBIIIII", data)
        assert magic == 0xeB9F, path
        types, strs = data[hdr_len + toff:hdr_len + toff + tlen], data[hdr_len + soff:hdr_len + soff + slen]
        name = lambda o: strs[o:strs.index(b"\0", o)].decode()
        self.t = [None]
        p = 0
        while p < len(types):
            noff, info, sz = struct.unpack_from("<III", types, p)
            p += 12
            kind, vlen, kflag = info >> 24 & 0x1f, info & 0xffff, info >> 31
            t = dict(kind=kind, name=name(noff), size=sz, type=sz)
            if kind == 1:
                p += 4
            elif kind == 3:
                t["elem"], _, t["n"] = struct.unpack_from("<III", types, p)
                p += 12
            elif kind in (4, 5):
                t["members"] = []
                for _ in range(vlen):
                    mn, mt, mo = struct.unpack_from("<III", types, p)
                    p += 12
                    t["members"].append((name(mn), mt, (mo & 0xffffff) if kflag else mo))
            elif kind == 6:
                p += 8 * vlen
            elif kind == 19:
                p += 12 * vlen
            self.t.append(t)

    def resolve(self, tid):
        while self.t[tid]["kind"] in (8, 9, 10, 11, 18):
            tid = self.t[tid]["type"]
        return tid

    def size(self, tid):
        tid = self.resolve(tid)
        t = self.t[tid]
        if t["kind"] == 3:
            return self.size(t["elem"]) * t["n"]
        if t["kind"] == 2:
            return 8
        return t["size"]

    def struct(self, name):
        return next(i for i, t in enumerate(self.t) if t and t["kind"] == 4 and t["name"] == name)

    def _find(self, tid, parts, base):
        t = self.t[self.resolve(tid)]
        for mn, mt, mo in t.get("members", []):
            if mn == "":
                r = self._find(mt, parts, base + mo // 8)
                if r:
                    return r
            elif mn == parts[0]:
                if len(parts) == 1:
                    return base + mo // 8, self.size(mt)
                return self._find(mt, parts[1:], base + mo // 8)
        return None

    def field(self, st, path):
        """(offset, size) of st.path, anonymous members flattened."""
        return self._find(self.struct(st), path.split("."), 0)

    def sizeof(self, st):
        return self.t[self.struct(st)]["size"]


class Kallsyms:
    def __init__(self, path):
        rows = []
        for line in open(path):
            f = line.split()
            rows.append((int(f[0], 16), f[1], f[2]))
        rows.sort()
        self.sym = {}
        for i, (a, typ, n) in enumerate(rows):
            nxt = next((b for b, _, _ in rows[i + 1:] if b > a), None)
            if n not in self.sym and nxt:
                self.sym[n] = (a, nxt - a, typ)

    def has(self, n):
        return n in self.sym

    def at(self, n, off):
        a, size, _ = self.sym[n]
        return a + (off % max(size, 1))


class Cases:
    def __init__(self, kdir):
        self.btf = Btf(os.path.join(kdir, "layout.btf"))
        self.ks = Kallsyms(os.path.join(kdir, "kallsyms"))
        self.release = os.path.basename(os.path.normpath(kdir))
        self.samples, self.groups, self.skipped = [], [], []
        self.t = 0
        self.cpu = 0

    def off(self, st, f):
        return self.btf.field(st, f)[0]

    def add(self, desc, want, addr, ip, chain, n, kind="mix", must=True, pid=4242):
        """n HITM samples at addr from the function ip (offset into it) with
        the callchain's functions that exist in this kernel; want is the
        true path (P1..P4), or 'none:<what>' for a look-alike of no path."""
        fn, ip_off = ip
        if not self.ks.has(fn):
            self.skipped.append("%s: %s is not in this kernel's kallsyms" % (desc, fn))
            return
        # a distinct IP per group, so each group's rows are its own
        ip_v = self.ks.at(fn, ip_off + len(self.groups))
        chain_v = [self.ks.at(c, 0x40 + 7 * i) for i, c in enumerate(chain) if self.ks.has(c)]
        for i in range(n):
            self.t += 3_000_000
            self.cpu = (self.cpu + 1) % 8
            self.samples.append(dict(
                ip=ip_v, addr=addr, time=MONO0 + self.t, pid=pid, tid=pid + i % 4, cpu=self.cpu,
                callchain=chain_v, weight=180 + i,
                data_src=pw.data_src(("lcl", "rmt")[i % 2] if kind == "mix" else kind)))
        self.groups.append(dict(desc=desc, want=want, addr=addr, ip=ip_v, n=n, must=must,
                                chain=[c for c in chain if self.ks.has(c)]))

    def build(self):
        b, ks = self.btf, self.ks
        v61 = not ks.has("lru_activate")
        syscall = ["do_syscall_64", "entry_SYSCALL_64_after_hwframe"]
        # Objects where that kernel puts them. mm_struct: its slab cache is
        # SLAB_HWCACHE_ALIGN, objects of ALIGN(sizeof + 2 cpumasks, 64).
        mm_obj = (b.sizeof("mm_struct") + 16 + 63) & ~63
        slab = PAGE_OFFSET + 0x10a3c8000            # an order-3 slab page
        mms = [slab + k * mm_obj for k in (1, 5, 11)]
        page = lambda pfn: VMEMMAP + pfn * b.sizeof("page")
        lruvec = PAGE_OFFSET + 0x1041e2000 + 0x48   # inside a memcg's per-node info
        lruvec2 = PAGE_OFFSET + 0x11f3a0800 + 0x48
        bitmap, mm_count = self.off("mm_struct", "lru_gen.bitmap"), self.off("mm_struct", "mm_count")
        membarrier = self.off("mm_struct", "membarrier_state")
        flags = self.off("folio", "flags")
        lru_lock, age = self.off("lruvec", "lru_lock"), self.off("lruvec", "nonresident_age")
        lists = self.off("lruvec", "lists")
        sched = ["schedule"]

        # --- P1: the lru_gen.bitmap store, lru_gen_use_mm() and
        # context_switch() inlined into __schedule: every way in
        self.add("P1: sched_yield() switch between threads of one mm", "P1", mms[0] + bitmap,
                 ("__schedule", 0x5a1), sched + ["do_sched_yield", "__x64_sys_sched_yield"] + syscall, 24)
        self.add("P1: a futex/nanosleep wait switching out", "P1", mms[0] + bitmap,
                 ("__schedule", 0x5a1), sched + ["do_nanosleep", "hrtimer_nanosleep"] + syscall, 12)
        self.add("P1: preemption on return from an interrupt", "P1", mms[1] + bitmap,
                 ("__schedule", 0x5a1), ["preempt_schedule_irq", "irqentry_exit"], 8)
        self.add("P1: idle switching to a user thread", "P1", mms[2] + bitmap,
                 ("__schedule", 0x5a1), ["schedule_idle", "do_idle", "cpu_startup_entry"], 6)
        self.add("P1: the store sampled without a callchain", "P1", mms[1] + bitmap,
                 ("__schedule", 0x5a1), [], 4)

        # --- P2: folio->flags cmpxchg in folio_update_gen()
        walk = ["walk_pmd_range_locked", "walk_pmd_range", "walk_pud_range"] if ks.has("walk_pmd_range_locked") \
            else ["walk_pud_range"]
        self.add("P2: the aging walk (walk_pte_range inlined)", "P2", page(0x1a2b3) + flags,
                 ("folio_update_gen", 0x2c), walk + ["walk_page_range", "try_to_inc_max_seq",
                                                     "lru_gen_age_node"], 18)
        self.add("P2: look-around from rmap during eviction", "P2", page(0x1a2c0) + flags,
                 ("folio_update_gen", 0x2c), ["lru_gen_look_around", "folio_referenced_one",
                                              "rmap_walk_file", "folio_referenced",
                                              "shrink_folio_list", "evict_folios"], 8)
        self.add("P2: folio_update_gen without a callchain", "P2", page(0x1a2c9) + flags,
                 ("folio_update_gen", 0x2c), [], 4)
        # the walk's own flag loads (folio_update_gen's caller): it also
        # reads PTEs at any offset, so only a vmemmap base types these
        self.add("P2: the walk's own folio flag loads", "P2", page(0x1a2b3) + flags,
                 (walk[0], 0x1f3), walk[1:] + ["walk_page_range", "try_to_inc_max_seq"], 6,
                 must=False)

        # --- P3: activation
        write = ["generic_perform_write", "shmem_file_write_iter", "vfs_write", "__x64_sys_pwrite64"] + syscall
        self.add("P3: folio flags from folio_mark_accessed (pwrite)", "P3", page(0x3f001) + flags,
                 ("folio_mark_accessed", 0x3b), write, 16)
        self.add("P3: folio flags from folio_activate", "P3", page(0x3f002) + flags,
                 ("folio_activate", 0x2a), ["folio_mark_accessed"] + write, 10)
        if v61:
            self.add("P3: mark_page_accessed (6.1's page wrapper)", "P3", page(0x3f003) + flags,
                     ("mark_page_accessed", 0x8), ["shmem_write_end", "generic_perform_write"], 4)
        self.add("P3: nonresident_age from workingset_activation", "P3", lruvec + age,
                 ("workingset_age_nonresident", 0x31), ["workingset_activation", "folio_mark_accessed"]
                 + write, 12)
        slow = "native_queued_spin_lock_slowpath"
        lock_prefix = ["_raw_spin_lock_irqsave", "folio_lruvec_lock_irqsave", "folio_batch_move_lru"]
        self.add("P3: lru_lock taken by the activate batch itself (batch full)", "P3", lruvec + lru_lock,
                 (slow, 0x88), lock_prefix + ["folio_activate", "folio_mark_accessed"] + write, 14)
        self.add("P3: lru_lock fast path in the activate batch", "P3", lruvec + lru_lock,
                 ("_raw_spin_lock_irqsave", 0x1a), lock_prefix[1:] + ["folio_activate",
                                                                      "folio_mark_accessed"], 4)

        # --- P4: lru_add_drain() -> folio_batch_move_lru() -> lru_lock
        self.add("P4: MADV_DONTNEED: zap_page_range_single -> lru_add_drain", "P4", lruvec + lru_lock,
                 (slow, 0x88), lock_prefix + ["lru_add_drain_cpu", "lru_add_drain", "zap_page_range_single",
                                              "madvise_vma_behavior", "do_madvise", "__x64_sys_madvise"]
                 + syscall, 20)
        self.add("P4: munmap: free_pages_and_swap_cache -> lru_add_drain", "P4", lruvec + lru_lock,
                 (slow, 0x88), lock_prefix + ["lru_add_drain_cpu", "lru_add_drain",
                                              "free_pages_and_swap_cache", "tlb_finish_mmu",
                                              "unmap_region"], 10)
        self.add("P4: the drain's lock fast path", "P4", lruvec2 + lru_lock,
                 ("_raw_spin_lock_irqsave", 0x1a), lock_prefix[1:] + ["lru_add_drain_cpu", "lru_add_drain",
                                                                      "zap_page_range_single"], 6)
        self.add("P4: the drain's contention on the second lruvec", "P4", lruvec2 + lru_lock,
                 (slow, 0x88), lock_prefix + ["lru_add_drain_cpu", "lru_add_drain",
                                              "zap_page_range_single"], 6)
        add_fn = "lru_add" if ks.has("lru_add") else "lru_add_fn"
        self.add("P4: the list heads the drain splices under the lock", "P4", lruvec + lists + 24,
                 (add_fn, 0x60), ["folio_batch_move_lru", "lru_add_drain_cpu", "lru_add_drain",
                                  "zap_page_range_single"], 6)

        # --- look-alikes: no path
        self.add("not P1: mm_count dropped by finish_task_switch", "none:mm_count", mms[0] + mm_count,
                 ("finish_task_switch.isra.0", 0x90), ["__schedule"] + sched, 10)
        self.add("not P1: mm_count grabbed in __schedule (lazy TLB)", "none:mm_count", mms[1] + mm_count,
                 ("__schedule", 0x3e2), sched + ["do_sched_yield"], 6)
        self.add("not P1: membarrier_state read in __schedule", "none:membarrier_state",
                 mms[0] + membarrier, ("__schedule", 0x412), sched, 6)
        self.add("not P1: the aging walker reading the bitmap", "none:bitmap-reader", mms[2] + bitmap,
                 ("try_to_inc_max_seq", 0x2d0), ["lru_gen_age_node", "shrink_node"], 6)
        self.add("not P1: the bitmap read at fork", "none:bitmap-reader", mms[1] + bitmap,
                 ("lru_gen_add_mm", 0x40), ["copy_process", "kernel_clone"], 3)
        imap = PAGE_OFFSET + 0x10f3e7a00 + 0xe0          # an inode's i_mmap_rwsem
        self.add("not any path: i_mmap_rwsem on munmap", "none:i_mmap_rwsem", imap,
                 ("down_write", 0x1c), ["unlink_file_vma", "free_pgtables", "unmap_region"], 8)
        self.add("not any path: i_mmap_rwsem slow path", "none:i_mmap_rwsem", imap,
                 ("rwsem_down_write_slowpath", 0x113), ["down_write", "__vma_link_file"], 4)
        ru = ks.sym["root_user"][0]
        self.add("not any path: root_user's count at fork", "none:other:root_user", ru + 8,
                 ("inc_rlimit_ucounts", 0x33), ["copy_process"], 6)
        self.add("not any path: root_user dropped at exit", "none:other:root_user", ru,
                 ("free_uid", 0x10), ["release_task"], 4)
        cp = "rep_movs_alternative" if ks.has("rep_movs_alternative") else "copy_user_enhanced_fast_string"
        self.add("not any path: a user buffer copied by pwrite", "none:other:user", 0x7f3a1c02d040,
                 (cp if ks.has(cp) else "copy_page_from_iter", 0x12), ["copy_page_from_iter_atomic",
                                                                        "generic_perform_write"], 6)
        self.add("not P4: lru_lock from a full lru_add batch (no drain)", "none:lru_add",
                 lruvec + lru_lock, (slow, 0x88), lock_prefix + ["folio_add_lru",
                                                                 "shmem_add_to_page_cache"], 6)
        self.add("not P3: nonresident_age aged by eviction", "none:eviction", lruvec + age,
                 ("workingset_age_nonresident", 0x31), ["workingset_eviction", "__remove_mapping",
                                                        "shrink_folio_list"], 4)
        self.add("not P3/P4: folio flags read in a drain", "none:drain-flags", page(0x3f004) + flags,
                 ("folio_batch_move_lru", 0x77), ["lru_add_drain_cpu", "lru_add_drain"], 4)
        self.add("not P1: a runqueue field read in __schedule", "none:rq", PAGE_OFFSET + 0x7fc2c700 + 0x10,
                 ("__schedule", 0x233), sched, 6)


def write(args):
    kdir, out, expect = args
    c = Cases(kdir)
    c.build()
    pw.write(out, c.samples, hostname="c2c-lab-" + c.release.split("-")[0], osrelease=c.release,
             clock_ref=(T0, MONO0), kernel_build_id="5a" * 20, nr_cpus=(8, 8))
    json.dump(dict(release=c.release, groups=c.groups, skipped=c.skipped), open(expect, "w"), indent=1)
    print("%s: %d samples in %d groups at %s's layouts" % (out, len(c.samples), len(c.groups), c.release))
    for s in c.skipped:
        print("not in this kernel: " + s)


NAMES_INPUT = ("pass --", "import into", "import on")


def score(args):
    dbp, expect = args
    db = sqlite3.connect(dbp)
    e = json.load(open(expect))
    right = total = wrong = nameless = 0
    lookalike_paths = must_missed = 0
    typed = {"other:root_user": 0, "other:user": 0}
    grades = {}
    print("%-64s %-22s %s" % ("group (%s)" % e["release"], "want", "got (HITM, grade)"))
    for g in e["groups"]:
        rows = db.execute(
            "SELECT a.path, coalesce(a.grade, '-'), l.lcl_hitm + l.rmt_hitm, a.reason"
            " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
            " WHERE a.line_addr + a.offset = ? AND a.ip = ?", (s64(g["addr"]), s64(g["ip"]))).fetchall()
        got = {}
        for path, grade, h, reason in rows:
            got.setdefault((path, grade), [0, reason])[0] += h
        want = g["want"]
        hitm = sum(v[0] for v in got.values())
        for (path, grade), (h, reason) in got.items():
            if path.startswith("P"):
                grades.setdefault(path, {}).setdefault(grade, 0)
                grades[path][grade] += h
            if path == "unresolved" and not any(k in (reason or "") for k in NAMES_INPUT):
                nameless += h
            if path in typed:
                typed[path] += h
        if want.startswith("P"):
            total += g["n"]
            ok = sum(v[0] for (p, _), v in got.items() if p == want)
            right += ok
            wrong += sum(v[0] for (p, _), v in got.items() if p.startswith("P") and p != want)
            if ok < g["n"] and g["must"]:
                must_missed += 1
        else:
            bad = sum(v[0] for (p, _), v in got.items() if p.startswith("P"))
            wrong += bad
            lookalike_paths += bad
            expect_typed = want[len("none:"):]
            if expect_typed in typed and got.get((expect_typed, "layout"), [0])[0] != g["n"]:
                must_missed += 1
        desc = ", ".join("%s %d %s" % (p, v[0], gr) for (p, gr), v in sorted(got.items()))
        print("%-64s %-22s %s%s" % (g["desc"][:64], want, desc or "(no row)",
                                   "" if hitm == g["n"] else "  [HITM %d of %d]" % (hitm, g["n"])))
        for (p, gr), (h, reason) in got.items():
            if p == "unresolved":
                print("%66s why: %s" % ("", reason))
    print()
    for p in sorted(grades):
        tot = sum(grades[p].values())
        print("  %s rests on: %s" % (p, ", ".join("%s %.0f %%" % (gr, 100.0 * h / tot)
                                                    for gr, h in sorted(grades[p].items(),
                                                                        key=lambda x: -x[1]))))
    share = 100.0 * right / max(total, 1)
    print("score %s: P1-P4 HITM on the right path %d of %d (%.1f %%); HITM on a wrong path %d;"
          " unresolved HITM naming no input %d; other:root_user %d, other:user %d HITM typed"
          % (e["release"], right, total, share, wrong, nameless, typed["other:root_user"],
             typed["other:user"]))
    for s in e["skipped"]:
        print("not in this kernel: " + s)
    fail = wrong or nameless or lookalike_paths or must_missed
    if must_missed:
        print("FAIL: %d groups missed the path or type they must reach" % must_missed)
    return 1 if fail else 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "write":
        write(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "score":
        sys.exit(score(sys.argv[2:]))
    else:
        sys.exit(__doc__)
