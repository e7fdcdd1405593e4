#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
switch-truth.py SWITCHES TASKS: the machine's share of context switches that stay
in one process (prev and next threads of one tgid), measured apart from
mmhitmd, for tests/integration/test-switches.sh.

SWITCHES and TASKS are tracefs instance directories of the test's own,
with sched:sched_switch enabled in one and task:task_newtask in the
other (which never overruns: the tasks created are told even while the
reader of the switches falls behind). Their trace_pipe files are read
until SIGTERM (disable the events first), then to their end; prints
"SAME ALL READ LOST UNRESOLVED": same-mm switches and all switches
(per CPU, the read switches' share scaled to the CPU's read + overrun
ones, so a CPU whose ring buffer overran is not under-weighted), the
switches read and overrun, and those read whose tgid could not be told.

A tgid comes from task_newtask (a thread, CLONE_THREAD, has its
creator's tgid; a process its own pid) for tasks created while reading,
else from /proc/TID/status on first sight: a task that existed before and
exited before it was seen stays unresolved.
"""
import os
import re
import select
import signal
import sys

CLONE_THREAD = 0x10000
LINE = re.compile(rb"-(\d+)\s+\[(\d+)\]\s+\S+\s+\d+\.\d+: (sched_switch|task_newtask): (.*)")
SWITCH = re.compile(rb"prev_pid=(-?\d+) .* next_pid=(-?\d+) ")
NEWTASK = re.compile(rb"pid=(\d+) .* clone_flags=([0-9a-f]+) ")


class Truth:
    def __init__(self):
        self.tgid = {0: 0}      # tid -> tgid; 0: idle; None: gone
        self.same = {}          # cpu -> same-mm switches read
        self.all = {}           # cpu -> switches read
        self.unresolved = 0

    def tgid_of(self, tid):
        if tid not in self.tgid:
            self.tgid[tid] = proc_tgid(tid)
        return self.tgid[tid]

    def newtask(self, creator, rest):
        m = NEWTASK.search(rest + b" ")
        if m:
            pid, flags = int(m.group(1)), int(m.group(2), 16)
            self.tgid[pid] = self.tgid_of(creator) if flags & CLONE_THREAD else pid

    def switch(self, cpu, rest):
        m = SWITCH.search(rest + b" ")
        if not m:
            return
        prev, nxt = self.tgid_of(int(m.group(1))), self.tgid_of(int(m.group(2)))
        self.all[cpu] = self.all.get(cpu, 0) + 1
        if prev is None or nxt is None:
            self.unresolved += 1
        elif nxt and prev == nxt:
            self.same[cpu] = self.same.get(cpu, 0) + 1

    def feed(self, text):
        for line in text.splitlines():
            m = LINE.search(line)
            if not m:
                continue
            if m.group(3) == b"task_newtask":
                self.newtask(int(m.group(1)), m.group(4))
            else:
                self.switch(int(m.group(2)), m.group(4))


def proc_tgid(tid):
    try:
        with open(f"/proc/{tid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def overrun(inst, cpu):
    with open(f"{inst}/per_cpu/cpu{cpu}/stats") as f:
        for line in f:
            if line.startswith("overrun:"):
                return int(line.split()[1])
    return 0


class Pipe:
    """An instance's trace_pipe, read without blocking, whole lines at a time."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.tail = b""

    def read(self, truth):
        """Feeds what is there to TRUTH; False when there was nothing."""
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return False
        cut = chunk.rfind(b"\n") + 1
        truth.feed(self.tail + chunk[:cut])
        self.tail = chunk[cut:]
        return True


def read_until_stopped(switches, tasks, truth):
    """The CPUs' pipes in turn, a chunk each: a merged trace_pipe gives the
    oldest record of all CPUs first, and behind a busy CPU the others'
    records were overrun nearly all (60 read a second of 190k)."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while True:
        while tasks.read(truth):
            pass
        if sum(p.read(truth) for p in switches):
            continue
        if stop:
            break
        select.select([p.fd for p in switches] + [tasks.fd], [], [], 0.1)
    for p in [tasks] + switches:
        truth.feed(p.tail)


def main():
    inst = sys.argv[1]
    truth = Truth()
    cpus = sorted(int(c[3:]) for c in os.listdir(f"{inst}/per_cpu"))
    switches = [Pipe(f"{inst}/per_cpu/cpu{c}/trace_pipe") for c in cpus]
    read_until_stopped(switches, Pipe(f"{sys.argv[2]}/trace_pipe"), truth)
    same = total = read = lost = 0.0
    for cpu, n in truth.all.items():
        o = overrun(inst, cpu)
        scale = (n + o) / n
        same += truth.same.get(cpu, 0) * scale
        total += n * scale
        read += n
        lost += o
    print(f"{same:.0f} {total:.0f} {read:.0f} {lost:.0f} {truth.unresolved}")


if __name__ == "__main__":
    main()
