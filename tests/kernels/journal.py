#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Flattens a `journalctl -o json` dump for test-systemd's checks: one line
# per entry, tab-separated: realtime ns, priority, who (the identifier:
# "systemd" for PID 1, "mmhitmd", ...), pid, message.
#
#   journal.py FILE

import json
import sys

for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    if not line.strip():
        continue
    e = json.loads(line)
    msg = e.get("MESSAGE", "")
    if isinstance(msg, list):	# not UTF-8: journald stores the bytes
        msg = bytes(msg).decode("utf-8", "replace")
    who = e.get("SYSLOG_IDENTIFIER") or e.get("_COMM", "?")
    print("%d\t%s\t%s\t%s\t%s" % (int(e["__REALTIME_TIMESTAMP"]) * 1000, e.get("PRIORITY", "-"),
                                  who, e.get("_PID", "-"), msg.replace("\t", " ").replace("\n", " ")))
