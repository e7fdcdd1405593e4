#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Small fixtures of a real kernel, for attribution tests that must run
without the kernel (tests/fixtures/kernels/, made by
tests/kernels/make-layout-fixtures.sh):

  btf_extract.py VMLINUX.BTF OUT.btf
      A raw BTF file holding only what mmhitm reads (mm_struct, page,
      folio, lruvec, root_user's user_struct and everything they contain
      by value), with the offsets, sizes and type names of the real one.
      Pointers become pointers to void: a layout never follows them.
      Read with bpftool -j btf dump (the format is
      Documentation/bpf/btf.rst).

  btf_extract.py --kallsyms KALLSYMS OUT
      The kallsyms lines of the symbols the attribution tests name, each
      followed by the line of the symbol after it, so the symbols keep
      their real sizes (kallsyms has none: the next symbol ends one).
"""

import json
import re
import struct
import subprocess
import sys

ROOTS = ("mm_struct", "page", "folio", "lruvec", "user_struct")

KINDS = dict(INT=1, PTR=2, ARRAY=3, STRUCT=4, UNION=5, ENUM=6, FWD=7, TYPEDEF=8, VOLATILE=9,
             CONST=10, RESTRICT=11, FLOAT=16, TYPE_TAG=18, ENUM64=19)
INT_ENC = {"(none)": 0, "SIGNED": 1, "CHAR": 2, "BOOL": 4}

# Functions and data the tests' recordings name (globs): the four paths'
# code, the lock primitives, the scheduler and the negatives' functions.
KSYM_RE = re.compile(r"^(" + "|".join([
    r"__schedule", r"schedule", r"schedule_idle", r"preempt_schedule.*", r"context_switch",
    r"finish_task_switch.*", r"switch_mm_irqs_off", r"do_sched_yield", r"__x64_sys_sched_yield",
    r"do_syscall_64", r"entry_SYSCALL_64.*", r"lru_gen_.*", r"try_to_inc_max_seq",
    r"inc_max_seq", r"iterate_mm_list.*", r"get_next_mm", r"should_skip_mm", r"walk_.*",
    r"folio_update_gen", r"folio_.*lru.*", r"folio_activate", r"folio_mark_accessed",
    r"__lru_cache_activate_folio", r"lru_.*", r"mark_page_accessed", r"workingset_.*",
    r"shrink_.*", r"evict_folios", r"isolate_lru_folios", r"move_folios_to_lru",
    r"native_queued_spin_lock_slowpath", r"__pv_queued_spin_lock_slowpath",
    r"queued_spin_lock_slowpath", r"_raw_spin_.*", r"down_write", r"down_read",
    r"rwsem_down_.*", r"filemap_.*", r"shmem_.*", r"generic_perform_write", r"vfs_.*",
    r"ksys_.*", r"__x64_sys_.*write", r"__x64_sys_.*read", r"__x64_sys_madvise",
    r"do_madvise", r"madvise_.*", r"zap_page_range_single", r"unmap_.*", r"tlb_.*",
    r"free_pages_and_swap_cache", r"release_pages", r"mmdrop.*", r"__mmdrop", r"mmput",
    r"membarrier_.*", r"try_to_wake_up", r"copy_process", r"dup_mm.*", r"mm_init",
    r"mm_alloc", r"copy_user_.*", r"rep_movs_alternative", r"_copy_.*_user",
    r"copy_page_to_iter", r"copy_page_from_iter.*", r"do_user_addr_fault", r"handle_mm_fault",
    r"__handle_mm_fault", r"do_anonymous_page", r"vma_interval_tree_.*", r"i_mmap_lock.*",
    r"unlink_file_vma.*", r"__vma_link_file", r"free_pgtables", r"inc_rlimit_ucounts",
    r"dec_rlimit_ucounts", r"free_uid", r"root_user", r"init_mm", r"init_task",
    r"jiffies", r"jiffies_64", r"page_offset_base", r"vmemmap_base", r"vmalloc_base",
    r"node_data", r"contig_page_data", r"runqueues", r"__per_cpu_offset",
    r"mem_cgroup_.*lruvec.*", r"mem_cgroup_update_lru_size", r"__mod_lruvec_.*",
    r"__count_memcg_events", r"page_counter_.*", r"_text", r"_stext", r"_etext",
    r"_sdata", r"_edata", r"__bss_start", r"__bss_stop", r"_end",
]) + r")$")


def dump(path):
    return json.loads(subprocess.check_output(
        ["bpftool", "-j", "btf", "dump", "file", path, "format", "raw"]))["types"]


def extract_btf(src, out):
    types = {t["id"]: t for t in dump(src)}
    roots = []
    for name in ROOTS:
        cands = [t["id"] for t in types.values() if t["kind"] == "STRUCT" and t["name"] == name]
        if cands:
            roots.append(cands[0])
    # the by-value closure: what a layout can contain
    keep, todo = set(), list(roots)
    while todo:
        tid = todo.pop()
        if tid == 0 or tid in keep:
            continue
        keep.add(tid)
        t = types[tid]
        if t["kind"] in ("STRUCT", "UNION"):
            todo += [m["type_id"] for m in t["members"]]
        elif t["kind"] in ("ARRAY",):
            todo += [t["type_id"], t["index_type_id"]]
        elif t["kind"] in ("TYPEDEF", "VOLATILE", "CONST", "RESTRICT", "TYPE_TAG"):
            todo.append(t["type_id"])
    order = sorted(keep)
    new_id = {old: i + 1 for i, old in enumerate(order)}
    ptr_id = len(order) + 1      # the one pointer type: void *

    strings = bytearray(b"\0")
    offsets = {"": 0}

    def s(name):
        name = "" if name in (None, "(anon)") else name
        if name not in offsets:
            offsets[name] = len(strings)
            strings.extend(name.encode() + b"\0")
        return offsets[name]

    def ref(tid):
        if tid == 0:
            return 0
        if types[tid]["kind"] in ("PTR", "FUNC_PROTO"):
            return ptr_id
        return new_id[tid]

    body = bytearray()
    for old in order:
        t = types[old]
        k = t["kind"]
        kind = KINDS[k]
        if k == "INT":
            body += struct.pack("<III", s(t["name"]), kind << 24, t["size"])
            body += struct.pack("<I", INT_ENC[t["encoding"]] << 24 | t["bits_offset"] << 16 |
                                t["nr_bits"])
        elif k == "PTR":
            body += struct.pack("<III", s(t["name"]), kind << 24, 0)
        elif k == "ARRAY":
            body += struct.pack("<III", 0, kind << 24, 0)
            body += struct.pack("<III", ref(t["type_id"]), ref(t["index_type_id"]), t["nr_elems"])
        elif k in ("STRUCT", "UNION"):
            bitf = any(m.get("bitfield_size") for m in t["members"])
            body += struct.pack("<III", s(t["name"]), (kind << 24) | (bitf << 31) |
                                len(t["members"]), t["size"])
            for m in t["members"]:
                off = m["bits_offset"]
                if bitf:
                    off |= m.get("bitfield_size", 0) << 24
                body += struct.pack("<III", s(m["name"]), ref(m["type_id"]), off)
        elif k in ("ENUM", "ENUM64"):
            signed = t.get("encoding") == "SIGNED"
            body += struct.pack("<III", s(t["name"]), (kind << 24) | (signed << 31) |
                                len(t["values"]), t["size"])
            for v in t["values"]:
                if k == "ENUM":
                    body += struct.pack("<Ii", s(v["name"]), v["val"]) if v["val"] < 0 else \
                        struct.pack("<II", s(v["name"]), v["val"] & 0xffffffff)
                else:
                    val = v["val"] & (2**64 - 1)
                    body += struct.pack("<III", s(v["name"]), val & 0xffffffff, val >> 32)
        elif k == "FWD":
            body += struct.pack("<III", s(t["name"]), (kind << 24) |
                                ((t.get("fwd_kind") == "union") << 31), 0)
        elif k == "FLOAT":
            body += struct.pack("<III", s(t["name"]), kind << 24, t["size"])
        else:   # TYPEDEF and the qualifiers
            body += struct.pack("<III", s(t["name"]), kind << 24, ref(t["type_id"]))
    body += struct.pack("<III", 0, KINDS["PTR"] << 24, 0)       # void *
    hdr = struct.pack("<HBBIIIII", 0xeB9F, 1, 0, 24, 0, len(body), len(body), len(strings))
    with open(out, "wb") as f:
        f.write(hdr + body + strings)
    # the copy must read back with the same layouts
    got = {t["name"]: t["size"] for t in dump(out) if t["kind"] == "STRUCT" and t["name"] in ROOTS}
    want = {types[r]["name"]: types[r]["size"] for r in roots}
    if got != want:
        sys.exit("btf_extract: %s reads back as %s, not %s" % (out, got, want))
    print("%s: %d types, %d bytes; %s" % (out, len(order) + 1, len(hdr + body + strings),
                                        " ".join("%s=%d" % kv for kv in sorted(want.items()))))


def extract_kallsyms(src, out):
    rows = []
    for line in open(src):
        f = line.split()
        if len(f) >= 3 and len(f) <= 4 and len(f[0]) == 16:
            rows.append((int(f[0], 16), line.rstrip("\n")))
    rows.sort(key=lambda r: r[0])
    keep = set()
    for i, (a, line) in enumerate(rows):
        f = line.split()
        if len(f) == 3 and KSYM_RE.match(f[2]):
            keep.add(i)
            # the next symbol at a higher address ends this one
            j = i + 1
            while j < len(rows) and rows[j][0] == a:
                j += 1
            if j < len(rows):
                keep.add(j)
    with open(out, "w") as f:
        for i in sorted(keep):
            f.write(rows[i][1] + "\n")
    print("%s: %d of %d kallsyms lines" % (out, len(keep), len(rows)))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--kallsyms":
        extract_kallsyms(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3:
        extract_btf(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
