#!/usr/bin/env bash
# How far one case's figure moves from one harness process to the next, per measurement
# policy: runs each case in KPORT_PROCS processes (default 4) back to back with many
# samples and reports each process's median, interquartile mean and spread. One call on
# a GPU machine:
#
#   bash bench/stability/processes.sh [path/to/kport-harness-sm_90a]
#
# Environment: OUT (default build/stability-out), KPORT_PROCS, KPORT_SAMPLES (default 200).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build/stability-out}
H=${1:-build/h-kern-sa/bin/kport-harness-sm_90a}
PROCS=${KPORT_PROCS:-4}
SAMPLES=${KPORT_SAMPLES:-200}
mkdir -p "$OUT/processes"
[[ -x $H ]] || { echo "no harness at $H"; exit 2; }
CASES=(
  "gemm.wgmma_tma.128x256x64_s4 m=2048,n=2048,k=2048"
  "gemm.wgmma_tma.128x256x64_s4 m=4096,n=4096,k=512"
  "gemm.wgmma_tma.128x256x64_s4_c2x1 m=8192,n=8192,k=8192"
)
t0=$(date +%s)
COMMON="--warmup-ms 200 --time-cap-ms 2000 --min-samples $SAMPLES --max-rse 0.001 --trace"
declare -A POLICY=(
  [old]="$COMMON --no-blocker --max-duty 1 --throttle-threshold 0.97"
  [new]="$COMMON --max-duty 0.5 --throttle-threshold 0.97"
  [newread]="$COMMON --max-duty 0.5 --throttle-threshold 0.97 --l2-flush read"
)
for flush in ${KPORT_POLICIES:-old new newread}; do
  i=0
  for c in "${CASES[@]}"; do
    set -- $c
    for p in $(seq "$PROCS"); do
      timeout 120 "$H" bench --instance "$1" --dtype bf16 --shape "$2" ${POLICY[$flush]} \
        >"$OUT/processes/$flush-$i-$p.json" 2>"$OUT/processes/$flush-$i-$p.err"
    done
    i=$((i + 1))
  done
  echo "[$(( $(date +%s) - t0 ))s] $flush done"
done
python3 bench/stability/processes.py "$OUT/processes" | tee "$OUT/processes.txt"
tar -C "$OUT" -czf "$OUT/processes.tar.gz" processes
