#!/usr/bin/env python3
"""Prints each subject's throughput against its baselines from one `swift package benchmark --format markdown` run.

Usage: swift package benchmark --format markdown | python3 ratios.py
Pairs benchmarks by the part of their name before ':' ("Disk get hit 1 KiB: LMDBTier" with
"Disk get hit 1 KiB: baseline ..."), and compares median (p50) and best (p0) throughput. On a
shared, noisy machine the best samples are the steadier comparison: noise only ever slows a sample.
"""
import re
import sys

text = sys.stdin.read()
scale = {"(#)": 1, "(K)": 1e3, "(M)": 1e6, "(G)": 1e9}
medians = {}
bests = {}
for block in re.split(r"^### ", text, flags=re.M)[1:]:
    name = block.splitlines()[0].strip()
    row = re.search(r"^\| Throughput \(# / s\) (\(\w\)|\(#\))\s*\|([^\n]*)", block, flags=re.M)
    if not row:
        continue
    cells = [c.strip() for c in row.group(2).split("|") if c.strip()]
    medians[name] = float(cells[2]) * scale[row.group(1)]  # columns: p0, p25, p50, ...
    bests[name] = float(cells[0]) * scale[row.group(1)]    # for throughput, p0 is the best sample

groups = {}
for name in medians:
    group, _, subject = name.partition(": ")
    groups.setdefault(group, {})[subject] = name

for group, subjects in groups.items():
    for subject, name in subjects.items():
        if subject.startswith("baseline"):
            continue
        for baseline, base_name in subjects.items():
            if not baseline.startswith("baseline"):
                continue
            median, base_median = medians[name], medians[base_name]
            best, base_best = bests[name], bests[base_name]
            print(f"{group}: {subject} vs {baseline[9:]}: median {median:,.0f}/s vs {base_median:,.0f}/s = {median / base_median:.2f}x; "
                  f"best {best:,.0f}/s vs {base_best:,.0f}/s = {best / base_best:.2f}x throughput ({base_best / best:.2f}x time)")

# Paired-slice benchmarks report their ratio themselves, as a custom metric "... speed-up ... x100".
for block in re.split(r"^### ", text, flags=re.M)[1:]:
    name = block.splitlines()[0].strip()
    row = re.search(r"^\| ([^|]*speed-up[^|]*x100)\s*\|([^\n]*)", block, flags=re.M)
    if not row:
        continue
    cells = [c.strip() for c in row.group(2).split("|") if c.strip()]
    p25, p50, p75 = (float(cells[i]) / 100 for i in (1, 2, 3))
    low, high = min(p25, p75), max(p25, p75)
    print(f"{name}: median {p50:.2f}x (middle half {low:.2f}x to {high:.2f}x) over {cells[-1]} pairs of adjacent slices")
