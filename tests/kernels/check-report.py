#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks `mmhitm report --json` of the rollout scenario's DB.

Usage: check-report.py REPORT_JSON OLD_RELEASE NEW_RELEASE MACHINE_ID

The DB holds one host (the disk) that booted OLD then NEW under TCG, which
emulates no PMU. The report must find exactly that one rollout, give every
path a before/after comparison for it that says its minutes of data are "too
short for a drift-robust interval", and, with no HITM to compare, say
"insufficient data" with "no PMU" among the reasons rather than a verdict.
Prints one line per check, like tests/kernels/lib.sh's check(); exits 1 at
the first failure.
"""
import json
import sys

PATHS = ("P1", "P2", "P3", "P4")


def check(desc, ok, detail=""):
    if ok:
        print("ok    report: " + desc)
        return
    print("FAIL  report: %s  [%s]" % (desc, detail))
    sys.exit(1)


def main():
    path, old, new, machine_id = sys.argv[1:5]
    with open(path) as f:
        rep = json.load(f)
    s = rep.get("summary", {})
    check("one host", s.get("hosts") == 1, s)
    check("one kernel change, no rollback",
          s.get("kernel_changes") == 1 and s.get("rollbacks") == 0, s)
    hosts = rep.get("hosts", [])
    check("the host is the disk's machine-id",
          len(hosts) == 1 and hosts[0].get("machine_id") == machine_id,
          [h.get("machine_id") for h in hosts])
    h = hosts[0]
    kernels = [k.get("release") for k in h.get("kernels", [])]
    ro = h.get("rollouts", [])
    check("one rollout on the host", len(ro) == 1, ro)
    r = ro[0]
    frm, to = kernels[r["from"]], kernels[r["to"]]
    check("rollout %s -> %s" % (old, new), (frm, to) == (old, new), (frm, to))
    check("... not a rollback", r.get("rollback") is False, r)
    check("host marked no PMU", h.get("no_pmu") is True, h.get("no_pmu"))

    verdicts = {p.get("path"): p for p in rep.get("paths", [])}
    for p in PATHS:
        comps = h.get("paths", {}).get(p, {}).get("comparisons", [])
        check("%s: a before/after comparison for the rollout" % p,
              len(comps) == 1 and "before" in comps[0] and "after" in comps[0],
              comps)
        # Minutes of data on each side: no day blocks to measure drift with.
        check("%s: the comparison is too short for a drift-robust interval" % p,
              comps[0].get("too_short") is True and comps[0].get("ci_low") is None
              and "too short for a drift-robust interval" in (comps[0].get("reason") or ""),
              (comps[0].get("too_short"), comps[0].get("reason")))
        v = verdicts.get(p, {})
        check("%s: insufficient data, with no PMU among the reasons" % p,
              v.get("verdict") == "insufficient data" and "no PMU" in (v.get("reason") or ""),
              (v.get("verdict"), v.get("reason")))


if __name__ == "__main__":
    main()
