#!/usr/bin/env bash
# kport's grouped gemm on one H200 (sm_90a), in one call: builds kport-harness-sm_90a from
# kernels/ with only the grouped variants (grouped_gemm, grouped_gemm_fp8), gemm.wgmma_tma and
# gemm_fp8.wgmma_tma (the dense gemms of the same tiles, for the same total work).
# bf16 (grouped_gemm): checks every case of the check grid, then the target shape
# g=4,m=8192,n=4096,k=7168 and odd shapes outside the grid, runs
# tests/gpu/grouped_gemm_masked_gpu_test.cpp (the masked layout, counts changed on the device
# under a captured graph), benches the wgmma instances on the bench grid (cublasGemmStridedBatchedEx
# in the same process; the masked decode shapes without a baseline), the dense gemm at
# m=32768,n=4096,k=7168, and the peer torch._grouped_mm at the contiguous shapes (peer.py).
# fp8 (grouped_gemm_fp8): checks every case of its check grid in e4m3 and e5m2, runs
# tests/gpu/grouped_gemm_fp8_groups_gpu_test.cpp (exact sums, every group's own scales, the masked
# layout too), benches its bench grid (e4m3, the masked decode shapes among it; no in-process
# baseline), then per scale mode (0 tensor, 1 row, 2 block128)
# one process timing the grouped fp8 instances at the target shape and the dense gemm_fp8 of
# the same tiles at m = 4*8192 = 32768 (the same work), and the fastest of each against the other.
# Prints the table (table.py). $OUT receives table.txt and grouped-run.tar.gz.
#   bash bench/grouped/run_h200.sh                (OUT defaults to build/grouped-out)
#   PARTS=fp8 bash bench/grouped/run_h200.sh      (only the fp8 part; PARTS=bf16: only bf16)
set -u
cd "$(dirname "$0")/../.."
PARTS=${PARTS:-bf16,fp8}
source bench/gpu_run.sh
gpu_run_start grouped table.txt check.json check-outside.json bench.json peer.json check-fp8.json bench-fp8.json \
  bench-fp8-target-0.json bench-fp8-target-1.json bench-fp8-target-2.json masked_test.log groups_test.log

B=build/h-grouped
H=$B/bin/kport-harness-sm_90a
# The variants' experimental instances too (KPORT_KERNEL_EXPERIMENTS; each variant's NOTES.md).
gpu_run_build_harness $B 420 "grouped_gemm.simt;grouped_gemm.wgmma_tma;grouped_gemm_fp8.wgmma_tma;gemm.wgmma_tma;gemm_fp8.wgmma_tma" \
  -DKPORT_KERNEL_EXPERIMENTS=ON
stamp "harness built: $($H --version)"
$H list --filter grouped_gemm >"$W/list.json"
has_part() { [[ ",$PARTS," == *",$1,"* ]]; }
# A GPU test of tests/gpu, built in the harness's build with the tests switched on; without
# GoogleTest the step is skipped, said so, and the tests switched back off.
gpu_test() {
  local target=$1 log=$2
  if cmake -S kernels -B $B -DKPORT_BUILD_TESTS=ON >>"$W/gtest_configure.log" 2>&1; then
    if timeout 150 cmake --build $B --target "$target" >>"$W/gtest_build.log" 2>&1; then
      timeout 90 $B/tests/$target >"$W/$log" 2>&1
      stamp "$target: exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$W/$log" | head -3 | tr '\n' ' '))"
    else
      stamp "$target: build failed (gtest_build.log)"
    fi
  else
    stamp "$target: not built (configure with KPORT_BUILD_TESTS=ON failed, see gtest_configure.log)"
    cmake -S kernels -B $B -DKPORT_BUILD_TESTS=OFF >>"$W/gtest_configure.log" 2>&1
  fi
}

if has_part bf16; then
  # 1. The check grid, every dtype (the wgmma instances take bf16 and refuse the rest); the filter's
  #    dot leaves grouped_gemm_fp8 to part 4.
  timeout 240 $H check --all --filter grouped_gemm. --dtype all --seed 7 --timeout-s 30 >"$W/check.json" 2>"$W/check.err"
  stamp "check grid: exit $?"
  # 2. Outside the grid: several groups with K not a multiple of 64 (the last K block of each
  #    group must read zeros, not the next group's rows), N not a multiple of the tile, many
  #    small groups, and the target shape (cuBLAS pedantic reference); in the masked layout, 64
  #    experts of a decode step and 16 groups of 96 rows.
  cases=()
  for inst in grouped_gemm.wgmma_tma.128x256x64_s4 grouped_gemm.wgmma_tma.128x128x64_s6; do
    for s in g=3,m=256,n=264,k=520 g=2,m=384,n=200,k=72 g=7,m=128,n=1000,k=4104 g=16,m=128,n=512,k=256 \
             g=2,m=1280,n=2056,k=3000 g=4,m=8192,n=4096,k=7168 g=64,m=128,n=2048,k=7168,valid=8 \
             g=16,m=96,n=512,k=264,valid=40; do
      cases+=(--case "$inst:bf16:$s")
    done
  done
  timeout 240 $H check "${cases[@]}" --seed 11 --timeout-s 60 >"$W/check-outside.json" 2>"$W/check-outside.err"
  stamp "check outside the grid: exit $?"
  gpu_test kernels_grouped_gemm_masked_gpu_test masked_test.log

  # 3. Timing: the bench grid (with cuBLAS's strided batch in the same process), then the dense
  #    gemm of the same tile at the same total work as the target.
  timeout 300 $H bench --all --filter 'grouped_gemm.wgmma_tma' --dtype bf16 --time-cap-ms 400 --timeout-s 60 \
    >"$W/bench.json" 2>"$W/bench.err"
  stamp "bench grid: exit $?"
  timeout 120 $H bench --case gemm.wgmma_tma.128x256x64_s4:bf16:m=32768,n=4096,k=7168 \
    --case gemm.wgmma_tma.128x128x64_s6:bf16:m=32768,n=4096,k=7168 --time-cap-ms 400 --timeout-s 60 \
    >"$W/bench-dense.json" 2>"$W/bench-dense.err"
  stamp "dense gemm at the same work: exit $?"
  shapes=$(python3 -c '
import json, sys
seen = []
for r in json.load(open(sys.argv[1])).get("results", []):
    s = r.get("shape", {})
    t = "%dx%dx%dx%d" % (s["g"], s["m"], s["n"], s["k"]) if "g" in s and "valid" not in s else None
    if t and t not in seen: seen.append(t)
print(",".join(seen) or "4x8192x4096x7168")' "$W/bench.json" 2>/dev/null || echo 4x8192x4096x7168)
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/grouped/peer.py --out "$W/peer.json" --shapes "$shapes" --cap-ms 400 \
    2>"$W/peer.err" | tail -30
  stamp "peer: exit ${PIPESTATUS[0]}"
fi

if has_part fp8; then
  # 4. fp8: the check grid in both formats (several groups on the CPU reference, each group's B
  #    at its own power-of-two gain, so a tile that reads another group's B or scales fails;
  #    K not a multiple of 128 refused by block128, not of 16 by every mode; the bench shapes
  #    on the cuBLAS strided batched fp32 reference).
  timeout 300 $H check --all --filter grouped_gemm_fp8 --dtype all --seed 7 --timeout-s 60 \
    >"$W/check-fp8.json" 2>"$W/check-fp8.err"
  stamp "fp8 check grid: exit $?"
  # Each group's own B and scales with exact sums, every instance, mode and format, in the
  #    contiguous and the masked layout (tests/gpu/grouped_gemm_fp8_groups_gpu_test.cpp).
  gpu_test kernels_grouped_gemm_fp8_gpu_test groups_test.log
  # 5. fp8 timing: the bench grid (e4m3), then per scale mode the target shape of both grouped
  #    instances and the dense gemm_fp8 of the same tiles at the same total work, in one process.
  timeout 240 $H bench --all --filter grouped_gemm_fp8 --dtype e4m3 --time-cap-ms 400 --timeout-s 60 \
    >"$W/bench-fp8.json" 2>"$W/bench-fp8.err"
  stamp "fp8 bench grid: exit $?"
  for scale in 0 1 2; do
    fcases=()
    for tile in 128x128x128_s6 128x160x128_s6 256x128x128_s4_sf_sd 128x256x128_s4_fastacc; do
      fcases+=(--case "grouped_gemm_fp8.wgmma_tma.$tile:e4m3:g=4,m=8192,n=4096,k=7168,scale=$scale")
      fcases+=(--case "gemm_fp8.wgmma_tma.$tile:e4m3:m=32768,n=4096,k=7168,scale=$scale")
    done
    timeout 150 $H bench "${fcases[@]}" --time-cap-ms 600 --timeout-s 60 \
      >"$W/bench-fp8-target-$scale.json" 2>"$W/bench-fp8-target-$scale.err"
    stamp "fp8 target, scale=$scale, grouped and dense in one process: exit $?"
  done
fi
python3 bench/grouped/table.py "$W" | tee "$W/table.txt"
