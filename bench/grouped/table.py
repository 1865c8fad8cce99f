#!/usr/bin/env python3
"""Prints bench/grouped's table from one run's work folder: the `check` verdicts (grid and
outside it), then per bench shape kport's grouped_gemm instances in TFLOP/s with the ratio to
cuBLAS's strided batch of the same process and to torch._grouped_mm (peer.py, same call), and
the dense gemm of the same tile at the same total work, and the masked decode shapes in TFLOP/s
and GB/s (no baseline) with the GPU test of the masked layout. Then grouped_gemm_fp8: its check
verdicts, its bench grid (the masked shapes with their GB/s), the GPU test, and per scale mode
the target shape against the dense gemm_fp8 of the same tile at the same total work (one
process per mode). A part that did not run (PARTS) prints nothing.

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


def masked_text(s):
    return "%d x (%d of %d, %d, %d)" % (s["g"], s["valid"], s["m"], s["n"], s["k"])


def test_line(w, name, what):
    """The GoogleTest summary of a GPU test's log, if it ran."""
    try:
        with open(os.path.join(w, name)) as f:
            lines = [l.strip() for l in f if l.startswith(("[  PASSED", "[  FAILED", "[  SKIPPED"))]
    except OSError:
        return
    print(f"{what}: " + ("; ".join(lines[:3]) if lines else "no summary (see " + name + ")"))


def verdict_lines(w, names):
    """The verdicts of the check reports `names` (those present) and the failures among them."""
    verdicts, failures = collections.Counter(), []
    for name in names:
        if not os.path.exists(os.path.join(w, name)):
            continue
        doc = load(os.path.join(w, name))
        if "error" in doc:
            failures.append(f"  {name}: {doc['error']}")
        for r in doc.get("results", []):
            verdicts[r.get("verdict")] += 1
            if r.get("verdict") not in ("passed", "unsupported"):
                failures.append(f"  {r['instance']} {r['dtype']} {r['shape_text']}: {r.get('verdict')} "
                                f"{r.get('reason', '')} err={r.get('normwise_rel_error')}")
    return verdicts, failures


def fp8_tables(w):
    verdicts, failures = verdict_lines(w, ["check-fp8.json"])
    if verdicts or failures:
        print("fp8 check: " + ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items(), key=str)))
        for line in failures[:40]:
            print(line)
        worst = collections.defaultdict(float)
        for r in load(os.path.join(w, "check-fp8.json")).get("results", []):
            if r.get("verdict") == "passed":
                key = (r["dtype"], r["shape"].get("scale"))
                worst[key] = max(worst[key], r.get("normwise_rel_error") or 0.0)
        for (dtype, scale), err in sorted(worst.items()):
            print(f"  largest normwise error among passes, {dtype} scale={scale}: {err:.2e}")
    test_line(w, "groups_test.log", "fp8 GPU test (groups, masked layout)")
    grid = [r for r in load(os.path.join(w, "bench-fp8.json")).get("results", []) if r.get("verdict") == "measured"]
    if grid:
        print()
        print(f"{'fp8 g x (m, n, k), scale':>34} {'instance':>16} {'TFLOP/s':>8}")
        for r in grid:
            s = r["shape"]
            if "valid" in s:  # the masked layout: valid rows of m per group; decode is bound by B's bytes
                key = masked_text(s) + ", %d" % s["scale"]
                print(f"{key:>34} {r['instance'].split('.')[-1]:>16} {r.get('tflops', 0.0):8.1f}"
                      f"  {r.get('gbps', 0.0):7.1f} GB/s (masked)")
                continue
            key = "%d x (%d, %d, %d), %d" % (s["g"], s["m"], s["n"], s["k"], s["scale"])
            print(f"{key:>34} {r['instance'].split('.')[-1]:>16} {r.get('tflops', 0.0):8.1f}")
    for scale in (0, 1, 2):
        name = f"bench-fp8-target-{scale}.json"
        if not os.path.exists(os.path.join(w, name)):
            continue
        doc = load(os.path.join(w, name))
        grouped, dense = {}, {}
        for r in doc.get("results", []):
            tile = r["instance"].split(".")[-1]
            figure = r.get("tflops") if r.get("verdict") == "measured" else None
            (grouped if r["instance"].startswith("grouped_gemm_fp8.") else dense)[tile] = (figure, r.get("reason"))
        print(f"\nfp8 target, scale={scale}: grouped 4 x (8192, 4096, 7168) against dense gemm_fp8 "
              f"(32768, 4096, 7168), same process" + (f" ({doc['error']})" if "error" in doc else ""))
        for tile in sorted(set(grouped) | set(dense)):
            g, d = grouped.get(tile, (None, None)), dense.get(tile, (None, None))
            ratio = f"{g[0] / d[0]:.3f}" if g[0] and d[0] else "-"
            notes = "; ".join(x for x in (g[1], d[1]) if x)
            print(f"  {tile:>20}: grouped {g[0] if g[0] is None else round(g[0], 1)!s:>7}  "
                  f"dense {d[0] if d[0] is None else round(d[0], 1)!s:>7}  grouped/dense {ratio}"
                  + (f"  ({notes})" if notes else ""))
        # Issue 20's measure: the grouped figure against the dense fp8 figure at the same work,
        # each the fastest instance's.
        best_g = max((v[0] for v in grouped.values() if v[0]), default=None)
        best_d = max((v[0] for v in dense.values() if v[0]), default=None)
        if best_g and best_d:
            print(f"  {'best':>20}: grouped {best_g:7.1f}  dense {best_d:7.1f}  grouped/dense {best_g / best_d:.3f}")


def main():
    w = sys.argv[1]
    verdicts, failures = verdict_lines(w, ("check.json", "check-outside.json"))
    print("check: " + ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items(), key=str)))
    for line in failures[:40]:
        print(line)
    test_line(w, "masked_test.log", "GPU test of the masked layout")

    peers = collections.defaultdict(dict)
    for e in load(os.path.join(w, "peer.json")).get("entries", []):
        if "tflops" in e:
            peers[shape_key(e["shape"])][e["layout"]] = e["tflops"]
    rows = collections.defaultdict(dict)
    base = {}
    masked = []
    for r in load(os.path.join(w, "bench.json")).get("results", []):
        if r.get("verdict") != "measured":
            continue
        if "valid" in r["shape"]:
            masked.append(r)
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
    if masked:
        print()
        print(f"{'masked g x (valid of m, n, k)':>34} {'instance':>22} {'TFLOP/s':>8} {'GB/s':>8}")
        for r in masked:
            print(f"{masked_text(r['shape']):>34} {r['instance'].split('.')[-1]:>22} {r.get('tflops', 0.0):8.1f} "
                  f"{r.get('gbps', 0.0):8.1f}")
    print()
    for r in load(os.path.join(w, "bench-dense.json")).get("results", []):
        if r.get("verdict") == "measured":
            b = (r.get("baseline") or {}).get("tflops")
            print(f"dense {r['instance']} {r['shape_text']}: {r.get('tflops', 0):.1f} TFLOP/s (cuBLAS {b})")
    print()
    fp8_tables(w)


if __name__ == "__main__":
    main()
