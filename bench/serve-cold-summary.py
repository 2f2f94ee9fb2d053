#!/usr/bin/env python3
"""Summarises one run of bench/serve-cold.sh (its run-N folder): prints one line, writes summary.txt beside it.

Usage: serve-cold-summary.py RUN_DIR [IMAGES=500]
CPU per image is imago serve's user + system CPU over the wrk run; threads are grouped by name (comm).
"""
import os
import sys

HZ = os.sysconf("SC_CLK_TCK")


def proc_stat(text):
    # Fields after the ")" of comm; index 0 is field 3 (state).
    rest = text[text.rindex(")") + 2 :].split()
    return rest


def tasks(folder):
    result = {}
    for name in os.listdir(folder):
        if not name.startswith("task-"):
            continue
        lines = open(os.path.join(folder, name)).read().splitlines()
        if len(lines) < 2:
            continue
        stat = lines[0]
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        rest = proc_stat(stat)
        run_ns, wait_ns, slices = (int(x) for x in lines[1].split())
        switches = {}
        for line in lines[2:]:
            key, value = line.split(":")
            switches[key.strip()] = int(value)
        result[name[5:]] = dict(
            comm=comm,
            utime=int(rest[11]),
            stime=int(rest[12]),
            run=run_ns,
            wait=wait_ns,
            slices=slices,
            vol=switches.get("voluntary_ctxt_switches", 0),
            invol=switches.get("nonvoluntary_ctxt_switches", 0),
        )
    return result


def kv(path):
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 2:
            out[parts[0]] = int(parts[1])
    return out


def cpu_line(path):
    for line in open(path):
        if line.startswith("cpu "):
            return [int(x) for x in line.split()[1:]]


def main():
    run = sys.argv[1]
    images = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    before, after = os.path.join(run, "before"), os.path.join(run, "after")
    result = dict(x.split("=", 1) for x in open(os.path.join(run, "result")).read().split())
    pb, pa = proc_stat(open(os.path.join(before, "proc-stat")).read()), proc_stat(
        open(os.path.join(after, "proc-stat")).read()
    )
    user = (int(pa[11]) - int(pb[11])) / HZ
    system = (int(pa[12]) - int(pb[12])) / HZ
    minflt = int(pa[7]) - int(pb[7])
    majflt = int(pa[9]) - int(pb[9])
    cpu_ms = (user + system) * 1000 / images
    tb, ta = tasks(before), tasks(after)
    threads = os.path.join(run, "threads")  # the sampler's last values, for threads that exited before "after"
    if os.path.isdir(threads):
        ta = {**tasks(threads), **ta}
    groups = {}
    for tid, t in ta.items():
        b = tb.get(tid, dict(utime=0, stime=0, run=0, wait=0, slices=0, vol=0, invol=0))
        g = groups.setdefault(t["comm"], dict(n=0, cpu=0, run=0, wait=0, slices=0, vol=0, invol=0))
        g["n"] += 1
        g["cpu"] += (t["utime"] + t["stime"] - b["utime"] - b["stime"]) * 1000 / HZ
        for key in ("run", "wait", "slices", "vol", "invol"):
            g[key] += t[key] - b[key]
    cb, ca = cpu_line(os.path.join(before, "stat")), cpu_line(os.path.join(after, "stat"))
    names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
    machine = {n: (ca[i] - cb[i]) / HZ for i, n in enumerate(names)}
    vb, va = kv(os.path.join(before, "vmstat")), kv(os.path.join(after, "vmstat"))
    vm = {k: va[k] - vb.get(k, 0) for k in va if va[k] - vb.get(k, 0) != 0}
    seconds = float(result["seconds"])
    line = (
        f"{os.path.basename(run)} rps={result['rps']} p99={result['p99_ms']} tail={float(result['p99_ms']) * float(result['rps']) / 32000:.2f} "
        f"cpu_ms={cpu_ms:.2f} user={user * 1000 / images:.2f} sys={system * 1000 / images:.2f} "
        f"minflt/img={minflt / images:.1f} majflt={majflt} floor={result['floor_before']}/{result['floor_after']} "
        f"machine_busy_s={sum(v for k, v in machine.items() if k not in ('idle', 'iowait')):.2f}/{2 * seconds:.2f} "
        f"steal={machine['steal']:.2f}"
    )
    rows = [line, "", "threads (name, count: cpu ms, schedstat run ms, wait ms, slices, voluntary, involuntary):"]
    for comm, g in sorted(groups.items(), key=lambda x: -x[1]["cpu"]):
        rows.append(
            f"  {comm:<24} {g['n']:>3}: cpu {g['cpu']:8.0f}  run {g['run'] / 1e6:8.1f}  wait {g['wait'] / 1e6:8.1f}  "
            f"slices {g['slices']:7d}  vol {g['vol']:7d}  invol {g['invol']:6d}"
        )
    rows.append("machine over the run (s): " + " ".join(f"{k}={v:.2f}" for k, v in machine.items()))
    keys = [
        "pgfault", "pgmajfault", "thp_fault_alloc", "thp_fault_fallback", "thp_collapse_alloc", "pgalloc_normal",
        "pgfree", "numa_hint_faults", "compact_stall", "nr_dirtied", "nr_written", "pswpin", "workingset_refault_file",
        "pgsteal_kswapd", "pgscan_kswapd", "thp_split_pmd", "pgactivate", "pgdeactivate", "pglazyfree",
    ]
    rows.append("vmstat: " + " ".join(f"{k}={vm[k]}" for k in keys if k in vm))
    open(os.path.join(run, "summary.txt"), "w").write("\n".join(rows) + "\n")
    print(line, flush=True)


main()
