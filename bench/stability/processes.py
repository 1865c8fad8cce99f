#!/usr/bin/env python3
"""Summarises bench/stability/processes.sh: per flush method and case, each process's
figures for the kernel and its baseline, and the spread across processes."""
import glob
import json
import os
import re
import statistics
import sys

d = sys.argv[1]
runs = {}
for path in glob.glob(os.path.join(d, "*.json")):
    m = re.match(r"(\w+)-(\d+)-(\d+)\.json", os.path.basename(path))
    if not m:
        continue
    try:
        doc = json.load(open(path))
    except ValueError:
        continue
    runs.setdefault((m.group(1), int(m.group(2))), []).append((int(m.group(3)), doc))


def spread(v):
    v = [x for x in v if x]
    return 100.0 * (max(v) - min(v)) / min(v) if len(v) > 1 else float("nan")


for (flush, case) in sorted(runs):
    procs = sorted(runs[(flush, case)], key=lambda x: x[0])
    rows = []
    name = ""
    for _, doc in procs:
        r = (doc.get("results") or [{}])[0]
        name = name or "%s %s" % (r.get("instance"), r.get("shape_text"))
        t = r.get("timing", {})
        b = (r.get("baseline") or {}).get("timing", {})
        kept = [s["ms"] for s in t.get("trace", []) if s.get("kept")]
        q = statistics.quantiles(kept, n=10) if len(kept) > 10 else [float("nan")] * 9
        rows.append((t.get("median_ms"), t.get("iq_mean_ms"), t.get("mean_ms"), q[0], q[8],
                     t.get("samples"), t.get("discarded_throttled"), b.get("median_ms"), b.get("iq_mean_ms")))
    print("%-6s %s" % (flush, name))
    for r in rows:
        print("   median %.5f iqmean %.5f mean %.5f p10 %.5f p90 %.5f n %s disc %s | base median %s iqmean %s" % (
            *(x or float("nan") for x in r[:5]), r[5], r[6], r[7], r[8]))
    print("   spread: median %.2f %%, iq_mean %.2f %%, mean %.2f %%, base median %.2f %%, base iq_mean %.2f %%" % (
        spread([r[0] for r in rows]), spread([r[1] for r in rows]), spread([r[2] for r in rows]),
        spread([r[7] for r in rows]), spread([r[8] for r in rows])))
