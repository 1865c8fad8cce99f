#!/usr/bin/env python3
"""Drives a started kport stack through one bisection over 16 real commits and reports.

Started by bench/bisect/run_h200.sh with the stack up and the repository made: registers
the repository and the target, validates c0 (--aa narrowed manual pipelines, then the push
of c0 through the post-receive hook), validates c16 (one narrowed pipeline, then the push
of c16 with before = c0), and waits for what kport does by itself: the verdict of c16
suspects the slowdown, re-measures it A/B/A/B against c0's harness, counts it, and a
bisection over c0..c16 finds the first bad commit. With --dry (no GPU runner) it stops once
the builds of c0 and c16 succeeded and their checks wait for a GPU.

Standard library only; the HTTP client is bench/pipeline/drive.py's. Writes report.txt and
the raw answers (*.json) under --out. Exit status: 0 the seeded commit found (dry: every
dry check passed), 1 not found or a step failed, 2 past --deadline.
"""
import argparse
import datetime
import json
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "pipeline"))
from drive import Api  # noqa: E402  (bench/pipeline/drive.py)

# bf16 shapes of the gemm bench grid (kernels/harness/shapes.cpp) on which the instance
# runs 50 us or more on an H200: where a 2 % change is detectable at all.
DEFAULT_CASES = ";".join([
    "m=2048,n=2048,k=2048", "m=3072,n=3072,k=3072", "m=4096,n=4096,k=4096", "m=6144,n=6144,k=6144",
    "m=8192,n=8192,k=8192", "m=4096,n=14336,k=4096", "m=4096,n=4096,k=14336", "m=1024,n=14336,k=4096",
])
DONE = ("succeeded", "failed", "cancelled")


class Timeout(Exception):
    pass


class Down(Exception):
    """The coordinator stopped answering: it exited (its log says why) or hangs."""


class Run:
    def __init__(self, args):
        self.args = args
        self.api = Api(args.server, args.token)
        self.out = pathlib.Path(args.out)
        self.lines = []
        self.commits = [c.strip() for c in pathlib.Path(args.commits).read_text().split() if c.strip()]
        self.label = {sha: f"c{i}" for i, sha in enumerate(self.commits)}
        self.walls = []  # (what, seconds)
        self.failures = []

    # ---- output ----
    def log(self, line=""):
        stamp = f"[{time.time() - self.args.start:6.1f} s] " if line else ""
        print(stamp + line, flush=True)
        self.lines.append(stamp + line)

    def fail(self, what):
        self.failures.append(what)
        self.log("FAILED CHECK: " + what)

    def save(self, name, doc):
        with open(self.out / name, "w") as f:
            json.dump(doc, f, indent=1)

    def name(self, sha):
        return f"{self.label.get(sha, '?')} {sha[:12]}" if sha else "none"

    def check_deadline(self):
        if time.time() > self.args.deadline:
            raise Timeout()

    def get(self, path):
        """GET that retries a failed connection for a few seconds; None on an error answer,
        Down when the coordinator does not answer at all."""
        for attempt in range(5):
            try:
                status, doc = self.api.call("GET", path)
                return doc if status == 200 else None
            except OSError as e:
                error = e
                time.sleep(1)
        raise Down(f"GET {path}: {error}")

    # ---- setup ----
    def setup(self):
        a = self.args
        status, doc = self.api.call("POST", "/api/v1/repositories", {"name": "kernels", "url": a.origin})
        if status >= 300:
            sys.exit(f"POST /api/v1/repositories answered {status}: {doc}")
        catalog = pathlib.Path(__file__).resolve().parents[2] / "porting" / "catalog" / "targets.json"
        entry = json.loads(catalog.read_text())["targets"].get(a.target, {})
        features = {f: True for f in entry.get("features", [])}
        if "max_dynamic_smem_per_block" in entry:
            features["max_dynamic_smem_per_block"] = entry["max_dynamic_smem_per_block"]
        self.api.ok("PUT", f"/api/v1/targets/{a.target}", {"arch": a.arch, "check_arches": [a.arch], "features": features})
        roles = {"build"} if a.dry else {"build", "gpu"}
        end = time.time() + 120
        while time.time() < end:
            runners = self.api.ok("GET", "/api/v1/runners")["items"]
            if roles <= {r["role"] for r in runners}:
                for r in runners:
                    self.log(f"runner {r['name']}: role {r['role']}, caps {json.dumps(r.get('capabilities', {}))}")
                return
            time.sleep(1)
        sys.exit("the runners did not register in time: " + ", ".join(sorted(roles)))

    def payload(self):
        a = self.args
        family, variant = a.instance.split(".")[:2]
        cases = [{"family": family, "dtype": "bf16", "shape": s.strip()} for s in a.cases.split(";") if s.strip()]
        return {"variants": [f"{family}.{variant}"], "instances": [a.instance], "cases": cases, "bench": True}

    def queue(self, sha, note):
        p = self.api.ok("POST", "/api/v1/pipelines", {"commit": sha, "repo": "kernels", "ref": "refs/heads/main",
                                                     "reason": "manual", "targets": [self.args.target],
                                                     "note": note, "payload": self.payload()})
        self.log(f"pipeline {p['id']} queued for {self.name(sha)}: {note}")
        return p["id"], time.time()

    def push(self, sha, before):
        """git push of `sha` to main; the post-receive hook reports it to the coordinator."""
        t0 = time.time()
        r = subprocess.run(["git", "-C", self.args.src, "push", self.args.origin, f"{sha}:refs/heads/main"],
                           capture_output=True, text=True)
        said = [l.strip() for l in (r.stdout + r.stderr).splitlines() if "kport:" in l]
        self.log(f"push {self.name(before) if before else '(new branch)'} -> {self.name(sha)}: git exit {r.returncode}, "
                 f"{time.time() - t0:.1f} s; hook: {' | '.join(said) or '(said nothing)'}")
        if r.returncode != 0:
            self.fail(f"git push of {self.name(sha)} failed: {r.stderr.strip()[:500]}")
        if not any("(HTTP 200)" in l or "(HTTP 201)" in l or "(HTTP 202)" in l for l in said):
            self.fail(f"the coordinator did not take the push of {self.name(sha)}")
        # The push queues no pipeline of its own: the commit has its pipeline already.
        pipes = self.get(f"/api/v1/pipelines?commit={sha}&limit=100") or {"items": []}
        pushed = [p for p in pipes["items"] if p["reason"] == "push"]
        if pushed:
            self.fail(f"the push of {self.name(sha)} queued pipeline(s) {[p['id'] for p in pushed]} (a full validation)")

    # ---- waiting ----
    def wait_pipelines(self, pids, what, t_queued):
        """Waits for every pipeline of `pids`: all jobs ended with a check among them (dry:
        the builds ended and their checks were spawned). Returns {pid: answer}."""
        last, answers, done_at = {}, {}, {}
        while True:
            self.check_deadline()
            for pid in pids:
                if pid in done_at:
                    continue
                doc = self.get(f"/api/v1/pipelines/{pid}")
                if doc is None:
                    continue
                answers[pid] = doc
                jobs = doc["jobs"]
                state = ", ".join(f"{j['kind']} {j['id']} {j['status']}" for j in jobs)
                if state != last.get(pid):
                    self.log(f"  pipeline {pid}: {state}")
                    last[pid] = state
                # The pipeline's own jobs: a re-measure the verdict queues joins the pipeline
                # of the build it times, and is timed apart.
                own = [j for j in jobs if not (isinstance(j.get("payload"), dict) and j["payload"].get("remeasure"))]
                builds = [j for j in own if j["kind"] == "build"]
                checks = [j for j in own if j["kind"] == "check"]
                builds_done = builds and all(j["status"] in DONE for j in builds)
                if builds_done and any(j["status"] != "succeeded" for j in builds):
                    done_at[pid] = time.time()
                elif self.args.dry and builds_done and checks:
                    done_at[pid] = time.time()
                elif checks and all(j["status"] in DONE for j in own):
                    done_at[pid] = time.time()
            if len(done_at) == len(pids):
                break
            time.sleep(1)
        for pid in pids:
            self.save(f"pipeline-{pid}.json", answers[pid])
            wall = done_at[pid] - t_queued[pid]
            self.walls.append((f"pipeline {pid} ({what})", wall))
            parts = []
            for j in answers[pid]["jobs"]:
                d = job_seconds(j)
                parts.append(f"{j['kind']} {j['status']}" + (f" {d:.1f} s" if d is not None else ""))
                if j.get("failure_reason"):
                    self.log(f"  job {j['id']} ({j['kind']}) failed: {j['failure_reason'][:1500]}")
            self.log(f"pipeline {pid} ({what}): {wall:.1f} s wall; " + ", ".join(parts))
        return answers

    def build_harness(self, build_job):
        """The harness sha256 of a build job's records (one for the variant built)."""
        page = self.get(f"/api/v1/builds?job={build_job}&limit=100") or {"items": []}
        shas = {r.get("artifact") for r in page.get("items", [])}
        shas.discard(None)
        return page.get("items", []), shas

    # ---- the run ----
    def main(self):
        a = self.args
        c0, c16 = self.commits[0], self.commits[-1]
        seeded = self.commits[a.seeded]
        self.log(f"commits c0..c16: {len(self.commits)}; seeded c{a.seeded} {seeded[:12]}")
        if len(self.commits) != 17:
            self.fail(f"{len(self.commits)} commits in the repository, not 17")
        self.setup()

        # c0: validated a.aa times (the A/A history), then pushed.
        t0 = time.time()
        queued = {}
        for k in range(1, a.aa + 1):
            pid, t = self.queue(c0, f"bench/bisect: c0, validation {k} of {a.aa} (A/A history)")
            queued[pid] = t
        self.push(c0, None)
        got = self.wait_pipelines(list(queued), "c0", queued)
        self.walls.append((f"c0: {a.aa} pipelines", time.time() - t0))
        harnesses = set()
        for pid, doc in got.items():
            for j in doc["jobs"]:
                if j["kind"] == "build":
                    if j["status"] != "succeeded":
                        self.fail(f"the build of c0 in pipeline {pid} {j['status']}")
                    records, shas = self.build_harness(j["id"])
                    harnesses |= shas
                    self.save(f"builds-{j['id']}.json", records)
        self.log(f"c0 harness sha256 over its {a.aa} builds: {sorted(s[:12] for s in harnesses)}")
        if len(harnesses) != 1:
            self.fail(f"the {a.aa} builds of c0 made {len(harnesses)} harnesses: their figures are not one A/A series")

        # c16: validated once, then pushed with before = c0.
        t16 = time.time()
        pid16, t = self.queue(c16, "bench/bisect: c16, the pushed head")
        self.push(c16, c0)
        commit = self.get(f"/api/v1/commits/{c16}")
        if commit is not None:
            self.save("commit-c16.json", commit)
        got16 = self.wait_pipelines([pid16], "c16", {pid16: t})
        for j in got16[pid16]["jobs"]:
            if j["kind"] == "build":
                if j["status"] != "succeeded":
                    self.fail(f"the build of c16 {j['status']}")
                _, shas = self.build_harness(j["id"])
                self.log(f"c16 harness sha256: {sorted(s[:12] for s in shas)}")
                if shas & harnesses:
                    self.fail("c16's harness is c0's: the seeded change was not built")
        if a.dry:
            return self.dry_end(got, got16)

        # The verdict, its re-measure and the bisection, all started by kport itself.
        t_v = time.time()
        verdict, remeasure, bis, last = None, None, None, ""
        settled_at = None
        while True:
            self.check_deadline()
            v = self.get(f"/api/v1/commits/{c16}/verdict")
            if v is not None:
                verdict = v
            jobs = (self.get(f"/api/v1/jobs?commit={c16}&kind=check&limit=100") or {"items": []})["items"]
            for j in jobs:
                if isinstance(j.get("payload"), dict) and j["payload"].get("remeasure"):
                    remeasure = j
            bl = (self.get(f"/api/v1/bisections?commit={c16}") or {"items": []})["items"]
            mine = [b for b in bl if b["bad"] == c16 and b["kind"] == "perf_regression"]
            if mine:
                bis = mine[0]
            state = (f"verdict {verdict['status'] if verdict else '?'}; re-measure "
                     f"{remeasure['status'] if remeasure else 'none'}; bisection "
                     f"{(bis['state'] + ', ' + str(len(bis['probes'])) + ' probe(s): ' + bis['summary']) if bis else 'none'}")
            if state != last:
                self.log("  " + state)
                last = state
            if bis and bis["state"] != "running":
                break
            if verdict and verdict["status"] != "pending" and not bis and not (remeasure and remeasure["status"] not in DONE):
                # A final verdict without a bisection: give kport a moment, then stop.
                settled_at = settled_at or time.time()
                if time.time() - settled_at > 15:
                    break
            time.sleep(1)
        self.walls.append(("c16: from its check's end to the bisection's end" if bis else "c16: from its check's end to the final verdict", time.time() - t_v))
        self.walls.append(("c16: pipeline, verdict, re-measure, bisection", time.time() - t16))
        return self.report(verdict, remeasure, bis, seeded)

    def dry_end(self, got0, got16):
        self.log("")
        self.log("DRY RUN: stopping before the GPU stage.")
        waiting = 0
        for doc in list(got0.values()) + list(got16.values()):
            for j in doc["jobs"]:
                if j["kind"] == "check":
                    waiting += j["status"] not in DONE
                    p = j.get("payload") or {}
                    ok = (p.get("instances") == [self.args.instance] and p.get("bench") is True and
                          len(p.get("cases") or []) == len(self.payload()["cases"]))
                    if not ok:
                        self.fail(f"check job {j['id']} does not carry the narrowed payload: {json.dumps(p)[:300]}")
        self.log(f"{waiting} check job(s) wait for a GPU runner (none started: KPORT_BISECT_DRY).")
        c16 = self.commits[-1]
        commit = self.get(f"/api/v1/commits/{c16}")
        v = self.get(f"/api/v1/commits/{c16}/verdict")
        if v is not None:
            self.save("verdict-c16.json", v)
            self.log(f"verdict of c16 now: {v['status']} against {self.name(v.get('baseline'))} "
                     f"(waiting: {'; '.join(v.get('waiting', []))[:300]})")
        self.log("wall times:")
        for what, s in self.walls:
            self.log(f"  {what}: {s:.1f} s")
        self.log(f"  total: {time.time() - self.args.start:.1f} s")
        if self.failures:
            self.log(f"DRY RUN FAILED: {len(self.failures)} check(s): " + "; ".join(self.failures))
            return 1
        self.log("DRY RUN PASSED: 17 commits, pushes taken, narrowed pipelines created, builds of c0 and c16 succeeded")
        return 0

    def report(self, verdict, remeasure, bis, seeded):
        a = self.args
        self.log("")
        if verdict:
            self.save("verdict-c16.json", verdict)
            self.log(f"verdict of c16: {verdict['status']} against {self.name(verdict.get('baseline'))}, "
                     f"{len(verdict.get('reasons', []))} reason(s), {len(verdict.get('insufficient_data', []))} "
                     f"series unjudged")
            for r in verdict.get("reasons", []):
                f = r.get("figures", {})
                self.log(f"  {r['kind']}: {r['message'][:400]}")
                if "paired_slowdown" in f:
                    self.log(f"    paired (A/B/A/B) slowdown {100 * f['paired_slowdown']:.2f} %"
                             + (f", band {100 * f['band']:.2f} %" if "band" in f else ""))
            for n in verdict.get("notes", [])[:10]:
                self.log(f"  note: {n[:300]}")
        if remeasure:
            self.save("remeasure-job.json", remeasure)
            d = job_seconds(remeasure)
            self.log(f"re-measure job {remeasure['id']}: {remeasure['status']}" + (f", {d:.1f} s" if d else ""))
            if d is not None:
                self.walls.append((f"re-measure job {remeasure['id']} (A/B/A/B)", d))
        else:
            self.log("re-measure: none was queued")
        rc = 1
        if bis:
            self.save("bisection.json", bis)
            probes = bis.get("probes", [])
            self.log(f"bisection {bis['id']} ({bis['origin']}): {bis['state']}, {len(bis.get('commits', []))} commits "
                     f"from {self.name(bis['good'])} to {self.name(bis['bad'])}, {len(bis.get('cases', []))} case(s)")
            self.log(f"  summary: {bis.get('summary', '')}")
            self.log(f"  first bad: {self.name(bis.get('first_bad'))}; last good: {self.name(bis.get('last_good'))}; "
                     f"seeded: {self.name(seeded)}")
            eff, unc = bis.get("effect"), bis.get("uncertainty")
            if eff is not None:
                self.log(f"  effect {100 * eff:+.2f} % +- {100 * (unc or 0):.2f} % (95 %), cause {bis.get('cause')}")
            else:
                self.log(f"  effect: none; cause {bis.get('cause')}")
            for e in bis.get("effects", []):
                self.log(f"    {e['case']}: {e['good_us']:.1f} -> {e['bad_us']:.1f} us, {100 * e['effect']:+.2f} % "
                         f"+- {100 * e['uncertainty']:.2f} %")
            for j in bis.get("judged", []):
                self.log(f"    judged {self.name(j['commit'])}: {j['outcome']}")
            created, finished = iso(bis.get("created")), iso(bis.get("finished"))
            if created and finished:
                self.walls.append((f"bisection {bis['id']}: start to end", finished - created))
            self.log(f"  probes: {len(probes)}")
            for p in probes:
                doc = self.get(f"/api/v1/pipelines/{p['pipeline']}")
                if doc is None:
                    continue
                self.save(f"probe-{p['pipeline']}.json", doc)
                t_c = iso(doc.get("created") or p.get("created"))
                ends = [iso(j.get("finished")) for j in doc["jobs"]]
                ends = [e for e in ends if e]
                span = (max(ends) - t_c) if (t_c and ends) else None
                parts = []
                for j in doc["jobs"]:
                    d = job_seconds(j)
                    parts.append(f"{j['kind']} {j['status']}" + (f" {d:.1f} s" if d is not None else ""))
                self.log(f"    probe pipeline {p['pipeline']} of {self.name(p['commit'])}: {p['status']}"
                         + (f", {span:.1f} s from queued to done" if span is not None else "") + " (" + ", ".join(parts) + ")")
                if span is not None:
                    self.walls.append((f"probe {self.name(p['commit'])}", span))
            if bis.get("first_bad") == seeded and bis["state"] == "done":
                self.log(f"PASS: the bisection found the seeded commit c{a.seeded} {seeded[:12]} "
                         f"with {len(probes)} probes")
                rc = 0
            else:
                self.log(f"FAIL: the bisection ended {bis['state']} with first bad {self.name(bis.get('first_bad'))}, "
                         f"not the seeded c{a.seeded} {seeded[:12]}")
        else:
            self.log(f"FAIL: no bisection of c16 started (verdict {verdict['status'] if verdict else 'unknown'})")
        self.log("wall times:")
        for what, s in self.walls:
            self.log(f"  {what}: {s:.1f} s")
        self.log(f"  total: {time.time() - a.start:.1f} s")
        if self.failures:
            self.log("checks that failed on the way: " + "; ".join(self.failures))
            rc = rc or 1
        return rc

    def finish(self):
        with open(self.out / "report.txt", "w") as f:
            f.write("\n".join(self.lines) + "\n")


def iso(text):
    if not text:
        return None
    for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.datetime.strptime(text, fmt).replace(tzinfo=datetime.timezone.utc).timestamp()
        except ValueError:
            pass
    return None


def job_seconds(j):
    s, f = iso(j.get("started")), iso(j.get("finished"))
    return f - s if s and f else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--origin", required=True, help="the bare repository the pushes go to")
    ap.add_argument("--src", required=True, help="the clone holding c0..c16")
    ap.add_argument("--commits", required=True, help="a file of the 17 shas, c0 first")
    ap.add_argument("--seeded", type=int, default=7)
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--arch", default="9.0")
    ap.add_argument("--aa", type=int, default=4)
    ap.add_argument("--instance", default="gemm.wgmma_tma.128x128x64_s6")
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--start", type=float, default=time.time())
    ap.add_argument("--deadline", type=float, default=time.time() + 500)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dry", action="store_true")
    args = ap.parse_args()
    run = Run(args)
    try:
        rc = run.main()
    except Down as e:
        run.log(f"COORDINATOR DOWN: {e} (coordinator.log says why)")
        rc = 1
    except Timeout:
        run.log(f"TIMEOUT: past the deadline ({args.deadline - args.start:.0f} s after the start)")
        if not args.dry:
            # What kport had got to, for the report.
            c16 = run.commits[-1]
            try:
                v = run.get(f"/api/v1/commits/{c16}/verdict")
                bl = (run.get(f"/api/v1/bisections?commit={c16}") or {"items": []})["items"]
            except Down as e:
                run.log(f"COORDINATOR DOWN: {e} (coordinator.log says why)")
                v, bl = None, []
            if v is not None:
                run.save("verdict-c16.json", v)
                run.log(f"verdict of c16: {v['status']}; waiting: {'; '.join(v.get('waiting', []))[:400]}")
            for b in bl:
                run.save(f"bisection-{b['id']}.json", b)
                run.log(f"bisection {b['id']}: {b['state']}, {len(b['probes'])} probe(s): {b['summary']}")
        for what, s in run.walls:
            run.log(f"  {what}: {s:.1f} s")
        rc = 2
    run.finish()
    sys.exit(rc)


if __name__ == "__main__":
    main()
