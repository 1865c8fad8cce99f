#!/usr/bin/env python3
"""Selection regret on shapes no harness grid holds.

Against a running kport stack whose GPU runner has measured a commit: generates seeded,
LLM-like shapes for every family and dtype the harness runs (none of them in the
harness's check or bench grids), asks `/api/v1/best` for each, then times every instance
of the family on that exact shape with the very harness the runner used (downloaded from
the coordinator by sha256), one `bench --all --filter FAMILY.` process per case. Reports
the regret t(answer)/t(fastest) - 1 (median, p90, max) over the answers that name an
instance, how many answers were measured (exact or nearest shape), provisional or
unranked, and every answer that names an instance that cannot run the case. Then the same for
the boundary cases (BOUNDARY): shapes just outside (and just inside) what some instances run at
all, where an answer moved from a nearby measured shape could name one that refuses the case;
they are reported apart and kept out of the regret figures, so the seeded draw stays comparable.

Standard library only. Writes cases.json and regret.txt under --out.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pipeline"))
from drive import Api, local_gpu  # noqa: E402  (the benches' one client of the REST API)

# How many shapes per (family, dtype); dtypes the harness does not run for a family are skipped.
PER_CASE = {("gemm", "bf16"): 12, ("gemm", "fp16"): 8, ("gemm", "fp32"): 4,
            ("attention", "bf16"): 8, ("attention", "fp16"): 6, ("attention", "fp32"): 2,
            ("rmsnorm", "bf16"): 6, ("rmsnorm", "fp16"): 3, ("rmsnorm", "fp32"): 3,
            ("softmax", "bf16"): 6, ("softmax", "fp16"): 3, ("softmax", "fp32"): 3,
            ("gemm_fp8", "e4m3"): 8, ("gemm_fp8", "e5m2"): 3, ("grouped_gemm", "bf16"): 6}
# Model dimensions (hidden, intermediate, fused-QKV and vocabulary-sized projections).
NK = [(4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096), (4096, 14336), (6144, 4096),
      (28672, 8192), (8192, 28672), (7168, 16384), (5120, 5120), (13824, 5120), (2560, 8192)]
DECODE_M = [1, 4, 16, 32, 64, 96, 192, 256]
PREFILL_M = [512, 1000, 1536, 3000, 6144]
ROW_COLS = [2048, 3072, 5120, 8192, 14336, 32000, 65536, 128256]
ROWS = [1, 16, 128, 1000, 4096, 16384]


# Shapes at the bounds of what instances run at all (their limits: kernels/kport.json's
# geometry): rows of exactly 32 KB and of 32 KB and one vector (the cluster row kernels take
# only the second), a row of no whole 16-byte vectors, N or K off 16 bytes (the TMA-fed,
# gemv and decode_mma gemms refuse them), m just over the 8-row instances, and more (batch,
# head) pairs than one grid axis holds.
BOUNDARY = [("softmax", "bf16", "rows=2048,cols=16384"), ("softmax", "bf16", "rows=1000,cols=16392"),
            ("rmsnorm", "bf16", "rows=2048,cols=16384"), ("rmsnorm", "bf16", "rows=1000,cols=16392"),
            ("softmax", "fp32", "rows=999,cols=20001"), ("gemm", "bf16", "m=512,n=4100,k=4096"),
            ("gemm", "bf16", "m=8,n=4100,k=4096"), ("gemm", "bf16", "m=64,n=4096,k=4100"),
            ("gemm", "bf16", "m=12,n=4096,k=4096"), ("attention", "bf16", "b=512,h=128,l=64,d=64,causal=0")]


# fp8 projections of a 7168-hidden model (K a multiple of 128, as block scales need).
FP8_NK = [(7168, 16384), (4096, 7168), (2112, 7168), (24576, 1536), (7168, 2048), (1536, 7168)]


# MoE experts (N, K) of up/gate and down projections, and tokens per expert (a multiple of
# 128, as the contiguous layout pads each group's rows).
MOE_NK = [(4096, 7168), (7168, 2048), (2816, 2048), (2048, 1408), (14336, 4096), (4096, 14336)]
MOE_M = [128, 256, 384, 640, 1024, 1536]


def gen_shape(rng, family):
    if family == "grouped_gemm":
        n, k = rng.choice(MOE_NK)
        return f"g={rng.choice([4, 8, 16])},m={rng.choice(MOE_M)},n={n},k={k}"
    if family == "gemm_fp8":
        n, k = rng.choice(FP8_NK)
        m = rng.choice(DECODE_M + PREFILL_M)
        return f"m={m},n={n},k={k},scale={rng.choice([0, 1, 2])}"
    if family == "gemm":
        r = rng.random()
        n, k = rng.choice(NK)
        if r < 0.45:
            return f"m={rng.choice(DECODE_M)},n={n},k={k}"
        if r < 0.8:
            return f"m={rng.choice(PREFILL_M)},n={n},k={k}"
        s = rng.choice([1536, 3000, 5120, 6000])
        return f"m={s},n={s},k={s}"
    if family == "attention":
        b, h = rng.choice([(1, 32), (2, 16), (8, 8), (1, 40), (4, 8)])
        l = rng.choice([512, 1024, 2048, 3000, 4096])
        d = rng.choice([64, 128])
        return f"b={b},h={h},l={l},d={d},causal={rng.choice([0, 1])}"
    rows, cols = rng.choice(ROWS), rng.choice(ROW_COLS)
    while rows * cols > 2 ** 28:  # keep a case under a gigabyte
        rows //= 2
    return f"rows={max(rows, 1)},cols={cols}"


def harness_grids(harness):
    """Every shape the harness checks or times, per family (its own --plan): never asked."""
    grids = {}
    for argv in ([harness, "check", "--all", "--plan"], [harness, "bench", "--all", "--dtype", "all", "--plan"]):
        for case in run_json(argv, 120).get("plan", []):
            grids.setdefault(case["family"], set()).add(case["shape_text"])
    return grids


def fetch_harness(api, target, dest):
    status, page = api.call("GET", f"/api/v1/builds?target={target}&status=ok&limit=200")
    if status != 200:
        sys.exit(f"GET /api/v1/builds answered {status}: {page}")
    shas = [b["artifact"] for b in page["items"] if b.get("artifact")]
    if not shas:
        sys.exit(f"no build of {target} has a harness artifact")
    sha = shas[0]  # newest first
    status, blob = api.call("GET", f"/api/v1/artifacts/{sha}", raw=True)
    if status != 200:
        sys.exit(f"GET /api/v1/artifacts/{sha} answered {status}")
    with open(dest, "wb") as f:
        f.write(blob)
    os.chmod(dest, 0o755)
    return sha


def run_json(argv, timeout):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": f"exit {p.returncode}; stdout {p.stdout[-400:]!r}; stderr {p.stderr[-400:]!r}"}


def pct(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--gpu", help="the GPU model asked about (default: this machine's, from nvidia-smi)")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bench-flags", default="--time-cap-ms 300 --warmup-ms 100 --min-samples 10 "
                                             "--max-rse 0.003 --max-duty 0.5 --throttle-threshold 0.97")
    ap.add_argument("--measure-worst", type=int, default=3,
                    help="then ask kport to measure the shapes of this many worst answers, and read /best again")
    ap.add_argument("--measure-timeout", type=float, default=150)
    args = ap.parse_args()
    args.gpu = args.gpu or local_gpu()
    os.makedirs(args.out, exist_ok=True)
    api = Api(args.server, args.token)
    harness = os.path.join(args.out, "kport-harness-" + args.target)
    sha = fetch_harness(api, args.target, harness)
    listing = run_json([harness, "list"], 120)
    dtypes = {}
    for v in listing.get("variants", []):
        for inst in v.get("instances", []):
            dtypes.setdefault(inst["family"], set()).update(inst.get("dtypes", []))

    grids = harness_grids(harness)
    rng = random.Random(args.seed)
    cases = []
    for (family, dtype), count in PER_CASE.items():
        if dtype not in dtypes.get(family, set()):
            continue
        seen = set()
        while len(seen) < count:
            s = gen_shape(rng, family)
            if s not in grids.get(family, set()):
                seen.add(s)
        cases += [(family, dtype, s, False) for s in sorted(seen)]
    cases += [(f, d, s, True) for f, d, s in BOUNDARY if d in dtypes.get(f, set()) and s not in grids.get(f, set())]

    rows = []
    for family, dtype, shape, boundary in cases:
        q = urllib.parse.urlencode({"gpu": args.gpu, "op": family, "dtype": dtype, "shape": shape})
        status, ans = api.call("GET", "/api/v1/best?" + q)
        bench = run_json([harness, "bench", "--all", "--filter", family + ".", "--dtype", dtype, "--shape", shape]
                         + args.bench_flags.split(), 600)
        timed = {r["instance"]: r["timing"]["median_ms"] for r in bench.get("results", [])
                 if r.get("verdict") == "measured"}
        answer = ans.get("best") if isinstance(ans, dict) else None
        kind = ans.get("kind") if isinstance(ans, dict) else f"http {status}"
        exact = isinstance(ans, dict) and ans.get("exact_shape")
        fastest = min(timed, key=timed.get) if timed else None
        row = {"family": family, "dtype": dtype, "shape": shape, "http": status, "kind": kind,
               "exact_shape": exact, "matched_shape": ans.get("matched_shape") if isinstance(ans, dict) else None,
               "method": ((ans.get("confidence") or {}).get("method") if isinstance(ans, dict) else None),
               "answer": answer, "fastest": fastest, "timed": timed,
               "bench_error": bench.get("error"), "response": ans, "boundary": boundary}
        if answer and timed:
            if answer in timed:
                row["regret"] = timed[answer] / timed[fastest] - 1
            else:
                row["cannot_run"] = True
        rows.append(row)
        print(f"{family:9} {dtype:5} {shape:34} {str(kind):12} {str(answer):40} "
              f"{('%.1f %%' % (100 * row['regret'])) if 'regret' in row else ('CANNOT RUN' if row.get('cannot_run') else '-')}",
              flush=True)

    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump({"harness_sha256": sha, "seed": args.seed, "bench_flags": args.bench_flags, "cases": rows}, f,
                  indent=1)
    boundary = [r for r in rows if r["boundary"]]
    rows = [r for r in rows if not r["boundary"]]
    measured_fd = {(r["family"], r["dtype"]) for r in rows if r["kind"] == "measured"}
    reg_all = [r["regret"] for r in rows if "regret" in r]
    reg_measured = [r["regret"] for r in rows if "regret" in r and r["kind"] == "measured"]
    kinds = {}
    for r in rows:
        k = r["kind"] if r["kind"] != "measured" else (
            "measured (exact)" if r["exact_shape"] else f"measured (nearest, {r.get('method') or 'no method'})")
        kinds[k] = kinds.get(k, 0) + 1
    lines = [f"{len(rows)} shapes, none in the harness grids; seed {args.seed}; harness {sha[:16]}",
             "answers: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
             f"answers naming an instance that cannot run the case: {sum(1 for r in rows if r.get('cannot_run'))}",
             f"family/dtype pairs measured on {args.gpu}: " + ", ".join(f"{f} {d}" for f, d in sorted(measured_fd))]
    for name, vals in (("measured answers", reg_measured), ("all answers naming an instance", reg_all)):
        if vals:
            lines.append(f"regret over {name} ({len(vals)}): median {100 * statistics.median(vals):.1f} %, "
                         f"p90 {100 * pct(vals, 0.9):.1f} %, max {100 * max(vals):.1f} %")
    lines.append(f"boundary cases ({len(boundary)}), answers naming an instance that cannot run the case: "
                 f"{sum(1 for r in boundary if r.get('cannot_run'))}")
    for r in boundary:
        lines.append(f"  {r['family']} {r['dtype']} {r['shape']}: {r['kind']} {r['answer']}, fastest {r['fastest']}, "
                     + ("CANNOT RUN" if r.get("cannot_run") else
                        f"regret {100 * r['regret']:.1f} %" if "regret" in r else "no regret"))
    worst = sorted((r for r in rows if "regret" in r), key=lambda r: -r["regret"])[:5]
    for r in worst:
        lines.append(f"  worst: {r['family']} {r['dtype']} {r['shape']}: {r['answer']} vs {r['fastest']} "
                     f"(+{100 * r['regret']:.1f} %, {r['kind']})")
    # Measure on request (POST /api/v1/best/requests): the worst answers' shapes are queued as
    # pinned check jobs of exactly that case; once measured, /best answers them from their own
    # figures, whose regret is read against the same oracle.
    if args.measure_worst > 0:
        lines.append(f"measured on request (the {args.measure_worst} worst answers):")
    for r in worst[:args.measure_worst]:
        body = {"gpu": args.gpu, "op": r["family"], "dtype": r["dtype"], "shape": r["shape"]}
        status, req = api.call("POST", "/api/v1/best/requests", body)
        if status not in (200, 201) or not isinstance(req, dict):
            lines.append(f"  {r['family']} {r['dtype']} {r['shape']}: request answered {status} {req}")
            continue
        t0, state = time.time(), req.get("state")
        while state not in ("measured", "failed") and time.time() - t0 < args.measure_timeout:
            time.sleep(2)
            _, got = api.call("GET", f"/api/v1/best/requests/{req['id']}")
            state = got.get("state") if isinstance(got, dict) else None
        q = urllib.parse.urlencode(body)
        _, ans = api.call("GET", "/api/v1/best?" + q)
        answer = ans.get("best") if isinstance(ans, dict) else None
        after = r["timed"][answer] / r["timed"][r["fastest"]] - 1 if answer in (r["timed"] or {}) else None
        lines.append(f"  {r['family']} {r['dtype']} {r['shape']}: {state} in {time.time() - t0:.0f} s; now "
                     f"{'exact' if isinstance(ans, dict) and ans.get('exact_shape') else 'not exact'}: {answer}"
                     + (f" (regret {100 * after:.1f} % against the same oracle)" if after is not None else ""))
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "regret.txt"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
