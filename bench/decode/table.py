#!/usr/bin/env python3
"""Prints bench/decode's table from one run's work folder: the `check` verdicts of the decode
variants, gemm.gemv and gemm.decode_mma (grid and outside it; gemm.decode_mma by its rows: the
8-row instances and the m16/m32/m64 ones), then per shape (M = 1 to 64) the best kport
instance, gemm.gemv, the fastest gemm.decode_mma instance and the fastest other (tiled) kport
instance against cublasGemmEx of the same process (time in us, ratio = cuBLAS time / kport
time).

    python3 bench/decode/table.py WORK_DIR
"""
import collections
import json
import os
import sys


def docs(path):
    """Every JSON document of a file (one per line, or one in all)."""
    try:
        text = open(path).read()
    except OSError as e:
        return [{"error": str(e)}]
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    if not out and text.strip():
        try:
            out.append(json.loads(text))
        except ValueError as e:
            out.append({"error": f"{path}: {e}"})
    return out


def measured(doc):
    """A bench document's measured results and the baseline's median time in ms (None when no
    result carries one)."""
    rows = [r for r in doc.get("results", []) if r.get("verdict") == "measured"]
    base = next((r["baseline"]["timing"]["median_ms"] for r in rows
                 if isinstance(r.get("baseline"), dict) and "timing" in r["baseline"]), None)
    return rows, base


def print_checks(w, label):
    """Prints the `check` verdicts of WORK_DIR's check.json and check-outside.json counted by
    label(instance name), the largest normwise error among passes per dtype and the first 40
    cases that neither passed nor were refused."""
    verdicts, failures = collections.defaultdict(collections.Counter), []
    worst = collections.defaultdict(float)
    for name in ("check.json", "check-outside.json"):
        for doc in docs(os.path.join(w, name)):
            if "error" in doc and "results" not in doc:
                failures.append(f"  {name}: {doc['error']}")
            for r in doc.get("results", []):
                verdicts[label(r["instance"])][r.get("verdict")] += 1
                if r.get("verdict") == "passed":
                    worst[r["dtype"]] = max(worst[r["dtype"]], r.get("normwise_rel_error") or 0)
                elif r.get("verdict") != "unsupported":
                    failures.append(f"  {r['instance']} {r['dtype']} {r['shape_text']}: {r.get('verdict')} "
                                    f"{r.get('reason', '')} err={r.get('normwise_rel_error')}")
    for key, counts in sorted(verdicts.items()):
        print(f"{key} check: " + ", ".join(f"{v} {c}" for v, c in sorted(counts.items(), key=str)))
    print("  worst normwise error passed: " + ", ".join(f"{d} {e:.2e}" for d, e in sorted(worst.items())))
    for line in failures[:40]:
        print(line)
    print()


def variant_rows(instance):
    """gemm.decode_mma's instances by their rows (m8, m16, ...), the others by variant."""
    inst = instance.split(".")
    rows = inst[2].split("_")[0] if len(inst) > 2 and inst[2][:1] == "m" else ""
    return "gemm." + inst[1] + (f" {rows}" if rows else " m8" if inst[1] == "decode_mma" else "")


def main():
    w = sys.argv[1]
    print_checks(w, variant_rows)
    print(f"{'bf16 shape':>24} {'best kport instance':>36} {'us':>8} {'gemv us':>8} {'fastest decode_mma':>28} "
          f"{'us':>8} {'fastest tiled instance':>36} {'tile us':>8} {'cuBLAS us':>9} {'best x':>6} {'gemv x':>6} {'mma x':>6} {'tile x':>6}")
    for doc in docs(os.path.join(w, "bench.jsonl")):
        rows, base = measured(doc)
        if not rows:
            continue
        best = min(rows, key=lambda r: r["timing"]["median_ms"])
        gemv = next((r for r in rows if r["instance"].startswith("gemm.gemv")), None)
        mmas = [r for r in rows if r["instance"].startswith("gemm.decode_mma")]
        mma = min(mmas, key=lambda r: r["timing"]["median_ms"]) if mmas else None
        tiles = [r for r in rows if not r["instance"].startswith(("gemm.gemv", "gemm.decode_mma"))]
        tile = min(tiles, key=lambda r: r["timing"]["median_ms"]) if tiles else None
        t = best["timing"]["median_ms"] * 1e3
        g = gemv["timing"]["median_ms"] * 1e3 if gemv else None
        d = mma["timing"]["median_ms"] * 1e3 if mma else None
        tt = tile["timing"]["median_ms"] * 1e3 if tile else None
        d_name = mma["instance"].removeprefix("gemm.decode_mma.") if mma else "-"
        t_name = tile["instance"] if tile else "-"
        b = base * 1e3 if base else None
        print(f"{best['shape_text']:>24} {best['instance']:>36} {t:8.1f} {g if g is None else round(g, 1)!s:>8} "
              f"{d_name:>28} {d if d is None else round(d, 1)!s:>8} {t_name:>36} {tt if tt is None else round(tt, 1)!s:>8} "
              f"{b if b is None else round(b, 1)!s:>9} {(b / t if b else float('nan')):6.2f} "
              f"{(b / g if b and g else float('nan')):6.2f} {(b / d if b and d else float('nan')):6.2f} "
              f"{(b / tt if b and tt else float('nan')):6.2f}")


if __name__ == "__main__":
    main()
