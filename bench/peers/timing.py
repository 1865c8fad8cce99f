"""Timing of peer kernels through PyTorch, with the same method as kport-harness bench:
CUDA events around one call, the L2 flushed (a buffer larger than L2 written) before every
sample, a warm-up, samples until the relative standard error of the mean is <= 0.5 % or a
time cap; the median is reported with its spread and sample count."""
import math
import statistics
import time

import torch

_flush = None


def _flush_buffer():
    global _flush
    if _flush is None:
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 << 20)
        # 4x L2 and at least 512 MiB: writing it keeps the GPU busy (~0.15 ms on an H200)
        # while Python dispatches the timed call, so dispatch overhead (large for
        # torch.compile guards) does not land between the start event and the kernel.
        _flush = torch.empty(max(4 * l2, 512 << 20), dtype=torch.uint8, device="cuda")
    return _flush


def measure(fn, warmup_ms=25.0, cap_ms=600.0, max_rse=0.005, min_samples=10):
    flush = _flush_buffer()
    t0 = time.perf_counter()
    calls = 0
    while True:
        fn()
        torch.cuda.synchronize()
        calls += 1
        if calls >= 3 and (time.perf_counter() - t0) * 1e3 >= warmup_ms:
            break
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    t0 = time.perf_counter()
    stopped_by = "max_samples"
    while len(samples) < 10000:
        flush.fill_(len(samples) & 0xFF)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop))
        n = len(samples)
        if n >= 2:
            mean = statistics.fmean(samples)
            rse = statistics.stdev(samples) / math.sqrt(n) / mean
            if n >= min_samples and rse <= max_rse:
                stopped_by = "rse"
                break
        if (time.perf_counter() - t0) * 1e3 >= cap_ms and n >= 3:
            stopped_by = "time_cap"
            break
    mean = statistics.fmean(samples)
    sd = statistics.stdev(samples) if len(samples) > 1 else 0.0
    return {
        "median_ms": statistics.median(samples),
        "mean_ms": mean,
        "stddev_ms": sd,
        "samples": len(samples),
        "rse": sd / math.sqrt(len(samples)) / mean if mean > 0 else 0.0,
        "stopped_by": stopped_by,
    }
