#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks `mmhitm report --json` of the rollout scenario's DB.

Usage: check-report.py REPORT_JSON OLD_RELEASE NEW_RELEASE MACHINE_ID

The DB holds one host (the disk) that booted OLD then NEW under TCG, which
emulates no PMU. The report must find exactly that one rollout and give every
path a before/after comparison for it. A path the boots' LRU_GEN state cannot
run (common/paths.conf's needs; Debian's kernels build LRU_GEN and leave it
off, so P2's aging walk) is "not applicable" with the reason, on the host and
for the fleet. Every other path's comparison says its minutes of data are
"too short for a drift-robust interval", and, with no HITM to compare, the
fleet says "insufficient data" with "no PMU" among the reasons; the report's
answer (summary.paths, the host's own) says why it cannot judge (no PMU, the
windows' minutes) and when it could, never how many hosts a fleet needs.
Prints one line per check, like tests/kernels/lib.sh's check(); exits 1 at
the first failure.
"""
import json
import sys

PATHS = ("P1", "P2", "P3", "P4")
# common/paths.conf's needs: the LRU_GEN states that run each path's route.
NEEDS = {"P1": ("on", "off"), "P2": ("on",), "P3": ("off", "absent"), "P4": None}


def applicable(p, boots):
    """Some boot can run p: its state is one p needs, or unknown."""
    return NEEDS[p] is None or any(b.get("lru_gen") not in ("on", "off", "absent") or
                                   b.get("lru_gen") in NEEDS[p] for b in boots)


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
    answers = s.get("paths", {})
    for p in PATHS:
        comps = h.get("paths", {}).get(p, {}).get("comparisons", [])
        check("%s: a before/after comparison for the rollout" % p,
              len(comps) == 1 and "before" in comps[0] and "after" in comps[0],
              comps)
        v, a = verdicts.get(p, {}), answers.get(p, {})
        check("%s: the answer is the host's own" % p, a.get("scope") == "host", a)
        if not applicable(p, h.get("boots", [])):
            states = sorted({b.get("lru_gen") for b in h.get("boots", [])})
            for what, x in (("comparison", comps[0]), ("fleet", v), ("answer", a)):
                check("%s: not applicable (LRU_GEN %s), the %s says" % (p, "/".join(states), what),
                      x.get("verdict") == "not applicable" and "LRU_GEN" in (x.get("reason") or ""),
                      (x.get("verdict"), x.get("reason")))
            continue
        # Minutes of data on each side: no day blocks to measure drift with.
        check("%s: the comparison is too short for a drift-robust interval" % p,
              comps[0].get("too_short") is True and comps[0].get("ci_low") is None
              and "too short for a drift-robust interval" in (comps[0].get("reason") or ""),
              (comps[0].get("too_short"), comps[0].get("reason")))
        check("%s: insufficient data, with no PMU among the reasons" % p,
              v.get("verdict") == "insufficient data" and "no PMU" in (v.get("reason") or ""),
              (v.get("verdict"), v.get("reason")))
        why = a.get("reason") or ""
        check("%s: the answer says why (no PMU, minutes) and when it could, not hosts needed" % p,
              a.get("verdict") == "insufficient data" and "no PMU" in why
              and "a verdict needs 2 whole days a side, from " in why and "--after 2d or more" in why
              and "needed" not in why, (a.get("verdict"), why))

if __name__ == "__main__":
    main()
