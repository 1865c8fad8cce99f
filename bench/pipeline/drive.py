#!/usr/bin/env python3
"""Drives a started kport stack through pipelines on one commit and reports.

Registers the repository and the target, waits for a build runner and `--gpu-workers`
GPU workers, queues `--pipelines` pipelines on the same commit, back to back or, with
`--concurrent`, all at once (the wall time of them all is reported too), waits for each,
then prints the target's bring-up, the best-kernel answers for the shapes of the H200
baselines, the time split of each check job and the GPU that ran it, and how far the
figures of the pipelines agree. Standard library only; writes results-N.json and
report.txt under --out.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

BASELINE_QUERIES = [
    ("gemm", "bf16", "m=4096,n=4096,k=4096"),
    ("gemm", "bf16", "m=8192,n=8192,k=8192"),
    ("gemm", "bf16", "m=2048,n=2048,k=2048"),
    ("gemm", "bf16", "m=4096,n=4096,k=512"),
    ("gemm", "bf16", "m=128,n=8192,k=8192"),
    ("gemm", "fp32", "m=8192,n=8192,k=8192"),
    ("attention", "bf16", "b=4,h=16,l=4096,d=128,causal=0"),
    ("attention", "bf16", "b=4,h=16,l=4096,d=128,causal=1"),
    ("attention", "bf16", "b=4,h=32,l=4096,d=64,causal=0"),
    ("rmsnorm", "bf16", "rows=32768,cols=4096"),
    ("softmax", "bf16", "rows=32768,cols=4096"),
]
COMPUTE_BOUND = {"gemm", "attention"}


class Api:
    def __init__(self, server, token):
        self.server, self.token = server.rstrip("/"), token

    def call(self, method, path, body=None, raw=False):
        """(status, answer): the JSON answer, or its bytes with raw=True (an artifact); an
        error body that is not JSON comes back as text. bench/selection uses this client too."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                blob = r.read()
                return r.status, (blob if raw else json.loads(blob or b"null"))
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            try:
                return e.code, json.loads(text)
            except ValueError:
                return e.code, text

    def ok(self, method, path, body=None):
        status, doc = self.call(method, path, body)
        if status >= 300:
            sys.exit(f"{method} {path} answered {status}: {doc}")
        return doc


def local_gpu():
    """The model name of this machine's first GPU, as nvidia-smi gives it (and the GPU runner
    registers it): the GPU whose best kernels the benches ask about."""
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                               text=True, timeout=30, check=True).stdout.split("\n")
    except (OSError, subprocess.SubprocessError) as e:
        sys.exit(f"cannot read this machine's GPU from nvidia-smi ({e}); pass --gpu")
    return names[0].strip()


def log(out, line):
    print(line, flush=True)
    out.append(line)


def wait_runners(api, report, limit_s, gpu_workers):
    end = time.time() + limit_s
    while time.time() < end:
        runners = api.ok("GET", "/api/v1/runners")["items"]
        roles = {r["role"] for r in runners}
        if "build" in roles and sum(r["role"] == "gpu" for r in runners) >= gpu_workers:
            for r in runners:
                log(report, f"runner {r['name']}: role {r['role']}, caps {json.dumps(r.get('capabilities', {}))}")
            return
        time.sleep(1)
    sys.exit(f"no build runner and {gpu_workers} GPU worker(s) registered in time")


def queue_pipeline(api, args, n, report):
    p = api.ok("POST", "/api/v1/pipelines", {"commit": args.commit, "repo": "kernels", "ref": "refs/heads/main",
                                            "targets": [args.target], "note": f"bench/pipeline run {n}"})
    log(report, f"pipeline {p['id']} queued for {args.commit[:12]} on {args.target}")
    return p["id"], time.time()


def run_pipeline(api, args, n, report, queued=None):
    pid, t0 = queued or queue_pipeline(api, args, n, report)
    last = ""
    while True:
        doc = api.ok("GET", f"/api/v1/pipelines/{pid}")
        jobs = doc["jobs"]
        state = ", ".join(f"{j['kind']} {j['id']} {j['status']}" for j in jobs)
        if state != last:
            log(report, f"  [{time.time() - t0:6.1f} s] {state}")
            last = state
        done = jobs and all(j["status"] in ("succeeded", "failed", "cancelled") for j in jobs)
        if done and any(j["kind"] == "check" for j in jobs):
            break
        if done and all(j["kind"] == "build" for j in jobs) and any(j["status"] != "succeeded" for j in jobs):
            break
        if time.time() - t0 > args.timeout:
            log(report, f"pipeline {pid} did not finish within {args.timeout} s")
            break
        time.sleep(2)
    wall = time.time() - t0
    log(report, f"pipeline {pid}: {wall:.1f} s wall")
    for j in jobs:
        if j["kind"] == "check":
            shard = (j.get("payload") or {}).get("shard")
            uuids = {r.get("gpu_uuid") for r in results_of(api, args.commit, j["id"])}
            log(report, f"  job {j['id']} (check{', shard %d/%d' % (shard['index'] + 1, shard['count']) if shard else ''})"
                        f" ran on {', '.join(sorted(u for u in uuids if u)) or 'no GPU'}")
        if j.get("failure_reason"):
            log(report, f"  job {j['id']} ({j['kind']}): {j['failure_reason'][:1500]}")
        status, doc = api.call("GET", f"/api/v1/jobs/{j['id']}/log")
        if status == 200 and isinstance(doc, dict):
            text = "".join(c.get("text", "") for c in doc.get("chunks", []))
            for line in text.splitlines():
                if any(k in line for k in ("time: wall", "variants built", "instance(s) to check", "case(s): ")):
                    log(report, f"  job {j['id']} ({j['kind']}) log: {line.strip()[:300]}")
    return pid, jobs, wall


def results_of(api, commit, job=None):
    items, cursor = [], None
    while True:
        path = (f"/api/v1/results?commit={commit}&limit=1000" + (f"&job={job}" if job else "")
                + (f"&before={cursor}" if cursor else ""))
        page = api.ok("GET", path)
        items += page["items"]
        cursor = page.get("next_cursor")
        if not cursor:
            return items


def spread(values):
    if not values:
        return "none"
    s = sorted(values)
    p = lambda q: s[min(len(s) - 1, int(q * len(s)))]
    return f"n={len(s)} median {100 * statistics.median(s):.2f}% p90 {100 * p(0.9):.2f}% max {100 * s[-1]:.2f}%"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--arch", default="9.0")
    ap.add_argument("--gpu", help="the GPU model asked about (default: this machine's, from nvidia-smi)")
    ap.add_argument("--pipelines", type=int, default=2)
    ap.add_argument("--concurrent", action="store_true", help="queue every pipeline at once")
    ap.add_argument("--gpu-workers", type=int, default=1, help="GPU workers to wait for before queueing")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    args.gpu = args.gpu or local_gpu()
    api = Api(args.server, args.token)
    report = []

    api.call("POST", "/api/v1/repositories", {"name": "kernels", "url": args.repo})
    # Registered as kport-watcher registers a target: with its catalog entry's features.
    catalog = pathlib.Path(__file__).resolve().parents[2] / "porting" / "catalog" / "targets.json"
    entry = json.loads(catalog.read_text())["targets"].get(args.target, {})
    features = {f: True for f in entry.get("features", [])}
    if "max_dynamic_smem_per_block" in entry:
        features["max_dynamic_smem_per_block"] = entry["max_dynamic_smem_per_block"]
    api.ok("PUT", f"/api/v1/targets/{args.target}", {"arch": args.arch, "check_arches": [args.arch], "features": features})
    api.call("POST", "/api/v1/commits", {"sha": args.commit, "repo": "kernels", "message": "bench/pipeline"})
    wait_runners(api, report, 120, args.gpu_workers)

    runs = []
    if args.concurrent:
        t0 = time.time()
        queued = [queue_pipeline(api, args, n, report) for n in range(1, args.pipelines + 1)]
        for n, q in enumerate(queued, 1):
            runs.append(run_pipeline(api, args, n, report, q))
        log(report, f"all {args.pipelines} pipelines, queued at once: {time.time() - t0:.1f} s wall")
    else:
        for n in range(1, args.pipelines + 1):
            runs.append(run_pipeline(api, args, n, report))

    everything = results_of(api, args.commit)
    by_job = {}
    for r in everything:
        by_job.setdefault(r["job"], []).append(r)
    per_run = []
    for n, (pid, jobs, _) in enumerate(runs, 1):
        mine = [r for j in jobs if j["kind"] == "check" for r in by_job.get(j["id"], [])]
        per_run.append(mine)
        with open(f"{args.out}/results-{n}.json", "w") as f:
            json.dump(mine, f)
        counts = {}
        for r in mine:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        variants = sorted({r["family"] + "." + r["variant"] for r in mine})
        log(report, f"pipeline {pid}: {len(mine)} results {counts}; variants validated: {', '.join(variants)}")
        for r in mine:
            if r["status"] not in ("passed", "unsupported"):
                log(report, f"  {r['status']}: {r['instance']} {r['dtype']} {r['shape']} {r['message'][:200]}")

    status, bring = api.call("GET", f"/api/v1/targets/{args.target}/bringup")
    log(report, f"\nbring-up of {args.target}:")
    log(report, json.dumps(bring, indent=1)[:6000])

    log(report, f"\nbest kernels on {args.gpu}:")
    log(report, f"{'op':10} {'dtype':5} {'shape':32} {'best':44} {'kind':12} {'median_us':>10} {'TFLOP/s':>8} {'GB/s':>8} tied")
    for op, dtype, shape in BASELINE_QUERIES:
        q = urllib.parse.urlencode({"gpu": args.gpu, "op": op, "dtype": dtype, "shape": shape})
        status, ans = api.call("GET", "/api/v1/best?" + q)
        if status != 200:
            log(report, f"{op:10} {dtype:5} {shape:32} error {status}: {ans}")
            continue
        ev = ((ans.get("ranking") or [{}])[0].get("evidence")) or {}
        med, tf, gb = ev.get("median_us"), None, None
        if ev.get("result"):
            _, res = api.call("GET", f"/api/v1/results/{ev['result']}")
            if isinstance(res, dict):
                tf, gb = res["timing"].get("tflops"), res["timing"].get("gbps")
        shape_note = "" if ans.get("exact_shape") else f" (nearest {ans.get('matched_shape')})"
        log(report, f"{op:10} {dtype:5} {shape:32} {str(ans.get('best')):44} {ans.get('kind', ''):12} "
                    f"{med if med is None else round(med, 1)!s:>10} {tf if tf is None else round(tf, 1)!s:>8} "
                    f"{gb if gb is None else round(gb, 1)!s:>8} {','.join(ans.get('tied', [])[1:])}{shape_note}")

    if len(per_run) >= 2:
        key = lambda r: (r["instance"], r["dtype"], r["shape"])
        a = {key(r): r for r in per_run[0] if r["timing"]["median_us"]}
        b = {key(r): r for r in per_run[1] if r["timing"]["median_us"]}
        diffs = {"compute": [], "memory": []}
        big = {"compute": [], "memory": []}
        worst = []
        across = {"compute": [], "memory": []}  # >= 50 us, timed on different GPUs in the two pipelines
        for k in sorted(a.keys() & b.keys()):
            x, y = a[k]["timing"]["median_us"], b[k]["timing"]["median_us"]
            d = abs(x - y) / min(x, y)
            cls = "compute" if a[k]["family"] in COMPUTE_BOUND else "memory"
            diffs[cls].append(d)
            if x >= 50:  # kernels of 50 us or more: launch jitter no longer dominates
                big[cls].append(d)
                if a[k].get("gpu_uuid") != b[k].get("gpu_uuid"):
                    across[cls].append(d)
            worst.append((d, k, x, y))
        log(report, "\nrepeatability, pipeline 1 vs 2 (|a-b|/min(a,b) of the median):")
        for cls, limit in (("compute", 0.01), ("memory", 0.02)):
            within = sum(1 for d in diffs[cls] if d <= limit)
            log(report, f"  {cls}-bound, all cases: {spread(diffs[cls])}; within {100 * limit:.0f}%: {within}/{len(diffs[cls])}")
            within = sum(1 for d in big[cls] if d <= limit)
            log(report, f"  {cls}-bound, median >= 50 us: {spread(big[cls])}; within {100 * limit:.0f}%: {within}/{len(big[cls])}")
            if across[cls]:
                within = sum(1 for d in across[cls] if d <= limit)
                log(report, f"  {cls}-bound, median >= 50 us, on two different GPUs: {spread(across[cls])}; "
                            f"within {100 * limit:.0f}%: {within}/{len(across[cls])}")
        for d, k, x, y in sorted(worst, reverse=True)[:12]:
            log(report, f"    {100 * d:6.2f}%  {k[0]} {k[1]} {k[2]}: {x:.2f} vs {y:.2f} us")
    # What kport itself answers about the GPUs of each model (GET /api/v1/gpus/agreement):
    # every case timed at one commit on two of them, against the noise of its kind.
    _, models = api.call("GET", "/api/v1/gpus")
    for m in (models or {}).get("items", []) if isinstance(models, dict) else []:
        q = urllib.parse.urlencode({"gpu": m["name"]})
        status, agreement = api.call("GET", f"/api/v1/gpus/agreement?{q}")
        if status != 200 or not isinstance(agreement, dict):
            log(report, f"\nGPU agreement of {m['name']}: answered {status}")
            continue
        items = agreement.get("items", [])
        log(report, f"\nGPU agreement of {m['name']}: " + ("no case timed on two of its GPUs" if not items else ""))
        for item in items:
            log(report, "  " + item["summary"])
    with open(f"{args.out}/report.txt", "w") as f:
        f.write("\n".join(report) + "\n")


if __name__ == "__main__":
    main()
