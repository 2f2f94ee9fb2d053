#!/usr/bin/env python3
"""Whether a traced cold run's renders ran in the order they were admitted (BENCHMARKS.md, stop 46).

Usage: serve-cold-order.py RUN_DIR [RUN_DIR ...], each a bench/serve-cold.sh run directory recorded with
IMAGO_LOG=json TRACE=1 (wrk's per-request times in RUN_DIR/trace/, the access log in RUN_DIR/imago.log).

Joins each request's start on the client's clock with the access log's stages (queue: the wait for a render
slot; fetch; pipelineWait: the wait for the CPU queue) to place its admission and the start of its CPU job, then
prints per run: the pairs of renders admitted within 12 of each other whose CPU jobs started in the opposite order
(and the sum of those gaps), the fetch's median, p90 and maximum, the CPU-queue wait's median and p90, and the tail
(p99 over mean latency) with the ten slowest requests' path indices."""
import glob
import json
import statistics
import sys


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


for run in sys.argv[1:]:
    client = {}
    for name in glob.glob(f"{run}/trace/thread-*.txt"):
        for line in open(name):
            _, _, index, start, end, _ = line.split()
            client[int(index) - 1] = (float(start) / 1e6, float(end) / 1e6)
    if not client:
        sys.exit(f"{run}: no trace (run bench/serve-cold.sh with IMAGO_LOG=json TRACE=1)")
    origin = min(start for start, _ in client.values())
    renders = []
    for line in open(f"{run}/imago.log"):
        if '"stages"' not in line:
            continue
        record = json.loads(line)
        index = int(record["source"].rsplit("/", 1)[1].split(".")[0])
        stages = record["stages"]
        start = client[index][0] - origin
        admitted = start + stages.get("queue", 0)
        job = admitted + stages.get("fetch", 0) + stages.get("pipelineWait", 0)
        renders.append((admitted, job, stages))
    renders.sort(key=lambda r: r[0])
    inverted, gap = 0, 0.0
    for i, earlier in enumerate(renders):
        for later in renders[i + 1 : i + 13]:
            if later[1] < earlier[1]:
                inverted += 1
                gap += earlier[1] - later[1]
    fetches = [r[2].get("fetch", 0) for r in renders]
    waits = [r[2].get("pipelineWait", 0) for r in renders]
    latencies = {index: end - start for index, (start, end) in client.items()}
    mean = statistics.mean(latencies.values())
    slowest = sorted(latencies, key=latencies.get, reverse=True)[:10]
    print(f"{run}: {len(renders)} renders")
    print(f"  admitted in order, CPU job out of order: {inverted} pairs within 12, {gap:.0f} ms of gaps")
    print(f"  fetch ms: median {statistics.median(fetches):.2f}, p90 {percentile(fetches, 0.9):.2f}, max {max(fetches):.2f}")
    print(f"  CPU-queue wait ms: median {statistics.median(waits):.2f}, p90 {percentile(waits, 0.9):.2f}")
    print(f"  latency ms: mean {mean:.1f}, p99 {percentile(latencies.values(), 0.99):.1f} "
          f"(p99 / mean {percentile(latencies.values(), 0.99) / mean:.2f}); slowest paths {sorted(slowest)}")
