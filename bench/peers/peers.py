"""Peer figures on the local GPU through PyTorch, for the same shapes kport-harness benches:
device copy, cuBLAS gemm (torch.matmul), FlashAttention-2 and cuDNN attention (SDPA
backends), F.rms_norm eager and under torch.compile, torch.softmax. bf16, random inputs.

    python3 bench/peers/peers.py [--out peers.json] [--cap-ms 600] [--no-compile] [--only FAMILY]

Writes one JSON document; peers that are not available (a backend missing) are recorded
with the reason instead of failing the run."""
import argparse
import json
import sys
import time
import traceback

import torch
import torch.nn.functional as F

from timing import measure

GEMM = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 512),
        (128, 8192, 8192)]
ATTENTION = [(4, 16, 4096, 128, False), (4, 16, 4096, 128, True), (4, 32, 4096, 64, False)]
ROWWISE = [(32768, 4096), (65536, 1024), (8192, 16384)]


def shape_text(family, s):
    if family == "gemm":
        return "m=%d,n=%d,k=%d" % s
    if family == "attention":
        return "b=%d,h=%d,l=%d,d=%d,causal=%d" % (s[0], s[1], s[2], s[3], int(s[4]))
    return "rows=%d,cols=%d" % s


def record(results, family, peer, s, timing=None, flops=None, nbytes=None, error=None):
    r = {"family": family, "peer": peer, "dtype": "bf16", "shape_text": shape_text(family, s)}
    if error is not None:
        r["error"] = error
    else:
        r["timing"] = timing
        sec = timing["median_ms"] * 1e-3
        if flops:
            r["tflops"] = flops / sec / 1e12
        if nbytes:
            r["gbps"] = nbytes / sec / 1e9
    results.append(r)
    line = r.get("error") or ("%.1f TFLOP/s" % r["tflops"] if "tflops" in r else "%.0f GB/s" % r["gbps"])
    print("%-10s %-22s %-30s %s" % (family, peer, r["shape_text"], line), file=sys.stderr, flush=True)


def run_guarded(results, family, peer, s, body):
    try:
        body()
    except Exception as e:  # a missing backend is a result, not a crash of the run
        record(results, family, peer, s, error="%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
        torch.cuda.synchronize()


def bench_copy(results, cap):
    for s in ROWWISE + [(1 << 14, 1 << 15)]:  # the last is 1 GiB of bf16
        x = torch.randn(s, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        t = measure(lambda: y.copy_(x), cap_ms=cap)
        record(results, "copy", "device_copy", s, t, nbytes=2 * x.numel() * 2)


def bench_gemm(results, cap):
    for m, n, k in GEMM:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        t = measure(lambda: torch.matmul(a, b), cap_ms=cap)
        record(results, "gemm", "cublas_torch_matmul", (m, n, k), t, flops=2.0 * m * n * k)


def bench_attention(results, cap):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = [("flash_attention_2", SDPBackend.FLASH_ATTENTION),
                ("cudnn_attention", SDPBackend.CUDNN_ATTENTION)]
    for s in ATTENTION:
        b, h, l, d, causal = s
        q, k, v = (torch.randn(b, h, l, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        flops = 4.0 * b * h * l * l * d / (2 if causal else 1)
        for name, backend in backends:
            def body():
                with sdpa_kernel([backend]):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    t = measure(fn, cap_ms=cap)
                record(results, "attention", name, s, t, flops=flops)
            run_guarded(results, "attention", name, s, body)


def bench_rowwise(results, cap, compile_rmsnorm):
    for rows, cols in ROWWISE:
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        w = torch.rand(cols, device="cuda", dtype=torch.bfloat16) + 0.5
        nbytes = 2 * x.numel() * 2
        s = (rows, cols)
        run_guarded(results, "rmsnorm", "torch_rms_norm", s, lambda: record(
            results, "rmsnorm", "torch_rms_norm", s,
            measure(lambda: F.rms_norm(x, (cols,), w, 1e-6), cap_ms=cap), nbytes=nbytes))
        if compile_rmsnorm and s == ROWWISE[0]:
            def rms_manual(t, weight):
                tf = t.float()
                return (tf * torch.rsqrt(tf.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()).to(t.dtype)
            variants = [("torch_compile_rmsnorm", lambda t, weight: F.rms_norm(t, (cols,), weight, 1e-6)),
                        ("torch_compile_rmsnorm_fp32_math", rms_manual)]
            for name, fn in variants:
                def body(name=name, fn=fn):
                    compiled = torch.compile(fn, dynamic=False)
                    t0 = time.perf_counter()
                    compiled(x, w)
                    torch.cuda.synchronize()
                    print("torch.compile %s took %.1f s" % (name, time.perf_counter() - t0), file=sys.stderr)
                    record(results, "rmsnorm", name, s, measure(lambda: compiled(x, w), cap_ms=cap),
                           nbytes=nbytes)
                run_guarded(results, "rmsnorm", name, s, body)
        run_guarded(results, "softmax", "torch_softmax", s, lambda: record(
            results, "softmax", "torch_softmax", s,
            measure(lambda: torch.softmax(x, dim=-1), cap_ms=cap), nbytes=nbytes))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="peers.json")
    ap.add_argument("--cap-ms", type=float, default=600.0)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    torch.manual_seed(1234)
    prop = torch.cuda.get_device_properties(0)
    doc = {
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": prop.name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "method": "CUDA events per call, L2 flushed before each sample, median; see timing.py",
        "results": [],
    }
    try:
        import flash_attn  # noqa: F401  (reported only: torch's flash backend is FA2)
        doc["flash_attn_package"] = flash_attn.__version__
    except Exception:
        doc["flash_attn_package"] = None
    stages = [("copy", lambda r: bench_copy(r, args.cap_ms)),
              ("gemm", lambda r: bench_gemm(r, args.cap_ms)),
              ("attention", lambda r: bench_attention(r, args.cap_ms)),
              ("rowwise", lambda r: bench_rowwise(r, args.cap_ms, not args.no_compile))]
    for name, fn in stages:
        if args.only and args.only != name:
            continue
        try:
            fn(doc["results"])
        except Exception:
            doc.setdefault("stage_errors", {})[name] = traceback.format_exc()[-2000:]
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
