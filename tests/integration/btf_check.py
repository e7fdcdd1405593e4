#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the btf_layouts mmhitmd stored against bpftool's dump of the same
BTF: every stored (struct, field) must have bpftool's offset and size, and
every top-level member bpftool lists (anonymous ones flattened) must be
stored. Usage: btf_check.py DB BTF_FILE"""
import json
import sqlite3
import subprocess
import sys

db, btf = sys.argv[1], sys.argv[2]
types = {t["id"]: t for t in json.loads(subprocess.check_output(
    ["bpftool", "-j", "btf", "dump", "file", btf, "format", "raw"]))["types"]}


def resolve(tid):
    """Strip typedefs and qualifiers, as sizes are the target's."""
    t = types.get(tid)
    while t and t["kind"] in ("TYPEDEF", "CONST", "VOLATILE", "RESTRICT", "TYPE_TAG"):
        t = types.get(t["type_id"])
    return t


def size_of(tid):
    t = resolve(tid)
    if t is None:
        return 0
    if t["kind"] == "ARRAY":
        return size_of(t["type_id"]) * t["nr_elems"]
    if t["kind"] == "PTR":
        return 8
    return t.get("size", 0)


def members(t, base_bits, prefix, depth, out):
    for m in t.get("members", []):
        bits = base_bits + m["bits_offset"]
        mt = resolve(m["type_id"])
        if m["name"] == "(anon)":
            if mt and mt["kind"] in ("STRUCT", "UNION"):
                members(mt, bits, prefix, depth, out)
            continue
        path = prefix + m["name"]
        out.setdefault(path, (bits // 8, size_of(m["type_id"]), depth))
        if mt and mt["kind"] in ("STRUCT", "UNION") and depth < 3:
            members(mt, bits, path + ".", depth + 1, out)


con = sqlite3.connect(db)
failures = checked = 0
for struct in ("mm_struct", "page", "folio", "lruvec"):
    cands = [t for t in types.values() if t["kind"] == "STRUCT" and t.get("name") == struct]
    stored = {f: (o, s) for f, o, s in con.execute(
        "SELECT field, offset, size FROM btf_layouts WHERE struct = ?", (struct,))}
    if not cands:
        if stored:
            print(f"FAIL: {struct}: stored but not in BTF")
            failures += 1
        continue
    t = cands[0]
    want = {}
    members(t, 0, "", 1, want)
    if stored.get("") != (0, t["size"]):
        print(f"FAIL: sizeof({struct}): stored {stored.get('')}, bpftool {t['size']}")
        failures += 1
    for field, (off, size, depth) in want.items():
        if depth == 1 and field not in stored:
            print(f"FAIL: {struct}.{field} missing from btf_layouts")
            failures += 1
    for field, (off, size) in stored.items():
        if field == "":
            continue
        checked += 1
        if field not in want:
            print(f"FAIL: {struct}.{field} stored but bpftool has no such member")
            failures += 1
        elif (off, size) != want[field][:2]:
            print(f"FAIL: {struct}.{field}: stored offset {off} size {size}, "
                  f"bpftool offset {want[field][0]} size {want[field][1]}")
            failures += 1
print(f"{checked} fields checked, {failures} mismatches")
sys.exit(1 if failures or checked == 0 else 0)
