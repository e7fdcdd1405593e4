#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Field layouts from a BTF file, by a route independent of mmhitmd's.

mmhitmd resolves offsets with libbpf; this walks `bpftool -j btf dump file`
output instead, so the tests can cross-check the daemon's btf_layouts rows
against the kernel's own BTF.

Usage: btf-layout.py BTF_FILE < queries
Each query line is "struct field" (field a dotted path such as
lru_gen.bitmap, or "" / "-" for the struct itself). Each answer line is
"struct field offset size bit_offset bit_size", offsets in bytes from the
struct start (bit_offset/bit_size non-zero only for bitfields), or
"struct field MISSING".
"""
import json
import subprocess
import sys

MODIFIERS = {"TYPEDEF", "CONST", "VOLATILE", "RESTRICT", "TYPE_TAG"}


def load(path):
    out = subprocess.run(["bpftool", "-j", "btf", "dump", "file", path],
                         check=True, capture_output=True).stdout
    return {t["id"]: t for t in json.loads(out)["types"]}


def strip(types, tid):
    while tid and types[tid]["kind"] in MODIFIERS:
        tid = types[tid]["type_id"]
    return tid


def size_of(types, tid):
    tid = strip(types, tid)
    t = types.get(tid)
    if t is None:
        return 0
    if t["kind"] == "PTR":
        return 8
    if t["kind"] == "ARRAY":
        return t["nr_elems"] * size_of(types, t["type_id"])
    return t.get("size", 0)


def find_member(types, tid, name):
    """(bits_offset, member) of name in a struct/union, looking through
    anonymous members the way C does; None when absent."""
    t = types[strip(types, tid)]
    for m in t.get("members", []):
        if m["name"] == name:
            return m["bits_offset"], m
    for m in t.get("members", []):
        if m["name"] in ("(anon)", ""):
            inner = types[strip(types, m["type_id"])]
            if inner["kind"] in ("STRUCT", "UNION"):
                hit = find_member(types, inner["id"], name)
                if hit:
                    return m["bits_offset"] + hit[0], hit[1]
    return None


def layout(types, structs, struct, field):
    tid = structs.get(struct)
    if tid is None:
        return None
    if field in ("", "-"):
        return 0, types[tid]["size"], 0, 0
    bits = 0
    member = None
    for part in field.split("."):
        if member is not None:
            tid = member["type_id"]
        if types[strip(types, tid)]["kind"] not in ("STRUCT", "UNION"):
            return None
        hit = find_member(types, tid, part)
        if hit is None:
            return None
        bits += hit[0]
        member = hit[1]
    bitfield = member.get("bitfield_size", 0)
    if bitfield:
        return bits // 8, 0, bits % 8, bitfield
    return bits // 8, size_of(types, member["type_id"]), 0, 0


def main():
    types = load(sys.argv[1])
    structs = {}
    for t in types.values():
        if t["kind"] in ("STRUCT", "UNION") and t.get("vlen", 0):
            structs.setdefault(t["name"], t["id"])
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        struct = words[0]
        field = words[1] if len(words) > 1 else ""
        got = layout(types, structs, struct, field)
        shown = field or "-"
        if got is None:
            print(struct, shown, "MISSING")
        else:
            print(struct, shown, *got)


if __name__ == "__main__":
    main()
