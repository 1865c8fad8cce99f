#!/usr/bin/env python3
"""Prints bench/tiles' table from one run's work folder: the `check` verdicts of the tiles
under study (grid and outside it), then per bf16 shape every gemm.wgmma_tma instance's time
against cublasGemmEx of the same process (ratio = cuBLAS time / kport time), the fastest of
the other instances and the fastest tile under study.

    python3 bench/tiles/table.py WORK_DIR TILE...
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "decode"))
from table import docs, measured, print_checks  # noqa: E402  (harness output files, their verdicts)


def main():
    w, studied = sys.argv[1], set(sys.argv[2:])
    print_checks(w, lambda instance: instance)
    print(f"{'bf16 shape':>22} {'cuBLAS us':>9} {'fastest other instance':>36} {'us':>8} {'x':>5} "
          f"{'fastest tile under study':>30} {'us':>8} {'x':>5}   all (x cuBLAS)")
    for doc in docs(os.path.join(w, "bench.jsonl")):
        rows, base_ms = measured(doc)
        if not rows:
            continue
        base = base_ms * 1e3 if base_ms is not None else None
        us = {r["instance"]: r["timing"]["median_ms"] * 1e3 for r in rows}
        others = {i: t for i, t in us.items() if i not in studied}
        under_study = {i: t for i, t in us.items() if i in studied}

        def cols(d, width):
            if not d:
                return f"{'-':>{width}} {'-':>8} {'-':>5}"
            i = min(d, key=d.get)
            return f"{i.removeprefix('gemm.wgmma_tma.'):>{width}} {d[i]:8.1f} {(base / d[i] if base else float('nan')):5.2f}"

        every = " ".join(f"{i.removeprefix('gemm.wgmma_tma.')} {base / t:.2f}" if base else i
                         for i, t in sorted(us.items(), key=lambda kv: kv[1]))
        print(f"{rows[0]['shape_text']:>22} {base if base is None else round(base, 1)!s:>9} {cols(others, 36)} {cols(under_study, 30)}   {every}")


if __name__ == "__main__":
    main()
