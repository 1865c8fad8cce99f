#!/usr/bin/env python3
"""What a user reads off a stack that has measured one commit, checked against the GPU.

Against a running kport stack (bench/pipeline, after its pipelines): the commit's verdict,
the SASS audit of every variant built, the bring-up of a target never built (sm_100a:
which variants the planner says apply), the best answer for a GPU model never seen (a
B200, arch 10.0), and one stored result's printed reproduce command run for real, its
seed and numerics compared with the stored ones. Standard library only; prints a report
and writes answers.json under --out.
"""
import argparse
import json
import os
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pipeline"))
from drive import Api  # noqa: E402  (the benches' one client of the REST API)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    api = Api(args.server, args.token)
    doc, lines = {}, []

    def guarded(name, fn):
        try:
            fn()
        except Exception as e:  # a broken section is reported, the others still run
            lines.append(f"{name}: could not be checked: {type(e).__name__}: {e}")

    _, builds = api.call("GET", f"/api/v1/builds?target={args.target}&limit=200")
    items = builds.get("items", []) if isinstance(builds, dict) else []
    commit = items[0]["commit"] if items else ""
    def verdict_section():
        status, verdict = api.call("GET", f"/api/v1/commits/{commit}/verdict")
        doc["verdict"] = verdict
        if isinstance(verdict, dict):
            lines.append(f"verdict of {commit[:12]}: {verdict.get('status')} ({len(verdict.get('reasons', []))} reasons; "
                         f"baseline {verdict.get('baseline')})")
        else:
            lines.append(f"verdict of {commit[:12]}: HTTP {status} {verdict}")

    guarded("verdict", verdict_section)

    def sass_section():
        lines.append(f"SASS audit of {args.target} at {commit[:12]}:")
        doc["sass"] = []
        for b in sorted(items, key=lambda b: (b["family"], b["variant"])):
            audit = b.get("instruction_audit") or {}
            sass = audit.get("sass", {}) if isinstance(audit, dict) else {}
            doc["sass"].append({"variant": f"{b['family']}.{b['variant']}", "status": b["status"], "sass": sass})
            if b["status"] == "not_applicable":
                continue
            counts = sass.get("counts") or sass.get("instructions") or {}
            shown = {k: v for k, v in counts.items() if v} if isinstance(counts, dict) else counts
            lines.append(f"  {b['family']}.{b['variant']:<12} {b['status']:<14} audited={sass.get('audited')} "
                         f"passed={sass.get('passed')} {json.dumps(shown, sort_keys=True)[:200]}"
                         f"{' reason=' + str(sass.get('reason')) if sass.get('reason') else ''}")

    guarded("SASS audit", sass_section)

    def bringup_section():
        # Registered as kport-watcher registers a target: its catalog entry's features.
        catalog = json.load(open(os.path.join(os.path.dirname(__file__), "../../porting/catalog/targets.json")))
        entry = catalog["targets"]["sm_100a"]
        features = {f: True for f in entry["features"]}
        features["max_dynamic_smem_per_block"] = entry["max_dynamic_smem_per_block"]
        api.call("PUT", "/api/v1/targets/sm_100a", {"arch": entry["arch"], "features": features})
        status, bring = api.call("GET", "/api/v1/targets/sm_100a/bringup")
        doc["bringup_sm_100a"] = bring
        if isinstance(bring, dict):
            rows = bring.get("variants", [])
            applicable = [f"{r['family']}.{r['variant']}" for r in rows if r.get("stage") != "not_applicable"]
            na = [f"{r['family']}.{r['variant']}" for r in rows if r.get("stage") == "not_applicable"]
            lines.append(f"sm_100a before its first build: applicable {', '.join(applicable)}; not applicable {', '.join(na)}")
        else:
            lines.append(f"sm_100a bring-up: HTTP {status} {bring}")

    guarded("sm_100a bring-up", bringup_section)

    def b200_section():
        q = urllib.parse.urlencode({"gpu": "NVIDIA B200", "arch": "10.0", "op": "gemm", "dtype": "bf16",
                                    "shape": "m=4096,n=4096,k=4096"})
        status, best = api.call("GET", "/api/v1/best?" + q)
        doc["best_b200"] = best
        if isinstance(best, dict) and "error" in best:
            lines.append(f"best on a B200: HTTP {status} {best['error']}")
        elif isinstance(best, dict):
            lines.append(f"best gemm bf16 4096^3 on a B200 (never seen): {best.get('kind')}, best {best.get('best')}, "
                         f"ranked by {best.get('ranked_by') or '-'}; candidates: "
                         f"{', '.join(r['instance'] for r in best.get('ranking', []))}")
            lines.append(f"  reason: {best.get('reason')}")
        else:
            lines.append(f"best on a B200: HTTP {status} {best}")

    guarded("B200 answer", b200_section)

    def reproduce_section():
        # One timed result's printed check command, run as printed (downloads the harness).
        _, page = api.call("GET", f"/api/v1/results?commit={commit}&status=passed&family=gemm&limit=50")
        picked = next((r for r in page.get("items", []) if r.get("timing", {}).get("median_us")), None) \
            if isinstance(page, dict) else None
        if picked:
            _, full = api.call("GET", f"/api/v1/results/{picked['id']}")
            rep = full.get("reproduce", {}) if isinstance(full, dict) else {}
            cmd = (rep.get("commands") or {}).get("check") if isinstance(rep.get("commands"), dict) else rep.get("check")
            doc["reproduce"] = {"result": picked["id"], "reproduce": rep}
            if isinstance(cmd, str):
                cmd = cmd.replace("${KPORT_SERVER:-http://127.0.0.1:8080}", args.server)
                work = os.path.join(args.out, "repro")
                os.makedirs(work, exist_ok=True)
                p = subprocess.run(["bash", "-c", cmd], cwd=work, capture_output=True, text=True, timeout=300)
                try:
                    got = json.loads(p.stdout)["results"][0]
                    stored = full["numerics"]
                    same_seed = str(got.get("seed")) == str(stored.get("seed"))
                    same_err = got.get("max_abs_error") == stored.get("max_abs_err")
                    lines.append(f"reproduce result {picked['id']} ({picked['instance']} {picked['shape']}): exit {p.returncode}, "
                                 f"seed {got.get('seed')} {'==' if same_seed else '!='} stored {stored.get('seed')}, "
                                 f"max_abs_error {got.get('max_abs_error')} {'==' if same_err else '!='} stored {stored.get('max_abs_err')}")
                    doc["reproduce"].update({"ran": cmd, "exit": p.returncode, "got": got, "same_seed": same_seed,
                                             "same_max_abs_err": same_err})
                except (ValueError, KeyError, IndexError, TypeError) as e:
                    lines.append(f"reproduce result {picked['id']}: could not read its output ({e}); exit {p.returncode}; "
                                 f"stderr {p.stderr[-300:]!r}")
            else:
                lines.append(f"reproduce result {picked['id']}: no check command in {json.dumps(rep)[:300]}")

    guarded("reproduce", reproduce_section)

    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "answers.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(args.out, "answers.txt"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
