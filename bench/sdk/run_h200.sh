#!/usr/bin/env bash
# An outside kernel library built on the installed harness SDK, checked and timed on a real
# GPU: the kernels project is configured with no variants of its own, only the SDK's parts are
# built and installed (`cmake --install --component harness-sdk`), the fixture library of
# tests/integration/harness_sdk (its own layout, find_package(kport-harness)) is built against
# that prefix for sm_90a, and its harness answers `list`, `device`, `check --all` and
# `bench --all`, each printed as a short summary: kport's softmax (on the fixture's own grids)
# and layernorm, the family the fixture declares as data (FamilyDef). The reports go to $OUT (sdk-run.tar.gz).
#   bash bench/sdk/run_h200.sh          (OUT defaults to build/sdk-out)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build/sdk-out}
W=build/sdk-work
rm -rf "$W" && mkdir -p "$OUT" "$W"
trap 'tar czf "$OUT/sdk-run.tar.gz" -C "$W" --exclude="./b" --exclude="./fx" --exclude="./prefix" . || true' EXIT
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0))s] $*"; }
all=$(ls -d kernels/*/*/CMakeLists.txt | sed -E 's#kernels/([^/]+)/([^/]+)/CMakeLists.txt#\1.\2#' | tr '\n' ';')
{ cmake -S kernels -B "$W/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKPORT_CUDA_TARGETS=sm_90a \
    "-DKPORT_EXCLUDE_VARIANTS=${all%;}" &&
  cmake --build "$W/b" --target kport_harness_core kport_reference &&
  cmake --install "$W/b" --component harness-sdk --prefix "$PWD/$W/prefix"; } >"$W/sdk.log" 2>&1 ||
  { stamp "SDK build or install failed"; tail -30 "$W/sdk.log"; exit 2; }
stamp "SDK installed"
{ cmake -S tests/integration/harness_sdk/fixture -B "$W/fx" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_PREFIX_PATH=$PWD/$W/prefix" -DWARP_SOFTMAX_TARGET=sm_90a && cmake --build "$W/fx"; } >"$W/fixture.log" 2>&1 ||
  { stamp "fixture build failed"; tail -30 "$W/fixture.log"; exit 2; }
H=$(find "$W/fx" -name warp_softmax_harness -type f | head -1)
stamp "fixture harness built: $H"
"$H" list >"$W/list.json"; stamp "list: exit $?"
"$H" device >"$W/device.json"; stamp "device: exit $?"
timeout 120 "$H" check --all --dtype all --seed 5 >"$W/check.json" 2>"$W/check.err"; stamp "check: exit $?"
timeout 200 "$H" bench --all --dtype all --seed 5 --time-cap-ms 100 >"$W/bench.json" 2>"$W/bench.err"; stamp "bench: exit $?"
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import collections, json, sys
w = sys.argv[1]
d = json.load(open(f"{w}/device.json"))
print("device:", d.get("name", d), "| sm_count", d.get("sm_count"), "| driver", d.get("driver_version"))
listed = json.load(open(f"{w}/list.json"))
for v in listed["variants"]:
    print("variant", v["variant"], v.get("status", "built"), v.get("reason", ""),
          [i["name"] for i in v.get("instances", [])])
for f in listed.get("families", []):
    print("declared family", f["name"], [d["name"] for d in f["dims"]], f["dtypes"])
c = json.load(open(f"{w}/check.json"))
verdicts = collections.Counter(r.get("verdict") for r in c.get("results", []))
for fam in sorted({r.get("family") for r in c.get("results", [])}):
    rs = [r for r in c.get("results", []) if r.get("family") == fam]
    worst = max([r.get("normwise_rel_error", 0) for r in rs if r.get("verdict") == "passed"] or [0])
    print(f"check {fam}:", dict(collections.Counter(r.get("verdict") for r in rs)), f"worst normwise error {worst:.2e}")
print("check:", dict(verdicts))
for r in c.get("results", []):
    if r.get("verdict") not in ("passed", "unsupported"):
        print("  ", r.get("instance"), r.get("dtype"), r.get("shape_text"), r.get("verdict"), r.get("reason", ""))
b = json.load(open(f"{w}/bench.json"))
for r in b.get("results", []):
    if r.get("verdict") == "measured":
        t = r["timing"]
        print(f"  {r['family']:9} {r['dtype']:5} {r['shape_text']:24} {t['median_ms'] * 1000:9.2f} us  {r.get('gbps', 0):8.1f} GB/s  rse {t['rse'] * 100:.2f} %")
    else:
        print(f"  {r.get('dtype')} {r.get('shape_text')}: {r.get('verdict')} {r.get('reason', '')}")
PY
stamp done
