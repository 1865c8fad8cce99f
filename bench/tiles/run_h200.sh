#!/usr/bin/env bash
# gemm.wgmma_tma's tiles against wave quantization (kernels/gemm/wgmma_tma/NOTES.md "Wave
# quantization") on one H200 or H100 (sm_90a), in one call: builds kport-harness-sm_90a with
# gemm.wgmma_tma only and its experiments (KPORT_KERNEL_EXPERIMENTS, if it keeps any), checks the
# tiles under study (TILES, default the 128x64 and 128x192 ones) on the check grid and on shapes
# outside it (M, N and K not of the tile, K of one block, N that must be refused), in bf16 and
# fp16, then benches every gemm.wgmma_tma instance in bf16 on the squares and the mid-sized
# shapes where a tile count can leave part of a wave of the 132 SMs empty (cublasGemmEx timed
# in the same process on the same buffers), and prints bench/tiles/table.py's table, the tiles
# under study beside the fastest of the others. $OUT receives table.txt and tiles-run.tar.gz.
#   bash bench/tiles/run_h200.sh          (OUT defaults to build/tiles-out)
#   TILES="gemm.wgmma_tma.A gemm.wgmma_tma.B" bash bench/tiles/run_h200.sh
#   TILES=gemm.wgmma_tma.128x256x64_s4_ca8 bash bench/tiles/run_h200.sh   (rows of 8-byte pieces, 2500^3)
set -u
cd "$(dirname "$0")/../.."
source bench/gpu_run.sh
gpu_run_start tiles
B=build/h-tiles
H=$B/bin/kport-harness-sm_90a
gpu_run_build_harness $B 240 gemm.wgmma_tma -DKPORT_KERNEL_EXPERIMENTS=ON -DKPORT_PTXAS_VERBOSE=ON
stamp "harness built"
grep -A2 "Compiling entry.*gemm_wgmma_tma_kernel" "$W/build.log" | grep -c "0 bytes spill stores" |
  xargs echo "gemm.wgmma_tma kernels without spills:"

# The tiles under study, each asked of the harness first so a build without one stops here.
read -r -a exp <<<"${TILES:-gemm.wgmma_tma.128x64x64_s8 gemm.wgmma_tma.128x192x64_s4}"
for inst in "${exp[@]}"; do
  $H list --filter "$inst" | grep -q "\"$inst\"" || { echo "$inst is not in the harness"; exit 2; }
done
stamp "tiles under study: ${exp[*]}"

: >"$W/check.json"
for inst in "${exp[@]}"; do
  timeout 150 $H check --all --filter "$inst" --dtype all --seed 7 --timeout-s 30 >>"$W/check.json" 2>>"$W/check.err"
  stamp "check grid of $inst: exit $?"
  echo >>"$W/check.json"
done
cases=()
for inst in "${exp[@]}"; do
  for dt in bf16 fp16; do
    for s in m=1,n=64,k=64 m=127,n=191,k=63 m=129,n=193,k=65 m=1000,n=1000,k=1000 m=1024,n=1024,k=1024 \
      m=3072,n=3072,k=3072 m=256,n=4096,k=4096 m=5000,n=5000,k=5000 m=333,n=1096,k=8 m=200,n=4104,k=4096 \
      m=64,n=4100,k=4096 m=2500,n=2500,k=2500 m=129,n=196,k=68 m=1,n=2500,k=4 m=300,n=4100,k=2500; do
      cases+=(--case "$inst:$dt:$s")
    done
  done
done
timeout 240 $H check "${cases[@]}" --seed 11 --timeout-s 60 >"$W/check-outside.json" 2>"$W/check-outside.err"
stamp "check outside the grid: exit $?"

: >"$W/bench.jsonl"
for s in m=1000,n=1000,k=1000 m=1024,n=1024,k=1024 m=2048,n=2048,k=2048 m=3072,n=3072,k=3072 \
  m=4096,n=4096,k=4096 m=5000,n=5000,k=5000 m=2500,n=2500,k=2500 m=4096,n=4100,k=4100 m=6144,n=6144,k=6144 m=64,n=4096,k=4096 m=128,n=4096,k=4096 \
  m=128,n=4096,k=14336 m=128,n=8192,k=8192 \
  m=256,n=4096,k=4096 m=256,n=4096,k=14336 m=256,n=14336,k=4096 m=1000,n=14336,k=4096 \
  m=1024,n=4096,k=14336 m=1024,n=14336,k=4096 m=3000,n=4096,k=4096 m=4096,n=4096,k=512 m=8192,n=8192,k=1024; do
  timeout 90 $H bench --all --filter gemm.wgmma_tma --dtype bf16 --shape "$s" --time-cap-ms 150 \
    --timeout-s 40 >>"$W/bench.jsonl" 2>>"$W/bench.err"
  echo >>"$W/bench.jsonl"
done
stamp "bench: done"
python3 bench/tiles/table.py "$W" "${exp[@]}" | tee "$W/table.txt"
