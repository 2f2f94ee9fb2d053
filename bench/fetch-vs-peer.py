#!/usr/bin/env python3
"""Issue 23's benchmark: `imago fetch --resize 256x256 --concurrency 6` as a whole process against the Python peer
(bench/peer.py: requests + Pillow draft() + thumbnail() + diskcache, 6 threads) as a whole process, on the
gallery's photos (768x512 to 3072x2048, served by nginx on loopback).

Rounds are interleaved (imago cold, peer cold, imago warm, peer warm, then the next round), each run a fresh
process; cold starts from empty cache directories, warm is a new process over the directory the cold run filled.
Wall time, CPU time (user + system) and peak RSS come from wait4() of each child. Prints one JSON object with the
medians and the same-round ratios.

usage: fetch-vs-peer.py IMAGO PYTHON PEER URLS_FILE ROUNDS
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(argv):
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    err = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv[0]} failed ({status}): {err[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def main():
    imago, python, peer, urls, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    rows = {k: [] for k in ("imago_cold", "peer_cold", "imago_warm", "peer_warm")}
    for _ in range(rounds):
        scratch = tempfile.mkdtemp(prefix="imago-fetch-bench-")
        try:
            icache, pcache = os.path.join(scratch, "imago"), os.path.join(scratch, "peer")
            fetch = [imago, "fetch", "--list", urls, "--resize", "256x256", "--concurrency", "6", "--json",
                     "--cache-dir", icache]
            rows["imago_cold"].append(run(fetch))
            rows["peer_cold"].append(run([python, peer, "cold", urls, pcache]))
            rows["imago_warm"].append(run(fetch))
            rows["peer_warm"].append(run([python, peer, "warm-disk", urls, pcache]))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    out = {"rounds": rounds, "urls": sum(1 for line in open(urls) if line.strip())}
    for name, values in rows.items():
        out[name] = {k: round(statistics.median(v[k] for v in values), 3) for k in ("wall", "cpu", "rss_mb")}
    for phase in ("cold", "warm"):
        ratios = [i["wall"] / p["wall"] for i, p in zip(rows[f"imago_{phase}"], rows[f"peer_{phase}"])]
        out[f"{phase}_wall_ratio_median"] = round(statistics.median(ratios), 3)
        out[f"{phase}_wall_ratios"] = [round(r, 3) for r in ratios]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
