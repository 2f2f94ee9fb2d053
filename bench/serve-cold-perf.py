#!/usr/bin/env python3
"""Shares of one process's perf samples in a `perf record -g -a` file (bench/serve-cold.sh's PERF=1 runs).

Usage: serve-cold-perf.py PERF_DATA PID [TOP=25]
Prints the process's samples, self shares by DSO, by thread name, the top symbols (self), and inclusive shares of
a few kernel paths (any frame of the call chain matching), each as % of the process's samples."""
import collections
import subprocess
import sys

data, pid = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
INCLUSIVE = [
    "find_inode_bit", "__x64_sys_openat", "__x64_sys_write", "__x64_sys_pwrite64", "__x64_sys_read",
    "__x64_sys_futex", "__x64_sys_sched_yield", "asm_exc_page_fault", "__x64_sys_madvise", "__x64_sys_munmap",
    "__x64_sys_mmap", "__x64_sys_sendto", "__x64_sys_recvfrom", "__x64_sys_epoll_wait", "__x64_sys_renameat2",
    "__x64_sys_fsync", "__x64_sys_fdatasync", "__x64_sys_flock", "schedule", "tcp_sendmsg", "tcp_recvmsg",
    "WebPEncode", "tjDecompress2", "jpeg_read_scanlines", "swift_retain", "swift_release", "malloc", "free",
]
out = subprocess.run(
    ["perf", "script", "-i", data, "--pid", pid, "-F", "comm,tid,ip,sym,dso"],
    capture_output=True, text=True, errors="replace",
).stdout
samples = 0
by_dso, by_sym, by_comm = collections.Counter(), collections.Counter(), collections.Counter()
inclusive = collections.Counter()
frames = []
header = None


def flush():
    global samples
    if header is None:
        return
    samples += 1
    by_comm[header] += 1
    if frames:
        sym, dso = frames[0]
        by_dso[dso] += 1
        by_sym[f"{sym} ({dso})"] += 1
    seen = set()
    for sym, _ in frames:
        for name in INCLUSIVE:
            if name not in seen and sym.startswith(name) and (sym == name or not sym[len(name)].isalnum()):
                seen.add(name)
    for name in seen:
        inclusive[name] += 1


for line in out.splitlines():
    if not line.strip():
        flush()
        header, frames = None, []
        continue
    if not line.startswith((" ", "\t")):
        flush()
        parts = line.split()
        header, frames = parts[0], []
        continue
    parts = line.split(None, 1)
    rest = parts[1] if len(parts) > 1 else ""
    if rest.endswith(")") and " (" in rest:
        sym, dso = rest.rsplit(" (", 1)
        dso = dso[:-1].rsplit("/", 1)[-1]
    else:
        sym, dso = rest, "?"
    sym = sym.split("+0x")[0]
    frames.append((sym, dso))
flush()
pct = lambda n: f"{100 * n / max(samples, 1):5.1f} %"
print(f"samples {samples}")
print("by dso (self): " + ", ".join(f"{d} {pct(n)}" for d, n in by_dso.most_common(12)))
print("by thread: " + ", ".join(f"{c} {pct(n)}" for c, n in by_comm.most_common(8)))
print("inclusive: " + ", ".join(f"{k} {pct(inclusive[k])}" for k in INCLUSIVE if inclusive[k]))
print("top symbols (self):")
for s, n in by_sym.most_common(top):
    print(f"  {pct(n)} {n:6d}  {s[:150]}")
