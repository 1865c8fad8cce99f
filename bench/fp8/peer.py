#!/usr/bin/env python3
"""The fp8 gemm peer: cuBLASLt through torch._scaled_mm, on the shapes bench/fp8 times kport's
gemm_fp8 at, with the operands laid out as gemm_fp8 takes them (A [M,K] and B [N,K], e4m3,
K-contiguous; bf16 D).

    python3 bench/fp8/peer.py --out peer.json [--shapes 4096x7168x16384,...] [--reps 50]

Modes: per-tensor scales (one fp32 each), row-wise scales (sa [M,1], sb [1,N]), both with
use_fast_accum False (full fp32 accumulation, as kport's kernel promotes) and per-tensor also
with use_fast_accum True; and 1x128 / 128x128 block scales where this torch takes them
(otherwise the entry says why not). Each mode's output is compared once with the operands
dequantized and multiplied in fp32 (normwise relative error), so a figure is of a call that
computed the same product. Timing: CUDA events around one call after an L2 flush (a write of
twice the L2), median of `--reps` samples after warm-up.
"""
import argparse
import json
import statistics
import sys

import torch

SCALE_NAMES = {0: "tensor", 1: "row", 2: "block128"}


def parse_shapes(text):
    out = []
    for item in text.split(","):
        m, n, k = (int(v) for v in item.lower().split("x"))
        out.append((m, n, k))
    return out


def quantize(x, group_amax):
    """fp8 e4m3 values and fp32 scales from `group_amax` (the amax broadcast to x's shape)."""
    scale = torch.where(group_amax > 0, group_amax / 448.0, torch.ones_like(group_amax))
    return (x / scale).to(torch.float8_e4m3fn), scale


def operands(m, n, k, gen):
    # Rows of different magnitudes, as activations and weights have.
    a = torch.rand(m, k, device="cuda", generator=gen) * 2 - 1
    b = torch.rand(n, k, device="cuda", generator=gen) * 2 - 1
    a *= torch.exp2(torch.randint(-3, 4, (m, 1), device="cuda", generator=gen).float())
    b *= torch.exp2(torch.randint(-3, 4, (n, 1), device="cuda", generator=gen).float())
    return a, b


def prepare(mode, a, b):
    """(call, reference) for one scaling mode: call() runs the peer, the reference is fp32."""
    m, k = a.shape
    n = b.shape[0]
    if mode == "tensor" or mode == "tensor_fast_accum":
        qa, sa = quantize(a, a.abs().amax().reshape(1, 1).expand(m, 1))
        qb, sb = quantize(b, b.abs().amax().reshape(1, 1).expand(n, 1))
        sa_t, sb_t = sa[:1, :1].reshape(()).contiguous(), sb[:1, :1].reshape(()).contiguous()
        fast = mode == "tensor_fast_accum"
        call = lambda: torch._scaled_mm(qa, qb.t(), scale_a=sa_t, scale_b=sb_t, out_dtype=torch.bfloat16,
                                        use_fast_accum=fast)
        ref = (qa.float() * sa_t) @ (qb.float() * sb_t).t()
        return call, ref
    if mode == "row":
        qa, sa = quantize(a, a.abs().amax(dim=1, keepdim=True))
        qb, sb = quantize(b, b.abs().amax(dim=1, keepdim=True))
        sa_c, sb_r = sa.contiguous(), sb.reshape(1, n).contiguous()
        call = lambda: torch._scaled_mm(qa, qb.t(), scale_a=sa_c, scale_b=sb_r, out_dtype=torch.bfloat16)
        ref = (qa.float() * sa) @ (qb.float() * sb).t()
        return call, ref
    # block128: sa per (row, 128-wide K block), sb per 128x128 block of B.
    kb = k // 128
    amax_a = a.abs().reshape(m, kb, 128).amax(dim=2)  # [m, kb]
    nb = (n + 127) // 128
    bp = torch.nn.functional.pad(b.abs(), (0, 0, 0, nb * 128 - n))
    amax_b = bp.reshape(nb, 128, kb, 128).amax(dim=(1, 3))  # [nb, kb]
    qa, sa_full = quantize(a, amax_a.repeat_interleave(128, dim=1))
    qb, sb_full = quantize(b, amax_b.repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1))
    sa = sa_full[:, ::128].contiguous()  # [m, kb]
    sb = sb_full[::128, ::128].contiguous()  # [nb, kb]
    ref = (qa.float() * sa_full) @ (qb.float() * sb_full).t()
    # torch's blockwise forms: scale_a [m, kb] outer-dim-major (stride (1, m)); scale_b as [kb, nb]
    # (b = qb.t() is [k, n]) or [nb, kb]. The first this torch takes is timed; none: the entry says why.
    sa_t = sa.t().contiguous().t()
    errors = []
    for sb_t in (sb.t(), sb, sb.t().contiguous()):
        call = lambda sb_t=sb_t: torch._scaled_mm(qa, qb.t(), scale_a=sa_t, scale_b=sb_t, out_dtype=torch.bfloat16)
        try:
            call()
            return call, ref
        except Exception as e:
            errors.append(str(e).splitlines()[0][:200])
    raise RuntimeError("no blockwise scale layout taken: " + " | ".join(errors))


def time_call(call, reps, flush):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    for i in range(reps):
        flush.zero_()
        start[i].record()
        call()
        stop[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(start, stop)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--shapes", default="4096x7168x16384,4096x4096x7168,64x7168x16384")
    p.add_argument("--modes", default="tensor,tensor_fast_accum,row,block128")
    p.add_argument("--reps", type=int, default=50)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 references
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * max(props.L2_cache_size, 1 << 20), dtype=torch.uint8, device="cuda")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261202)
    doc = {"device": props.name, "torch": torch.__version__, "cuda": torch.version.cuda, "results": []}
    for m, n, k in parse_shapes(args.shapes):
        a, b = operands(m, n, k, gen)
        for mode in args.modes.split(","):
            entry = {"peer": "torch._scaled_mm", "mode": mode, "m": m, "n": n, "k": k}
            try:
                call, ref = prepare(mode, a, b)
                out = call().float()
                entry["normwise_rel_error"] = float((out - ref).norm() / ref.norm())
                del out, ref
                times = time_call(call, args.reps, flush)
                med = statistics.median(times)
                entry.update({"median_ms": med, "min_ms": min(times), "samples": len(times),
                              "tflops": 2.0 * m * n * k / (med * 1e-3) / 1e12})
            except Exception as e:  # this torch or cuBLASLt does not take the mode
                entry["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
            torch.cuda.empty_cache()
            doc["results"].append(entry)
            print(json.dumps(entry), flush=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
