#!/usr/bin/env python3
"""Samples every thread of PID every 0.25 s until PID exits or SIGTERM, keeping each thread's last values (threads of
Dispatch's pool exit after idling, before a run's end can be snapshotted), then writes one file per thread into
DIR: task-TID with its stat line, schedstat line and the status switch lines.
Usage: serve-cold-threads.py [--once] PID DIR (run it at normal priority: it only needs the idle moments). With
--once it takes one sample and writes it at once (bench/serve-cold.sh's snapshots before and after a run)."""
import os
import signal
import sys
import time

once = sys.argv[1] == "--once"
pid, folder = sys.argv[1 + once], sys.argv[2 + once]
last = {}
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def sample():
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            stat = open(f"{base}/stat").read().strip()
            sched = open(f"{base}/schedstat").read().strip()
            switches = [l.strip() for l in open(f"{base}/status") if "ctxt_switches" in l]
        except OSError:
            continue
        last[tid] = "\n".join([stat, sched] + switches) + "\n"
    return True


while sample() and not (once or stop):
    time.sleep(0.25)
os.makedirs(folder, exist_ok=True)
for tid, text in last.items():
    open(os.path.join(folder, f"task-{tid}"), "w").write(text)
