#!/usr/bin/env python3
"""Prints each subject's throughput against its baselines from one `swift package benchmark --format markdown` run.

Usage: swift package benchmark --format markdown | python3 ratios.py
Pairs benchmarks by the part of their name before ':' ("Disk get hit 1 KiB: LMDBTier" with
"Disk get hit 1 KiB: baseline ..."), and compares median (p50) throughput.
"""
import re
import sys

text = sys.stdin.read()
scale = {"(#)": 1, "(K)": 1e3, "(M)": 1e6, "(G)": 1e9}
medians = {}
for block in re.split(r"^### ", text, flags=re.M)[1:]:
    name = block.splitlines()[0].strip()
    row = re.search(r"^\| Throughput \(# / s\) (\(\w\)|\(#\))\s*\|([^\n]*)", block, flags=re.M)
    if not row:
        continue
    cells = [c.strip() for c in row.group(2).split("|") if c.strip()]
    medians[name] = float(cells[2]) * scale[row.group(1)]  # columns: p0, p25, p50, ...

groups = {}
for name, value in medians.items():
    group, _, subject = name.partition(": ")
    groups.setdefault(group, {})[subject] = value

for group, subjects in groups.items():
    ours = {k: v for k, v in subjects.items() if not k.startswith("baseline")}
    for subject, value in ours.items():
        for baseline, base_value in subjects.items():
            if baseline.startswith("baseline"):
                print(f"{group}: {subject} {value:,.0f}/s vs {baseline[9:]} {base_value:,.0f}/s = {value / base_value:.2f}x throughput "
                      f"({base_value / value:.2f}x time)")
