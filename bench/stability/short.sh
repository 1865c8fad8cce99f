#!/usr/bin/env bash
# How far short kernels' figures (row-wise at 4-30 us, gemm decode shapes) move from one
# harness process to the next, with one set of inputs against the rotation of several
# (--input-sets): KPORT_PROCS processes per policy (default 6), the policies interleaved so
# the GPU's state drifts alike under both; the runner's precise sampling (300 ms cap, RSE
# 0.3 %, 20 samples at least). One call on a GPU machine:
#
#   bash bench/stability/short.sh [path/to/kport-harness-sm_90a]
#
# Environment: OUT (default build/stability-out), KPORT_PROCS, KPORT_POLICIES (default "one auto").
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build/stability-out}
H=${1:-build/h-kern-sa/bin/kport-harness-sm_90a}
PROCS=${KPORT_PROCS:-6}
mkdir -p "$OUT/short"
[[ -x $H ]] || { echo "no harness at $H"; exit 2; }
CASES=()
for fam in rmsnorm softmax; do
  for inst in $fam.simt.block256 $fam.vec16.regs_v2 $fam.vec16.regs_v4 $fam.vec16.regs_v8; do
    for dt in bf16 fp32; do
      for shape in rows=16,cols=4096 rows=128,cols=8192 rows=1,cols=131072 rows=1000,cols=2048; do
        CASES+=(--case "$inst:$dt:$shape")
      done
    done
  done
done
for inst in gemm.wgmma_tma.128x128x64_s6 gemm.wgmma_tma.128x256x64_s4 gemm.mma_sync.128x128x32_s4; do
  for shape in m=1,n=4096,k=4096 m=16,n=4096,k=4096 m=64,n=14336,k=4096 m=1,n=4096,k=14336; do
    CASES+=(--case "$inst:bf16:$shape")
  done
done
SAMPLING=(--time-cap-ms 300 --warmup-ms 200 --later-warmup-ms 20 --min-samples 20 --max-rse 0.003 --max-duty 0.5)
declare -A POLICY=([one]="--input-sets 1" [auto]="--input-sets auto" [sets4]="--input-sets 4")
t0=$(date +%s)
for p in $(seq "$PROCS"); do
  for pol in ${KPORT_POLICIES:-one auto}; do
    timeout 200 "$H" bench "${CASES[@]}" --seed $((100 + p)) "${SAMPLING[@]}" ${POLICY[$pol]} \
      >"$OUT/short/$pol-$p.json" 2>"$OUT/short/$pol-$p.err"
    echo "[$(( $(date +%s) - t0 ))s] $pol process $p: exit $?"
  done
done
python3 bench/stability/short.py "$OUT/short" | tee "$OUT/short.txt"
tar -C "$OUT" -czf "$OUT/short.tar.gz" short
