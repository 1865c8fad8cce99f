#!/usr/bin/env bash
# gemm.wgmma_tma's instances for skinny M (kernels/gemm/wgmma_tma/NOTES.md "Skinny M") on one
# H200 (sm_90a), in one call: builds kport-harness-sm_90a with gemm.wgmma_tma and
# gemm.decode_mma only and any experiments they keep (KPORT_KERNEL_EXPERIMENTS), checks the
# skinny-M instances (`_sa`: A's box as tall as M) on the check grid and on shapes outside it
# (every M from 1 to 8, rows either side of 16, 32, 64 and 128, N and K multiples of 8 that
# are not of the tile, K of one to five 64-wide blocks so that a four-way split leaves CTAs
# with no block or uneven shares, and n=4100, which each must refuse), in bf16 and fp16, then
# benches every gemm.wgmma_tma and gemm.decode_mma instance in bf16 at M = 16, 32, 64 and 128
# on the LLM projections (cublasGemmEx timed in the same process on the same buffers) and
# prints bench/decode/table.py's table. $OUT receives table.txt and skinny-run.tar.gz.
#   bash bench/skinny/run_h200.sh          (OUT defaults to build/skinny-out)
# About 3-4 minutes on an H200.
set -u
cd "$(dirname "$0")/../.."
source bench/gpu_run.sh
gpu_run_start skinny
B=build/h-skinny
H=$B/bin/kport-harness-sm_90a
gpu_run_build_harness $B 240 "gemm.wgmma_tma;gemm.decode_mma" -DKPORT_KERNEL_EXPERIMENTS=ON -DKPORT_PTXAS_VERBOSE=ON
stamp "harness built"
grep -A2 "Compiling entry.*gemm_wgmma_tma_kernel" "$W/build.log" | grep -c "0 bytes spill stores" |
  xargs echo "gemm.wgmma_tma kernels without spills:"

mapfile -t exp < <($H list --filter gemm.wgmma_tma | python3 -c '
import json, sys
for v in json.load(sys.stdin).get("variants", []):
    for i in v.get("instances", []):
        if i["name"].endswith("_sa"):
            print(i["name"])')
stamp "${#exp[@]} experimental instances: ${exp[*]}"
((${#exp[@]} > 0)) || { echo "no experimental instance in the harness"; exit 2; }

timeout 200 $H check --all --filter _sa --dtype all --seed 7 --timeout-s 30 >"$W/check.json" 2>"$W/check.err"
stamp "check grid: exit $?"
cases=()
for inst in "${exp[@]}"; do
  for dt in bf16 fp16; do
    for m in 1 2 3 4 5 6 7 8 15 17 31 33 63 64 65 127 129 200; do cases+=(--case "$inst:$dt:m=$m,n=1032,k=1096"); done
    for k in 8 64 72 128 192 200 256 320; do cases+=(--case "$inst:$dt:m=48,n=2056,k=$k"); done
    for s in m=16,n=4096,k=14336 m=64,n=4096,k=14336 m=57,n=14336,k=4096 m=128,n=8192,k=8192 \
      m=40,n=128256,k=4096 m=64,n=8,k=8 m=64,n=4100,k=4096; do
      cases+=(--case "$inst:$dt:$s")
    done
  done
done
timeout 240 $H check "${cases[@]}" --seed 11 --timeout-s 30 >"$W/check-outside.json" 2>"$W/check-outside.err"
stamp "check outside the grid: exit $?"

: >"$W/bench.jsonl"
for m in 16 32 64 128; do
  for nk in 4096,4096 4096,14336 14336,4096 8192,8192 8192,28672 28672,8192; do
    timeout 60 $H bench --all --filter gemm. --dtype bf16 --shape "m=$m,n=${nk%,*},k=${nk#*,}" --time-cap-ms 100 \
      --timeout-s 30 >>"$W/bench.jsonl" 2>>"$W/bench.err"
    echo >>"$W/bench.jsonl"
  done
done
stamp "bench: done"
python3 bench/decode/table.py "$W" | tee "$W/table.txt"
