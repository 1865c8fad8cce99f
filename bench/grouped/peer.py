#!/usr/bin/env python3
"""The grouped gemm peer: torch._grouped_mm (bf16, contiguous layout with group offsets) on the
shapes bench/grouped times kport's grouped_gemm at, in the same call.

    python3 bench/grouped/peer.py --out peer.json [--shapes 4x8192x4096x7168,...] [--cap-ms 500]

A is [g*m, k] row-major, B is [g, k, n]; offs holds each group's end row. B is timed in both
layouts torch takes: row-major [g, k, n] (kport's layout) and column-major (a [g, n, k] tensor
transposed). Each layout's output is compared once with torch.bmm in fp32 (normwise relative
error), so a figure is of a call that computed the same product. Timing: bench/peers/timing.py
(CUDA events around one call after an L2 flush, samples to 0.5 % RSE or the time cap).
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from timing import measure  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", default="4x8192x4096x7168")
    ap.add_argument("--cap-ms", type=float, default=500.0)
    args = ap.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(7)
    results = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "entries": []}
    for item in args.shapes.split(","):
        g, m, n, k = (int(v) for v in item.lower().split("x"))
        a = (torch.rand(g * m, k, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16)
        b_rows = (torch.rand(g, k, n, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16)
        offs = (torch.arange(1, g + 1, device="cuda", dtype=torch.int32) * m).contiguous()
        ref = torch.bmm(a.float().reshape(g, m, k), b_rows.float()).reshape(g * m, n)
        flops = 2.0 * g * m * n * k
        for layout, b in (("b_row_major", b_rows), ("b_col_major", b_rows.transpose(1, 2).contiguous().transpose(1, 2))):
            entry = {"shape": {"g": g, "m": m, "n": n, "k": k}, "peer": "torch._grouped_mm", "layout": layout}
            try:
                call = lambda: torch._grouped_mm(a, b, offs=offs, out_dtype=torch.bfloat16)
                out = call().float()
                entry["normwise_rel_err"] = float((out - ref).norm() / ref.norm())
                t = measure(call, cap_ms=args.cap_ms)
                entry["timing"] = t
                entry["tflops"] = flops / (t["median_ms"] * 1e-3) / 1e12
            except Exception as e:  # a layout this torch refuses is recorded, not fatal
                entry["error"] = f"{type(e).__name__}: {e}"[:400]
            results["entries"].append(entry)
            print(json.dumps({k2: entry.get(k2) for k2 in ("shape", "layout", "tflops", "normwise_rel_err", "error")}),
                  flush=True)
        del a, b_rows, ref
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
