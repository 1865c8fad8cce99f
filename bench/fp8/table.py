#!/usr/bin/env python3
"""Prints bench/fp8's table: kport's gemm_fp8 (harness `bench` reports) against the cuBLASLt
peer (peer.py) at each shape, TFLOP/s and the ratio to the peer of the same scaling (per-tensor
and row-wise; block128 against the best peer figure of the shape, as cuBLASLt's own block-scale
path is taken only where this torch offers it), and the `check` verdicts.

    python3 bench/fp8/table.py --check check.json [--check more.json] --bench bench.json --peer peer.json
"""
import argparse
import collections
import json
import sys

SCALE = {0: "tensor", 1: "row", 2: "block128", 3: "block128_ue8m0"}


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="append", default=[])
    p.add_argument("--bench", required=True)
    p.add_argument("--peer", required=True)
    args = p.parse_args()

    verdicts = collections.Counter()
    failures = []
    failed_instances = set()
    for path in args.check:
        doc = load(path)
        if "error" in doc:
            failures.append(f"  {path}: {doc['error']}")
        for r in doc.get("results", []):
            verdicts[r.get("verdict")] += 1
            if r.get("verdict") not in ("passed", "unsupported"):
                failed_instances.add(r["instance"])
                failures.append(f"  {r['instance']} {r['dtype']} {r['shape_text']}: {r.get('verdict')} "
                                f"{r.get('reason', '')}")
    print("check: " + ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items())))
    for line in failures[:40]:
        print(line)
    worst = collections.defaultdict(float)
    for path in args.check:
        for r in load(path).get("results", []):
            if r.get("verdict") == "passed":
                key = (r["dtype"], r["shape"]["scale"])
                worst[key] = max(worst[key], r["normwise_rel_error"])
    for (dtype, scale), err in sorted(worst.items()):
        print(f"  largest normwise error passed, {dtype} {SCALE[scale]}: {err:.2e}")

    peer = {}
    for r in load(args.peer).get("results", []):
        if "tflops" in r:
            peer[(r["m"], r["n"], r["k"], r["mode"])] = r["tflops"]
        print(f"  peer {r['mode']:>17} {r['m']}x{r['n']}x{r['k']}: " +
              (f"{r['tflops']:.1f} TFLOP/s, normwise error {r['normwise_rel_error']:.2e}" if "tflops" in r
               else r.get("error", "?")))
    best = collections.defaultdict(dict)
    every = collections.defaultdict(dict)  # instance -> (shape, mode) -> TFLOP/s
    for r in load(args.bench).get("results", []):
        if r.get("verdict") == "measured":
            s = r["shape"]
            every[r["instance"]][(s["m"], s["n"], s["k"], SCALE[s["scale"]])] = r["tflops"]
        if r.get("verdict") != "measured" or r["instance"] in failed_instances:
            continue  # an instance that failed a check has no figure
        s = r["shape"]
        key = (s["m"], s["n"], s["k"], SCALE[s["scale"]])
        if r["tflops"] > best[key].get("tflops", 0):
            best[key] = {"tflops": r["tflops"], "instance": r["instance"]}
    print(f"{'m x n x k':>20} {'scale':>9} {'kport TFLOP/s':>14} {'instance':>34} {'cuBLASLt':>9} {'ratio':>6}"
          f" {'(fast acc)':>10}")
    for key in sorted(best, key=lambda t: (-t[0] * t[1] * t[2], t[3])):
        m, n, k, mode = key
        ours = best[key]
        ref = peer.get((m, n, k, mode))
        if mode == "block128" and ref is None:
            ref = max((peer.get((m, n, k, x)) or 0 for x in ("row", "tensor")), default=0) or None
        fast = peer.get((m, n, k, "tensor_fast_accum")) if mode == "tensor" else None
        ratio = f"{ours['tflops'] / ref:6.3f}" if ref else "     -"
        print(f"{f'{m}x{n}x{k}':>20} {mode:>9} {ours['tflops']:14.1f} {ours['instance']:>34} "
              f"{(f'{ref:9.1f}' if ref else '        -')} {ratio} {(f'{fast:10.1f}' if fast else '')}")
    # Every instance at every case, so a change of the fastest instance is seen.
    cols = sorted({c for v in every.values() for c in v}, key=lambda t: (-t[0] * t[1] * t[2], t[3]))
    if cols:
        print("\nper instance (TFLOP/s; x: failed a check):")
        print(f"{'instance':>44} " + " ".join(f"{f'{c[0]}x{c[1]}x{c[2]}/{c[3][:5]}':>22}" for c in cols))
        for inst in sorted(every):
            mark = " x" if inst in failed_instances else "  "
            cells = " ".join(f"{every[inst][c]:22.1f}" if c in every[inst] else f"{'-':>22}" for c in cols)
            print(f"{inst + mark:>44} {cells}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
