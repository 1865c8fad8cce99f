#!/usr/bin/env python3
"""Prints bench/rowwise's table from one run's work folder: the `check` verdicts of rmsnorm
and softmax, then per shape the best kport instance against the copy of the same bytes timed
in the same process (time in us, ratio = copy time / kport time, i.e. the share of the copy's
bandwidth).

    python3 bench/rowwise/table.py WORK_DIR
"""
import collections
import json
import os
import sys


def docs(path):
    """Every JSON document of a file (one per line)."""
    out = []
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        return [{"error": str(e)}]
    for line in lines:
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def main():
    w = sys.argv[1]
    verdicts, failures = collections.Counter(), []
    for doc in docs(os.path.join(w, "check.json")):
        if "error" in doc and "results" not in doc:
            failures.append(f"  check.json: {doc['error']}")
        for r in doc.get("results", []):
            verdicts[r.get("verdict")] += 1
            if r.get("verdict") not in ("passed", "unsupported"):
                failures.append(f"  {r['instance']} {r['dtype']} {r['shape_text']}: {r.get('verdict')} "
                                f"{r.get('reason', '')} err={r.get('normwise_rel_error')}")
    print("rmsnorm/softmax check: " + ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items(), key=str)))
    for line in failures[:40]:
        print(line)
    print()
    print(f"{'bf16 shape':>28} {'best kport instance':>30} {'us':>8} {'copy us':>8} {'of copy':>7}")
    for doc in docs(os.path.join(w, "bench.jsonl")):
        rows = [r for r in doc.get("results", []) if r.get("verdict") == "measured"]
        if not rows:
            continue
        best = min(rows, key=lambda r: r["timing"]["median_ms"])
        base = next((r["baseline"]["timing"]["median_ms"] for r in rows
                     if isinstance(r.get("baseline"), dict) and "timing" in r["baseline"]), None)
        t = best["timing"]["median_ms"] * 1e3
        b = base * 1e3 if base else None
        fam = best["instance"].split(".")[0]
        print(f"{fam + ' ' + best['shape_text']:>28} {best['instance']:>30} {t:8.1f} "
              f"{b if b is None else round(b, 1)!s:>8} {(b / t if b else float('nan')):7.3f}")
        # Every cluster instance at the shape (experiments included), so they compare side by side.
        for r in sorted((r for r in rows if ".cluster." in r["instance"]), key=lambda r: r["instance"]):
            rt = r["timing"]["median_ms"] * 1e3
            print(f"{'':>28} {r['instance']:>30} {rt:8.1f} {'':>8} {(b / rt if b else float('nan')):7.3f}")


if __name__ == "__main__":
    main()
