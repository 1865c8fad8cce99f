#!/usr/bin/env python3
"""Prints bench/grouped's table from one run's work folder: the `check` verdicts (grid and
outside it), then per bench shape kport's grouped_gemm instances in TFLOP/s with the ratio to
cuBLAS's strided batch of the same process and to torch._grouped_mm (peer.py, same call), and
the dense gemm of the same tile at the same total work.

    python3 bench/grouped/table.py WORK_DIR
"""
import collections
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"{path}: {e}"}


def shape_key(s):
    return (s.get("g", 1), s["m"], s["n"], s["k"])


def main():
    w = sys.argv[1]
    verdicts, failures = collections.Counter(), []
    for name in ("check.json", "check-outside.json"):
        doc = load(os.path.join(w, name))
        if "error" in doc:
            failures.append(f"  {name}: {doc['error']}")
        for r in doc.get("results", []):
            verdicts[r.get("verdict")] += 1
            if r.get("verdict") not in ("passed", "unsupported"):
                failures.append(f"  {r['instance']} {r['dtype']} {r['shape_text']}: {r.get('verdict')} "
                                f"{r.get('reason', '')} err={r.get('normwise_rel_error')}")
    print("check: " + ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items(), key=str)))
    for line in failures[:40]:
        print(line)

    peers = collections.defaultdict(dict)
    for e in load(os.path.join(w, "peer.json")).get("entries", []):
        if "tflops" in e:
            peers[shape_key(e["shape"])][e["layout"]] = e["tflops"]
    rows = collections.defaultdict(dict)
    base = {}
    for r in load(os.path.join(w, "bench.json")).get("results", []):
        if r.get("verdict") != "measured":
            continue
        key = shape_key(r["shape"])
        rows[key][r["instance"].split(".")[-1]] = r.get("tflops", 0.0)
        b = r.get("baseline") or {}
        if "tflops" in b:
            base[key] = b["tflops"]
    print()
    print(f"{'g x (m, n, k)':>26} {'best kport':>22} {'TFLOP/s':>8} {'cuBLAS':>7} {'x':>5} "
          f"{'torch':>7} {'x':>5}")
    for key in sorted(rows, key=lambda k: (-k[0] * k[1] * k[2] * k[3])):
        inst, tf = max(rows[key].items(), key=lambda kv: kv[1])
        cb = base.get(key)
        pt = max(peers[key].values()) if peers.get(key) else None
        print(f"{'%d x (%d, %d, %d)' % key:>26} {inst:>22} {tf:8.1f} "
              f"{cb if cb is None else round(cb, 1)!s:>7} {(tf / cb if cb else float('nan')):5.2f} "
              f"{pt if pt is None else round(pt, 1)!s:>7} {(tf / pt if pt else float('nan')):5.2f}")
    for key, layouts in sorted(peers.items()):
        print(f"  torch._grouped_mm {key}: " + ", ".join(f"{l} {t:.1f}" for l, t in layouts.items()))
    for e in load(os.path.join(w, "peer.json")).get("entries", []):
        if "error" in e:
            print(f"  torch._grouped_mm {shape_key(e['shape'])} {e['layout']}: {e['error'][:160]}")
    print()
    for r in load(os.path.join(w, "bench-dense.json")).get("results", []):
        if r.get("verdict") == "measured":
            b = (r.get("baseline") or {}).get("tflops")
            print(f"dense {r['instance']} {r['shape_text']}: {r.get('tflops', 0):.1f} TFLOP/s (cuBLAS {b})")


if __name__ == "__main__":
    main()
