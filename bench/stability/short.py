#!/usr/bin/env python3
"""Summarises bench/stability/short.sh: per policy, how far each case's median moves between
processes: the spread over all processes, (max - min) / min, and between consecutive
processes as two pipelines would see it, |a - b| / min(a, b); the kernel's and its baseline's."""
import glob
import json
import os
import re
import statistics
import sys

runs = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    m = re.match(r"(\w+)-(\d+)\.json", os.path.basename(path))
    if not m:
        continue
    try:
        doc = json.load(open(path))
    except ValueError:
        print("unreadable:", path)
        continue
    for r in doc.get("results", []):
        t = r.get("timing") or {}
        if "median_ms" not in t:
            continue
        key = (r["instance"], r["dtype"], r["shape_text"])
        base = ((r.get("baseline") or {}).get("timing") or {}).get("median_ms")
        runs.setdefault(m.group(1), {}).setdefault(key, []).append((int(m.group(2)), t["median_ms"], base,
                                                                    t.get("input_sets")))


def pct(a, b):
    return 100.0 * abs(a - b) / min(a, b)


for pol, cases in sorted(runs.items()):
    spreads, pairs, bpairs, short_pairs = [], [], [], []
    worst = []
    for key, v in cases.items():
        v.sort()
        ms = [x[1] for x in v]
        if len(ms) < 2:
            continue
        spreads.append(pct(max(ms), min(ms)))
        pp = [pct(ms[i], ms[i + 1]) for i in range(len(ms) - 1)]
        pairs += pp
        if ms[0] < 0.010:
            short_pairs += pp
        bs = [x[2] for x in v if x[2]]
        bpairs += [pct(bs[i], bs[i + 1]) for i in range(len(bs) - 1)]
        worst.append((max(pp), key, ms, v[0][3]))
    q = lambda xs, p: statistics.quantiles(xs, n=100)[p - 1] if len(xs) > 2 else float("nan")
    print("%-5s cases %d, processes %d" % (pol, len(cases), max(len(v) for v in cases.values())))
    print("      spread over processes: median %.2f %%, p90 %.2f %%, max %.2f %%" % (
        statistics.median(spreads), q(spreads, 90), max(spreads)))
    print("      consecutive pairs: median %.2f %%, p90 %.2f %%, max %.2f %%; within 2 %%: %d of %d" % (
        statistics.median(pairs), q(pairs, 90), max(pairs), sum(p <= 2 for p in pairs), len(pairs)))
    if short_pairs:
        print("      pairs of kernels < 10 us: within 1 %%: %d of %d, within 2 %%: %d of %d, max %.2f %%" % (
            sum(p <= 1 for p in short_pairs), len(short_pairs), sum(p <= 2 for p in short_pairs), len(short_pairs),
            max(short_pairs)))
    if bpairs:
        print("      baseline consecutive pairs: median %.2f %%, max %.2f %%" % (statistics.median(bpairs), max(bpairs)))
    for w in sorted(worst, reverse=True)[:5]:
        print("      worst %.2f %% %s %s %s (sets %s): %s" % (w[0], w[1][0], w[1][1], w[1][2], w[3],
                                                      " ".join("%.2f" % (x * 1000) for x in w[2])))
