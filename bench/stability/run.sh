#!/usr/bin/env bash
# How far a benchmark figure moves with the GPU's thermal state, per measurement policy.
# Measures a few compute-bound cases with each policy on a cool GPU, heats the GPU with a
# long 8192^3 gemm, measures again, and reports cool-against-hot differences per policy,
# with the SM clock read after every sample. Made for one call on a lent H200:
#
#   bash bench/stability/run.sh [path/to/kport-harness-sm_90a]
#
# Environment: OUT (default build/stability-out), KPORT_HEAT_S (default 20).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build/stability-out}
H=${1:-build/h-kern-sa/bin/kport-harness-sm_90a}
HEAT_S=${KPORT_HEAT_S:-20}
mkdir -p "$OUT"
[[ -x $H ]] || { echo "no harness at $H"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,temperature.gpu,power.draw,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 >"$OUT/smi.csv" 2>/dev/null &
smi=$!
trap 'kill $smi 2>/dev/null' EXIT

CASES=(
  "gemm.wgmma_tma.128x256x64_s4_c2x1 m=8192,n=8192,k=8192"
  "gemm.wgmma_tma.128x256x64_s4 m=2048,n=2048,k=2048"
  "gemm.wgmma_tma.128x256x64_s4 m=4096,n=4096,k=512"
  "attention.wgmma_tma.d64_br192_bc128_s2 b=4,h=32,l=4096,d=64,causal=0"
)
COMMON="--warmup-ms 200 --time-cap-ms 400 --min-samples 20 --max-rse 0.005"
declare -A POLICY=(
  [continuous]="$COMMON --no-blocker --max-duty 1 --throttle-threshold 0"
  [blocker]="$COMMON --max-duty 1 --throttle-threshold 0"
  [duty50]="$COMMON --max-duty 0.5 --throttle-threshold 0"
  [duty50_throttle97]="$COMMON --max-duty 0.5 --throttle-threshold 0.97"
)
POLICIES=${KPORT_POLICIES:-continuous blocker duty50 duty50_throttle97}
measure_all() {  # phase
  for p in $POLICIES; do
    i=0
    for c in "${CASES[@]}"; do
      set -- $c
      timeout 60 "$H" bench --instance "$1" --dtype bf16 --shape "$2" ${POLICY[$p]} --trace \
        >"$OUT/$phase-$p-$i.json" 2>"$OUT/$phase-$p-$i.err"
      i=$((i + 1))
    done
  done
}
t0=$(date +%s)
phase=cool1; measure_all
phase=cool2; measure_all
echo "[$(( $(date +%s) - t0 ))s] heating ${HEAT_S}s"
timeout 120 "$H" bench --instance gemm.wgmma_tma.128x256x64_s4_c2x1 --dtype bf16 --shape m=8192,n=8192,k=8192 \
  --no-baseline --max-duty 1 --throttle-threshold 0 --warmup-ms 0 --time-cap-ms $((HEAT_S * 1000)) --min-samples 100000 --max-rse 0.000001 --trace \
  >"$OUT/heat.json" 2>"$OUT/heat.err"
phase=hot1; measure_all
phase=hot2; measure_all
echo "[$(( $(date +%s) - t0 ))s] done"
kill $smi 2>/dev/null
python3 bench/stability/report.py "$OUT" | tee "$OUT/report.txt"
tar -C "$OUT" -czf "$OUT/stability.tar.gz" --exclude='*.tar.gz' .
