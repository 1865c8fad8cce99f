#!/usr/bin/env python3
"""Summarises bench/stability/run.sh: per policy and case, each phase's figure and the
spread across phases, for the kernel and its in-process baseline. Standard library only."""
import glob
import json
import os
import statistics
import sys

out = sys.argv[1]
PHASES = ["cool1", "cool2", "hot1", "hot2"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def spread(vals):
    vals = [v for v in vals if v]
    return 100.0 * (max(vals) - min(vals)) / min(vals) if len(vals) > 1 else float("nan")


def step(samples):
    """Smallest gap between distinct sample values: the timer's visible resolution."""
    vals = sorted(set(samples))
    gaps = [b - a for a, b in zip(vals, vals[1:]) if b - a > 1e-9]
    return min(gaps) if gaps else float("nan")


heat = load(os.path.join(out, "heat.json"))
if heat and heat.get("results"):
    tr = heat["results"][0]["timing"].get("trace", [])
    print("heat: %d samples" % len(tr))
    sec = {}
    for s in tr:
        sec.setdefault(int(s["at_ms"] // 2000), []).append(s)
    for k in sorted(sec):
        v = sec[k]
        print("  %3d s  median %.4f ms  clock median %s MHz  reasons %s" % (
            2 * k, statistics.median(x["ms"] for x in v),
            statistics.median(x["sm_mhz"] or 0 for x in v),
            sorted({x["reasons"] for x in v if x["reasons"] is not None})))

policies = sorted({os.path.basename(p).split("-")[1] for p in glob.glob(os.path.join(out, "cool1-*.json"))})
print("\nfigure per phase (cool1 cool2 hot1 hot2), spread = (max-min)/min")
for pol in policies:
    print("\n[%s]" % pol)
    i = 0
    while os.path.exists(os.path.join(out, "cool1-%s-%d.json" % (pol, i))):
        rows = {"median": [], "iq_mean": [], "base": [], "mhz": [], "disc": [], "n": [], "wall": []}
        name = ""
        res_step = float("nan")
        for ph in PHASES:
            d = load(os.path.join(out, "%s-%s-%d.json" % (ph, pol, i)))
            r = (d or {}).get("results", [{}])[0] if d else {}
            t = r.get("timing", {})
            name = name or "%s %s" % (r.get("instance", "?"), r.get("shape_text", ""))
            rows["median"].append(t.get("median_ms"))
            rows["iq_mean"].append(t.get("iq_mean_ms"))
            b = (r.get("baseline") or {}).get("timing", {})
            rows["base"].append(b.get("median_ms"))
            rows["mhz"].append((t.get("sm_mhz_after_samples") or {}).get("median"))
            rows["disc"].append(t.get("discarded_throttled"))
            rows["n"].append(t.get("samples"))
            if ph == "cool1" and t.get("trace"):
                res_step = step([s["ms"] for s in t["trace"]])
        print("  %s" % name)
        for key in ("median", "iq_mean", "base"):
            v = rows[key]
            print("    %-8s %s  spread %.2f %%" % (key, " ".join("%.5f" % x if x else "-" for x in v), spread(v)))
        print("    clock %s MHz, samples %s, discarded %s, timer step %.5f ms" % (
            rows["mhz"], rows["n"], rows["disc"], res_step))
        i += 1
