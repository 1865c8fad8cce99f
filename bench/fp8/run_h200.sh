#!/usr/bin/env bash
# kport's fp8 gemm on one H200 (sm_90a) against cuBLASLt, in one call: builds
# kport-harness-sm_90a from kernels/ with only the gemm_fp8 variants, checks every gemm_fp8
# case of the check grid (both fp8 formats, the three scaling modes, odd M and N, K refused
# by block128 and by every mode) plus odd shapes outside the grid, then every instance's
# one-element cases (m=1,n=1,k=128) under KPORT_FP8_SEEDS seeds (40), runs the GPU test of the
# block scales of B column by column (when the harness is built here), times the e4m3 instances
# at 4096x7168x16384, 4096x4096x7168 and 64x7168x16384 in each scaling mode with `bench`,
# then the peer, torch._scaled_mm (cuBLASLt), at the same shapes in the same run
# (bench/fp8/peer.py), and prints the table (bench/fp8/table.py). $OUT receives table.txt, seeds.txt and
# fp8-run.tar.gz (every report, log and the GPU's state; the work folder is $W).
#   bash bench/fp8/run_h200.sh          (OUT defaults to build/fp8-out; KPORT_FP8_HARNESS, below)
# About 2-3 minutes on an H200 with the 15 instances (19 with the experiments; KPORT_FP8_FILTER
# narrows them); each step has its own time limit.
set -u
cd "$(dirname "$0")/../.."
source bench/gpu_run.sh
gpu_run_start fp8 table.txt check.json bench.json peer.json seeds.txt

B=build/h-fp8
H=$B/bin/kport-harness-sm_90a
# KPORT_FP8_HARNESS: a harness already built from this tree (as on the development machine),
# used when it runs here; otherwise, or when it does not, the harness is built.
if [[ -n ${KPORT_FP8_HARNESS:-} ]] && "$KPORT_FP8_HARNESS" --version >/dev/null 2>&1; then
  H=$KPORT_FP8_HARNESS
  stamp "harness given: $($H --version)"
else
  # The experimental instances too (KPORT_KERNEL_EXPERIMENTS; kernels/gemm_fp8/wgmma_tma/NOTES.md
  # "Open"), timed beside the library's; KPORT_FP8_EXPERIMENTS=0 leaves them out.
  gpu_run_build_harness $B 200 gemm_fp8.wgmma_tma \
    "-DKPORT_KERNEL_EXPERIMENTS=$([[ ${KPORT_FP8_EXPERIMENTS:-1} == 0 ]] && echo OFF || echo ON)"
  stamp "harness built: $($H --version)"
fi
$H list --filter gemm_fp8 >"$W/list.json"

# Correctness: the check grid, then shapes outside it (odd M, odd N, a K that block128 refuses,
# a K that every mode refuses). Exit 1 means a case failed; the table lists it.
timeout 200 $H check --all --filter gemm_fp8 --dtype all --seed 7 --timeout-s 10 >"$W/check.json" 2>"$W/check.err"
stamp "check grid: exit $?"
cases=()
# Every gemm_fp8 instance the harness lists (KPORT_FP8_FILTER, a Python regular expression
# searched in the name, narrows them: "256x128|s6_sf" is the tall tiles and the 128x128 experiment).
mapfile -t instances < <(python3 -c '
import json, re, sys
for v in json.load(open(sys.argv[1]))["variants"]:
    for i in v.get("instances", []):
        if i.get("family") == "gemm_fp8" and re.search(sys.argv[2], i["name"]):
            print(i["name"])' "$W/list.json" "${KPORT_FP8_FILTER:-gemm_fp8}")
stamp "${#instances[@]} instances"
# m=130,n=448,k=384: tiles of 160, 176 and 192 columns that straddle 128-row scale blocks of B,
# with block scales (K a multiple of 128). Which block's scale each column takes is pinned by the
# GPU test below, not here (the harness's B scales barely differ between blocks). scale=3 (the
# power-of-two block scales Blackwell takes as UE8M0) runs the promoting instances' block128
# code on its fp32 copy: checked here, not timed again below.
for inst in "${instances[@]}"; do
  for shape in m=77,n=1001,k=256 m=4095,n=7167,k=2048 m=513,n=3,k=4096 m=200,n=384,k=400 m=64,n=64,k=24 \
    m=130,n=448,k=384; do
    for scale in 0 1 2 3; do cases+=(--case "$inst:e4m3:$shape,scale=$scale"); done
  done
  cases+=(--case "$inst:e5m2:m=1999,n=1537,k=1152,scale=2")
  cases+=(--case "$inst:e5m2:m=1999,n=1537,k=1152,scale=3")
done
timeout 90 $H check "${cases[@]}" --seed 11 --timeout-s 10 >"$W/check_extra.json" 2>"$W/check_extra.err"
stamp "check outside the grid: exit $?"

# One output element, K = 128, every instance, format and scaling mode, under KPORT_FP8_SEEDS
# seeds (40): a sum of 128 products that may cancel far below them, which the tolerance judges
# against a floor of their size (kernels/harness/tolerance.h). seeds.txt: per seed the cases
# that failed.
one=()
for inst in "${instances[@]}"; do
  for fmt in e4m3 e5m2; do for scale in 0 1 2 3; do one+=(--case "$inst:$fmt:m=1,n=1,k=128,scale=$scale"); done; done
done
: >"$W/seeds.txt"
for seed in $(seq 1 "${KPORT_FP8_SEEDS:-40}"); do
  timeout 30 $H check "${one[@]}" --seed "$seed" --timeout-s 10 >"$W/seed.json" 2>/dev/null
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
judged = [x for x in r.get("results", []) if x.get("verdict") in ("passed", "failed")]
bad = [x["instance"] + ":" + x["dtype"] + ":" + x["shape_text"] for x in judged if x["verdict"] == "failed"]
print(sys.argv[2], len(judged), len(bad), " ".join(bad))' "$W/seed.json" "$seed" >>"$W/seeds.txt" 2>&1
done
stamp "one-element cases under ${KPORT_FP8_SEEDS:-40} seeds: $(awk '{n += $2; f += $3} END {print n " checked, " f " failed"}' "$W/seeds.txt")"

# Block scales of B column by column (tests/gpu/gemm_fp8_block_scales_gpu_test.cpp): the
# harness's inputs give nearly every 128x128 block of B the same scale, so `check` cannot see
# a column scaled by its neighbour block's sb. Built in the harness's build (only when it was
# built here) with the tests switched on; without GoogleTest the step is skipped, said so, and
# the build is switched back.
if [[ -f $B/build.ninja && $H == "$B"/* ]]; then
  if cmake -S kernels -B $B -DKPORT_BUILD_TESTS=ON >"$W/gtest_configure.log" 2>&1; then
    if timeout 120 cmake --build $B --target kernels_gemm_fp8_block_scales_gpu_test \
      kernels_harness_fp8_ue8m0_gpu_test >"$W/gtest_build.log" 2>&1; then
      timeout 90 $B/tests/kernels_gemm_fp8_block_scales_gpu_test >"$W/block_scales_test.log" 2>&1
      stamp "block-scale test: exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$W/block_scales_test.log" | head -3 | tr '\n' ' '))"
      # The harness's scale=3 inputs: power-of-two scales and the UE8M0 bytes Blackwell reads.
      timeout 60 $B/tests/kernels_harness_fp8_ue8m0_gpu_test >"$W/ue8m0_inputs_test.log" 2>&1
      stamp "UE8M0 input test: exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$W/ue8m0_inputs_test.log" | head -3 | tr '\n' ' '))"
    else
      stamp "block-scale test: build failed (gtest_build.log)"
    fi
  else
    stamp "block-scale test: not built (configure with KPORT_BUILD_TESTS=ON failed, see gtest_configure.log)"
    cmake -S kernels -B $B -DKPORT_BUILD_TESTS=OFF >>"$W/gtest_configure.log" 2>&1
  fi
fi

# Speed: e4m3, every instance, the three shapes x three scaling modes in one process.
cases=()
for shape in m=4096,n=7168,k=16384 m=4096,n=4096,k=7168 m=64,n=7168,k=16384; do
  for scale in 0 1 2; do
    for inst in "${instances[@]}"; do
      cases+=(--case "$inst:e4m3:$shape,scale=$scale")
    done
  done
done
# About a second a case (400 ms cap, warm-ups, the L2 flush between samples).
timeout $((40 + ${#cases[@]})) $H bench "${cases[@]}" --seed 3 --time-cap-ms 400 --warmup-ms 400 --later-warmup-ms 50 --max-rse 0.005 \
  --max-duty 0.5 --timeout-s 10 >"$W/bench.json" 2>"$W/bench.err"
stamp "bench: exit $?"

PYTHONUNBUFFERED=1 timeout 120 python3 bench/fp8/peer.py --out "$W/peer.json" >"$W/peer.log" 2>&1
stamp "peer: exit $?"
tail -3 "$W/peer.log"
python3 bench/fp8/table.py --check "$W/check.json" --check "$W/check_extra.json" --bench "$W/bench.json" \
  --peer "$W/peer.json" | tee "$W/table.txt"
stamp "done"
