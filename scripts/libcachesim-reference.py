#!/usr/bin/env python3
"""Hit ratios of libCacheSim's LRU, ARC, LIRS and TwoQ on the shared traces, and of its WTinyLFU on
backf and zigzag: the reference figures that Validation/Tests/PublishedTableTests/
LibCacheSimReferenceTests.swift and WTinyLFUAgainstLRUTests.swift compare with.

Needs the libCacheSim Python bindings (`pip install libcachesim==0.3.5`, a binary wheel) and
TIERCACHE_TRACES. Takes about a minute (OLTP and cloudPhysics; add --p12 for P12, ~3 more minutes).
ARC traces are expanded to one page a line first (as the README of the traces says), in a temporary file.
"""
import os
import subprocess
import sys
import tempfile

import libcachesim as lcs

traces = os.environ.get("TIERCACHE_TRACES")
if not traces:
    sys.exit("set TIERCACHE_TRACES to the shared traces folder")


def expanded(name):
    """An ARC .lis.zst trace as a plain text file of page numbers, one request a line."""
    path = os.path.join(tempfile.gettempdir(), f"tiercache-{name}.txt")
    if not os.path.exists(path):
        source = os.path.join(traces, "arc", f"{name}.lis.zst")
        with open(path, "w") as out:
            text = subprocess.run(["zstd", "-dc", source], check=True, capture_output=True, text=True).stdout
            for line in text.splitlines():
                fields = line.split()
                start, count = int(fields[0]), int(fields[1])
                out.write("".join(f"{start + i}\n" for i in range(count)))
    return path


def run(label, open_reader, capacities, policies):
    for name, make in policies:
        cells = []
        for capacity in capacities:
            miss, byte_miss = make(capacity).process_trace(open_reader())
            cells.append(f"{100 * (1 - miss):.4f}/{100 * (1 - byte_miss):.4f}")
        print(label, name, " ".join(cells), flush=True)


policies = [("LRU", lcs.LRU), ("ARC", lcs.ARC), ("LIRS", lcs.LIRS), ("TwoQ", lcs.TwoQ)]
oltp = expanded("OLTP")
run("OLTP", lambda: lcs.TraceReader(oltp, lcs.TraceType.PLAIN_TXT_TRACE), [1000, 2000, 5000, 10000, 15000], policies)
cloud = os.path.join(traces, "libcachesim", "cloudPhysicsIO.oracleGeneral.bin.zst")
for ignore_size, capacities in [(True, [49, 490, 4897, 9795]), (False, [2029770, 20297697, 202976973, 405953946])]:
    run("cloudPhysics " + ("objects" if ignore_size else "bytes"),
        lambda: lcs.TraceReader(cloud, lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=ignore_size)),
        capacities, policies)
# W-TinyLFU where LRU is optimal (WTinyLFUAgainstLRUTests): the LIRS paper's backf and zigzag,
# one block a line (its "*" marker lines dropped), at 10% and 50% of their footprints.
for name, capacities in [("backf", [75, 375]), ("zigzag", [200, 1000])]:
    path = os.path.join(tempfile.gettempdir(), f"tiercache-{name}.txt")
    source = os.path.join(traces, "lirs", f"{name}.trace.gz")
    text = subprocess.run(["gzip", "-dc", source], check=True, capture_output=True, text=True).stdout
    with open(path, "w") as out:
        out.write("".join(f"{line.strip()}\n" for line in text.splitlines() if line.strip() and not line.startswith("*")))
    run(name, lambda: lcs.TraceReader(path, lcs.TraceType.PLAIN_TXT_TRACE), capacities, [("LRU", lcs.LRU), ("WTinyLFU", lcs.WTinyLFU)])
if "--p12" in sys.argv:
    p12 = expanded("P12")
    run("P12", lambda: lcs.TraceReader(p12, lcs.TraceType.PLAIN_TXT_TRACE), [1024, 32768, 262144], policies[2:])
