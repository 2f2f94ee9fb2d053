#!/usr/bin/env python3
"""Prints bench-results.json (written by imago-bench) as the Markdown table of BENCHMARKS.md.

usage: python3 bench/results-table.py [bench-results.json]
"""
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "bench-results.json"
rows = json.load(open(path))


def num(x):
    if x != x:  # NaN
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"
    return f"{x:.3g}"


print("| comparison | imago | peer | unit | ratio | goal | met | peer / baseline |")
print("|---|---:|---:|---|---:|---|---|---|")
for r in rows:
    goal = r.get("goal")
    if goal is None:
        goal_s = "—"
    elif r.get("goalOn") == "imago":
        goal_s = f"imago ≤ {goal:g}"
    else:
        goal_s = f"≤ {goal:g}"
    met = r.get("met")
    met_s = "—" if met is None else ("yes" if met else "**NO**")
    name = r["name"].replace("|", "\\|")
    peer = r["peerName"].replace("|", "\\|")
    if r.get("note"):
        peer += "; " + r["note"].replace("|", "\\|")
    print(f"| {name} | {num(r['imago'])} | {num(r['peer'])} | {r['unit']} | {r['ratio']:.3f} | {goal_s} | {met_s} | {peer} |")
