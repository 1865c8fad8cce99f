"""Short table of a run_h200.sh result folder: check verdicts per instance, bench figures per
family and shape with the in-process baseline and the PyTorch peers, and the issue's targets.

    python3 bench/kernels/summarize.py OUT_DIR
"""
import json
import os
import sys
from collections import defaultdict


def read_jsonl(path):
    docs = []
    if not os.path.exists(path):
        return docs
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    docs.append(json.loads(line))
                except json.JSONDecodeError:
                    docs.append({"error": {"code": "bad_json", "message": line[:200]}})
    return docs


def main(out):
    dev = {}
    if os.path.exists(os.path.join(out, "device.json")):
        with open(os.path.join(out, "device.json")) as f:
            try:
                dev = json.load(f)
            except json.JSONDecodeError:
                pass
    print("device: %s cc %s, %s SMs, driver %s, runtime %s, SM clock %s MHz (%s)" % (
        dev.get("name"), dev.get("compute_capability"), dev.get("sm_count"),
        dev.get("driver_version"), dev.get("runtime_version"),
        dev.get("clock", {}).get("sm_mhz"), dev.get("clock", {}).get("source")))

    list_path = os.path.join(out, "list.json")
    if os.path.exists(list_path):
        with open(list_path) as f:
            try:
                lst = json.load(f)
            except json.JSONDecodeError:
                lst = {}
        for v in lst.get("variants", []):
            if v.get("status") != "built":
                print("variant %-22s %s: %s" % (v["variant"], v["status"], v.get("reason")))
    print("\n== check (per instance: passed/failed/unsupported/error, worst normwise error)")
    failures = []
    for doc in read_jsonl(os.path.join(out, "check.jsonl")):
        if "results" not in doc:
            print("  %-44s RUN ERROR %s" % (doc.get("instance", "?"), doc.get("error")))
            continue
        per = defaultdict(lambda: defaultdict(int))
        worst = defaultdict(float)
        for r in doc["results"]:
            per[r["instance"]][r["verdict"]] += 1
            if r["verdict"] in ("passed", "failed"):
                worst[r["instance"]] = max(worst[r["instance"]], r.get("normwise_rel_error", 0))
            if r["verdict"] in ("failed", "error"):
                failures.append("%s %s %s: %s" % (r["instance"], r["dtype"], r["shape_text"],
                                                  r.get("reason")))
        for name, c in per.items():
            print("  %-44s %3d/%d/%d/%d  worst %.2e" % (name, c["passed"], c["failed"],
                                                      c["unsupported"], c["error"], worst[name]))
        if "error" in doc:
            print("  RUN ERROR:", doc["error"])
    for f in failures[:25]:
        print("  FAIL", f)

    peers = defaultdict(dict)
    peers_path = os.path.join(out, "peers.json")
    if os.path.exists(peers_path):
        with open(peers_path) as f:
            pd = json.load(f)
        print("\npeers: torch %s, CUDA %s, cuDNN %s" % (pd.get("torch"), pd.get("cuda"), pd.get("cudnn")))
        for r in pd.get("results", []):
            fam = "rmsnorm" if r["family"] == "rmsnorm" else r["family"]
            peers[(fam, r["shape_text"])][r["peer"]] = r.get("tflops") or r.get("gbps") or r.get("error")

    print("\n== bench (bf16 unless noted; TFLOP/s for gemm/attention, GB/s otherwise)")
    best = {}
    rows = defaultdict(list)
    for doc in read_jsonl(os.path.join(out, "bench.jsonl")):
        if "results" not in doc:
            print("  RUN ERROR", doc.get("instance", "?"), doc.get("error"))
            continue
        for r in doc["results"]:
            key = (r["family"], r["dtype"], r["shape_text"])
            if r["verdict"] != "measured":
                rows[key].append((r["instance"], None, r["verdict"] + ": " + str(r.get("reason"))[:60]))
                continue
            fig = r.get("tflops") if r["family"] in ("gemm", "attention") else r.get("gbps")
            base = r.get("baseline") or {}
            bfig = base.get("tflops") if r["family"] == "gemm" else base.get("gbps")
            note = "n=%d rse=%.2f%%" % (r["timing"]["samples"], 100 * r["timing"]["rse"])
            if r.get("ratio"):
                note += "  vs %s %.1f: ratio %.3f" % (base.get("name", "")[:12], bfig or 0, r["ratio"])
            rows[key].append((r["instance"], fig, note))
            if key not in best or fig > best[key][1]:
                best[key] = (r["instance"], fig, r.get("ratio"), bfig)
    for key in sorted(rows):
        fam, dt, shape = key
        print("  %s %s %s" % (fam, dt, shape))
        for inst, fig, note in sorted(rows[key], key=lambda x: -(x[1] or 0)):
            print("     %-44s %9s  %s" % (inst, "%.1f" % fig if fig is not None else "-", note))
        p = peers.get((fam, shape))
        if p:
            print("     peers: " + ", ".join("%s %s" % (k, ("%.1f" % v) if isinstance(v, float) else v)
                                         for k, v in p.items()))

    print("\n== targets (same run)")
    def line(label, key, want, peer=None, peer_want=None):
        b = best.get(key)
        if not b:
            print("  %-44s not measured" % label)
            return
        inst, fig, ratio, bfig = b
        text = "  %-44s best %s %.1f" % (label, inst, fig)
        if ratio is not None:
            text += "  ratio to baseline %.3f (target >= %.2f: %s)" % (ratio, want, "MET" if ratio >= want else "missed")
        if peer:
            pv = peers.get((key[0], key[2]), {}).get(peer)
            if isinstance(pv, float):
                text += "  %s %.1f -> %.3f (%s)" % (peer, pv, fig / pv, "MET" if fig >= pv else "missed")
        print(text)
    line("gemm bf16 4096^3 >= 0.8x cuBLAS", ("gemm", "bf16", "m=4096,n=4096,k=4096"), 0.8)
    line("gemm bf16 8192^3 >= 0.8x cuBLAS", ("gemm", "bf16", "m=8192,n=8192,k=8192"), 0.8)
    line("attention d128 L4096 > FA2", ("attention", "bf16", "b=4,h=16,l=4096,d=128,causal=0"), 0, "flash_attention_2")
    line("attention d128 L4096 causal > FA2", ("attention", "bf16", "b=4,h=16,l=4096,d=128,causal=1"), 0, "flash_attention_2")
    line("rmsnorm 32768x4096 >= 0.9x copy", ("rmsnorm", "bf16", "rows=32768,cols=4096"), 0.9, "torch_compile_rmsnorm")
    line("softmax 32768x4096 >= 0.9x copy", ("softmax", "bf16", "rows=32768,cols=4096"), 0.9, "torch_softmax")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/h200-out")
