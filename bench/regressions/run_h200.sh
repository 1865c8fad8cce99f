#!/usr/bin/env bash
# A/A figures of every bench-grid case of the library on one GPU, for bench/regressions/
# report.sh: builds kport-harness-sm_90a from kernels/ and runs `bench --all --dtype all`
# in KPORT_PASSES processes back to back (fast rounds: 100 ms time cap, RSE 0.3 %, the
# runner's duty cycle and L2 flush), each report kept as start<S>-pass<P>.json.gz. One call
# per machine start (KPORT_START=1, 2, 3 ...); the figures of several starts are compared
# with each other by report.sh.
#   KPORT_START=1 bash bench/regressions/run_h200.sh      (OUT defaults to build/regressions-out)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build/regressions-out}
START=${KPORT_START:-1}
PASSES=${KPORT_PASSES:-3}
BUDGET_S=${KPORT_BUDGET_S:-430}  # no new pass starts after this many seconds
mkdir -p "$OUT"
t0=$(date +%s)
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader \
  | tee "$OUT/start$START-gpu.txt"
cmake -S kernels -B build/h-kern-sa -G Ninja -DCMAKE_BUILD_TYPE=Release -DKPORT_CUDA_TARGETS=sm_90a >/dev/null &&
  cmake --build build/h-kern-sa >"$OUT/start$START-build.log" 2>&1 || { echo "harness build failed"; tail -20 "$OUT/start$START-build.log"; exit 2; }
H=build/h-kern-sa/bin/kport-harness-sm_90a
sha256sum "$H" | cut -c1-64 | tee "$OUT/start$START-harness.txt"
echo "[$(( $(date +%s) - t0 ))s] harness built"
for p in $(seq "$PASSES"); do
  if (( $(date +%s) - t0 > BUDGET_S )); then echo "budget reached before pass $p"; break; fi
  timeout 300 "$H" bench --all --dtype all --seed $((START * 1000 + p)) --time-cap-ms 100 --warmup-ms 200 \
    --later-warmup-ms 20 --min-samples 10 --max-rse 0.003 --max-duty 0.5 --no-baseline \
    2>"$OUT/start$START-pass$p.err" | gzip >"$OUT/start$START-pass$p.json.gz"
  echo "[$(( $(date +%s) - t0 ))s] pass $p: exit ${PIPESTATUS[0]}"
done
