#!/usr/bin/env bash
# rmsnorm and softmax against a copy of the same bytes on one H200, in one call:
#  1. (KPORT_SWEEP=1) the memory sweep of sweep.cu: load and store cache policies, block
#     sizes and vectors per thread, every variant against cudaMemcpyAsync;
#  2. kport-harness-sm_90a built with the row-wise variants only, `check --all` of both
#     families in every dtype on the check grid, then `bench --all` of every instance on the
#     bench grid's rows in bf16 (the copy timed in the same process) and the table (table.py):
#     per shape the best kport instance against the copy.
# $OUT receives sweep.txt, table.txt and rowwise-run.tar.gz.
#   bash bench/rowwise/run_h200.sh          (OUT defaults to build/rowwise-out)
set -u
cd "$(dirname "$0")/../.."
source bench/gpu_run.sh
gpu_run_start rowwise
if [[ ${KPORT_SWEEP:-0} == 1 ]]; then
  nvcc -O3 -std=c++20 -arch=sm_90a -I kernels bench/rowwise/sweep.cu -o "$W/sweep" && "$W/sweep" 25 >"$OUT/sweep.txt"
  stamp "sweep: exit $?"
fi
B=build/h-rowwise
H=$B/bin/kport-harness-sm_90a
# Experimental instances too, when the row-wise variants keep any (KPORT_KERNEL_EXPERIMENTS;
# rmsnorm's NOTES.md), checked and timed beside the library's; KPORT_ROWWISE_EXPERIMENTS=0
# leaves them out.
gpu_run_build_harness $B 240 "rmsnorm.simt;rmsnorm.vec16;rmsnorm.cluster;softmax.simt;softmax.vec16;softmax.cluster" \
  "-DKPORT_KERNEL_EXPERIMENTS=$([[ ${KPORT_ROWWISE_EXPERIMENTS:-1} == 0 ]] && echo OFF || echo ON)"
stamp "harness built"
: >"$W/check.json"
for fam in rmsnorm softmax; do
  timeout 200 $H check --all --filter $fam. --dtype all --seed 7 --timeout-s 30 >>"$W/check.json" 2>>"$W/check.err"
  echo >>"$W/check.json"
done
# Rows of the cluster instances (rmsnorm/softmax.cluster.*, slices of 2048 or 4096 vectors)
# beyond the grid's: the shortest row they take (32 KB and one vector in bf16), slices of
# unequal length (5001, 8193, 16385 vectors: 2 to 9 CTAs, 9 over the portable 8), rows that
# fill 16 CTAs exactly (262144 columns) and one a vector past what 16 slices of 2048 hold
# (131080 fp32: refused by b256_s32k, 9 CTAs of b512_s64k), a single row, row counts that are
# no multiple of anything, and rows they refuse: whole 16-byte vectors in fp32 only (20004
# columns), an odd length.
for sh in rows=1,cols=16392 rows=999,cols=16400 rows=5,cols=40008 rows=77,cols=65544 rows=3,cols=262144 \
  rows=1,cols=131080 rows=3,cols=20004 rows=2,cols=32771; do
  for fam in rmsnorm softmax; do
    timeout 100 $H check --all --filter $fam. --dtype all --shape "$sh" --seed 7 --timeout-s 30 \
      >>"$W/check.json" 2>>"$W/check.err"
    echo >>"$W/check.json"
  done
done
stamp "check grid: done"
: >"$W/bench.jsonl"
for fam in rmsnorm softmax; do
  for sh in rows=65536,cols=1024 rows=32768,cols=4096 rows=16384,cols=8192 rows=8192,cols=16384 \
    rows=4096,cols=4096 rows=2048,cols=32768 rows=1024,cols=131072 rows=1,cols=131072; do
    timeout 60 $H bench --all --filter $fam. --dtype bf16 --shape "$sh" --time-cap-ms 200 --timeout-s 30 \
      >>"$W/bench.jsonl" 2>>"$W/bench.err"
    echo >>"$W/bench.jsonl"
  done
done
stamp "bench: done"
python3 bench/rowwise/table.py "$W" | tee "$W/table.txt"
