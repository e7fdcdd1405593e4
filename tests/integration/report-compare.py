#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
report-compare.py A.json B.json: exit 0 when two `mmhitm report --json`
outputs give the same report, else print the first difference (its JSON
path and both values) and exit 1.

Same means every verdict, reason, estimate, interval bound, count and host
list equal; numbers to REL (1e-9) relative. Left out, as they describe the
run rather than the fleet: when it ran and how long it took, where the rows
came from (parameters.source, the host's database path, the number of
databases, SQLite's local boot ids, whether a file said it was generated:
the cluster does not hold the meta table). Hosts are compared in machine_id
order (SQLite files list them in file order, the cluster by machine_id).
"""
import json
import math
import sys

REL = 1e-9
IGNORED = {
    ("generated",), ("generated_ns",), ("summary", "seconds"), ("summary", "databases"),
    ("parameters", "source"), ("hosts", "*", "db"), ("hosts", "*", "boots", "*", "boot_id"),
    ("simulated",), ("hosts", "*", "simulated"),
}


def ignored(path):
    gen = tuple("*" if isinstance(p, int) else p for p in path)
    return gen in IGNORED


def same_number(a, b):
    if a == b:
        return True
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= REL * max(abs(a), abs(b))


def walk(a, b, path):
    if ignored(path):
        return None
    where = "".join("[%d]" % p if isinstance(p, int) else "." + p for p in path) or "."
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if ignored(path + [k]):
                continue
            if k not in a or k not in b:
                return "%s.%s: only in %s" % (where, k, "the first" if k in a else "the second")
            d = walk(a[k], b[k], path + [k])
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return "%s: %d items against %d" % (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = walk(x, y, path + [i])
            if d:
                return d
        return None
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return None if same_number(a, b) else "%s: %r against %r" % (where, a, b)
    return None if a == b else "%s: %r against %r" % (where, a, b)


def normalize(r):
    # Hosts by machine id; the report's own host references are names.
    r["hosts"] = sorted(r.get("hosts", []), key=lambda h: h.get("machine_id") or "")
    return r


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip())
        return 2
    a, b = (normalize(json.load(open(f))) for f in sys.argv[1:])
    d = walk(a, b, [])
    if d:
        print("first difference: %s" % d)
        return 1
    print("same report: %d hosts, %d paths" % (len(a["hosts"]), len(a["paths"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
