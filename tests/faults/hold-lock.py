#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Holds a SQLite database's write lock: hold-lock.py DB SECONDS READY_FILE.

BEGIN IMMEDIATE, as a long `mmhitm import` or `analyze` would, creates
READY_FILE once the lock is held, keeps it SECONDS (or until SIGTERM), then
commits. Nothing is written.
"""
import os
import signal
import sqlite3
import sys
import time

db, seconds, ready = sys.argv[1], float(sys.argv[2]), sys.argv[3]
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
con = sqlite3.connect(db, isolation_level=None, timeout=30)
con.execute("BEGIN IMMEDIATE")
open(ready, "w").close()
try:
    time.sleep(seconds)
finally:
    con.execute("COMMIT")
    con.close()
    os.unlink(ready)
