#!/usr/bin/env bash
# Builds the kernel library for sm_90a, then lists, checks and benches every instance on
# the local GPU and measures the PyTorch peers; writes JSON under $OUT and prints a short
# table last. Made for one call on a lent H200 (nvcc, cmake, ninja, PyTorch there):
#
#   bash bench/kernels/run_h200.sh
#
# Environment (all optional):
#   OUT                where results go (default build/h200-out)
#   KPORT_TARGET       nvcc target (default sm_90a)
#   KPORT_FILTER       only instances whose name matches this (Python) regular expression
#   KPORT_EXCLUDE      family.variant list (;-separated) not to build
#   KPORT_PREBUILT     directory holding kport-harness-<target>: skip the build
#   KPORT_BENCH_CAP_MS time cap per measurement (default 500)
#   KPORT_SKIP_BENCH=1, KPORT_SKIP_PEERS=1, KPORT_NO_COMPILE=1 (peers without torch.compile)
#   KPORT_DEADLINE_S   after this many seconds, remaining benches and peers are skipped so
#                      the summary is still printed inside the call's limit (default 460)
# Each instance is checked and benched in its own process under `timeout`, so a fault or a
# hang in one costs only that instance. A variant that fails to compile is excluded and the
# build retried, so the others still run.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build/h200-out}
TARGET=${KPORT_TARGET:-sm_90a}
BUILD=${KPORT_BUILD_DIR:-build/h200}
CAP=${KPORT_BENCH_CAP_MS:-500}
mkdir -p "$OUT"
t_start=$(date +%s)
say() { echo "[$(( $(date +%s) - t_start ))s] $*"; }
DEADLINE=${KPORT_DEADLINE_S:-460}
late() { (( $(date +%s) - t_start > DEADLINE )); }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$OUT/run.log" 2>&1 || true

if [[ -n "${KPORT_PREBUILT:-}" ]]; then
  HARNESS=$KPORT_PREBUILT/kport-harness-$TARGET
  say "using prebuilt $HARNESS"
else
  exclude=${KPORT_EXCLUDE:-}
  for attempt in 1 2 3; do
    say "configure + build for $TARGET (attempt $attempt, excluded: ${exclude:-none})"
    cmake -S kernels -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DKPORT_CUDA_TARGETS="$TARGET" "-DKPORT_EXCLUDE_VARIANTS=$exclude" >>"$OUT/build.log" 2>&1 \
      || { say "configure failed (see build.log)"; tail -30 "$OUT/build.log"; exit 1; }
    attempt_log=$(mktemp)
    if ninja -C "$BUILD" -j "$(nproc)" -k 0 >"$attempt_log" 2>&1; then
      cat "$attempt_log" >>"$OUT/build.log"; break
    fi
    cat "$attempt_log" >>"$OUT/build.log"
    # A failed object names its variant: FAILED: .../kport_<family>_<variant>_<target>.dir/...
    failed=$(grep '^FAILED:' "$attempt_log" | grep -o "kport_[a-z]*_[a-z0-9_]*_${TARGET}\.dir" |
             sed -E "s/^kport_(gemm|attention|rmsnorm|softmax)_(.*)_${TARGET}\.dir$/\1.\2/" |
             grep -v '^kport_' | sort -u | tr '\n' ';')
    if [[ -z "$failed" || $attempt == 3 ]]; then
      say "build failed outside a variant (see build.log)"; grep -A12 '^FAILED' "$attempt_log" | tail -60; exit 1
    fi
    say "variants that failed to compile: $failed"
    exclude="${exclude:+$exclude;}${failed%;}"
  done
  HARNESS=$BUILD/bin/kport-harness-$TARGET
  grep -i "spill" "$OUT/build.log" | sort -u | head -20 || true
fi
say "build done"

"$HARNESS" list >"$OUT/list.json"
"$HARNESS" device >"$OUT/device.json" || { cat "$OUT/device.json"; exit 3; }
instances=$(KPORT_FILTER=${KPORT_FILTER:-} python3 -c "
import json, os, re
d = json.load(open('$OUT/list.json'))
for v in d['variants']:
    for i in v.get('instances', []):
        if re.search(os.environ['KPORT_FILTER'], i['name']): print(i['name'])")

: >"$OUT/check.jsonl"
for inst in $instances; do
  if late; then say "deadline: check of $inst and later skipped"; break; fi
  timeout -k 5 240 "$HARNESS" check --all --instance "$inst" --timeout-s 60 >>"$OUT/check.jsonl" 2>>"$OUT/run.log"
  rc=$?
  if (( rc >= 124 )); then echo "{\"instance\":\"$inst\",\"error\":{\"code\":\"process\",\"message\":\"check exited $rc (timeout or crash)\"}}" >>"$OUT/check.jsonl"; fi
  say "check $inst rc=$rc"
done

if [[ -z "${KPORT_SKIP_BENCH:-}" ]]; then
  : >"$OUT/bench.jsonl"
  for inst in $instances; do
    if late; then say "deadline: bench of $inst and later skipped"; break; fi
    timeout -k 5 240 "$HARNESS" bench --all --instance "$inst" --time-cap-ms "$CAP" --timeout-s 60 >>"$OUT/bench.jsonl" 2>>"$OUT/run.log"
    rc=$?
    if (( rc >= 124 )); then echo "{\"instance\":\"$inst\",\"error\":{\"code\":\"process\",\"message\":\"bench exited $rc (timeout or crash)\"}}" >>"$OUT/bench.jsonl"; fi
    say "bench $inst rc=$rc"
  done
fi

if [[ -z "${KPORT_SKIP_PEERS:-}" ]] && ! late; then
  say "peers (PyTorch)"
  ( cd bench/peers && timeout -k 5 $(( DEADLINE + 90 - ($(date +%s) - t_start) )) python3 peers.py --out "$OUT/peers.json" --cap-ms "$CAP" \
      ${KPORT_NO_COMPILE:+--no-compile} ) 2>>"$OUT/run.log" || say "peers exited $?"
fi

say "done"
python3 bench/kernels/summarize.py "$OUT" | tee "$OUT/summary.txt"
