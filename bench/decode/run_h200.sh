#!/usr/bin/env bash
# kport's bf16 gemm at decode sizes (M <= 8) and skinny M (16, 32, 64) on one H200, in one
# call: builds kport-harness-sm_90a with the gemm variants only, checks the decode variants
# (gemm.gemv and every gemm.decode_mma instance, 8-row and 16/32/64-row) on the check grid and
# on odd shapes outside it (every M from 1 to 8 at n=4104, k=4100; every M from 9 to 64 at
# n=1032, k=1096 and k=1100, N ending inside a column segment, K not a multiple of the K tile
# nor of A's 256-row window; split K at 16/32/64 rows; cases each must refuse: m above an
# instance's rows, m=65, n=4100; in bf16 and fp16, and two fp32 cases, which gemm.gemv takes
# and gemm.decode_mma refuses), then benches every gemm instance at M = 1, 4, 8, 16, 32, 64
# on the LLM projections (cublasGemmEx timed in the same process on the same buffers) and
# prints the table (table.py): per shape the best kport instance, gemm.gemv and the best
# gemm.decode_mma against cuBLAS. $OUT receives table.txt and decode-run.tar.gz.
#   bash bench/decode/run_h200.sh          (OUT defaults to build/decode-out)
# The rows from 9 to 64 outside the grid are 14 of them, each side of the 16- and 32-row
# instances' bounds and between; KPORT_DECODE_ALL_ROWS=1 checks every one and every case in
# fp32 too (about three times the cases: more than one device call holds with the rest).
set -u
cd "$(dirname "$0")/../.."
source bench/gpu_run.sh
gpu_run_start decode
B=build/h-decode
H=$B/bin/kport-harness-sm_90a
gpu_run_build_harness $B 240 "gemm.simt;gemm.mma_sync;gemm.wgmma_tma;gemm.gemv;gemm.decode_mma"
stamp "harness built"
grep -i "spill" "$W/build.log" | grep "gemv_kernel\|decode_mma_kernel" | sort -u | head -8

: >"$W/check.json"
for f in gemm.gemv gemm.decode_mma; do
  timeout 400 $H check --all --filter $f --dtype all --seed 7 --timeout-s 30 >>"$W/check.json" 2>>"$W/check.err"
  stamp "check grid, $f: exit $?"
  echo >>"$W/check.json"
done
# The decode instances: every one the harness lists (gemm.decode_mma's tunings included),
# on the same odd shapes; m above an instance's rows (9 for gemm.gemv and the 8-row
# gemm.decode_mma, 17/33/65 for the others), n=4100 and fp32 (gemm.decode_mma) must be refused.
mapfile -t decode < <($H list --filter gemm. | python3 -c '
import json, sys
for v in json.load(sys.stdin).get("variants", []):
    if v["variant"] in ("gemm.gemv", "gemm.decode_mma") and v["status"] == "built":
        for i in v["instances"]:
            print(i["name"])')
cases=()
rows=(9 12 15 16 17 24 31 32 33 40 48 57 63 64)
dtypes=(bf16 fp16)
if [[ ${KPORT_DECODE_ALL_ROWS:-0} == 1 ]]; then
  mapfile -t rows < <(seq 9 64)
  dtypes+=(fp32)
fi
for inst in "${decode[@]}"; do
  if [[ ${KPORT_DECODE_ALL_ROWS:-0} != 1 ]]; then
    for s in m=4,n=4104,k=4100 m=1,n=128256,k=4096; do cases+=(--case "$inst:fp32:$s"); done
  fi
  for dt in "${dtypes[@]}"; do
    for m in 1 2 3 4 5 6 7 8; do cases+=(--case "$inst:$dt:m=$m,n=4104,k=4100"); done
    for s in m=8,n=8,k=1 m=1,n=128256,k=4096 m=5,n=2056,k=65 m=2,n=14336,k=14336 m=3,n=512,k=8192 \
      m=8,n=4096,k=4096 m=9,n=4096,k=4096 m=4,n=4100,k=4096; do
      cases+=(--case "$inst:$dt:$s")
    done
    # Rows 9 to 64: N ending 8 columns into a segment, K a multiple of 8 (cp.async windows) and
    # not (plain copies), neither a multiple of the 256-row window; then the LLM-sized cases
    # that split K over the grid, tiny K, and m=65 (refused by every instance).
    for m in "${rows[@]}"; do
      cases+=(--case "$inst:$dt:m=$m,n=1032,k=1096")
      ((m % 4 == 1)) && cases+=(--case "$inst:$dt:m=$m,n=1032,k=1100")
    done
    for s in m=16,n=4096,k=14336 m=13,n=14336,k=4100 m=32,n=4096,k=4096 m=29,n=2056,k=8200 \
      m=64,n=4096,k=14336 m=57,n=14336,k=4096 m=64,n=8,k=1 m=17,n=264,k=65 m=40,n=128256,k=4096 \
      m=64,n=4104,k=4100 m=65,n=4096,k=4096; do
      cases+=(--case "$inst:$dt:$s")
    done
  done
done
timeout 540 $H check "${cases[@]}" --seed 11 --timeout-s 30 >"$W/check-outside.json" 2>"$W/check-outside.err"
stamp "check outside the grid (${#decode[@]} instances): exit $?"

shapes=()
for m in 1 4 8 16 32 64; do
  for nk in 4096,4096 4096,14336 14336,4096 28672,8192 8192,28672 128256,4096; do
    shapes+=("m=$m,n=${nk%,*},k=${nk#*,}")
  done
done
: >"$W/bench.jsonl"
for sh in "${shapes[@]}"; do
  timeout 60 $H bench --all --filter gemm. --dtype bf16 --shape "$sh" --time-cap-ms 100 --timeout-s 30 \
    >>"$W/bench.jsonl" 2>>"$W/bench.err"
  echo >>"$W/bench.jsonl"
done
stamp "bench: done"
python3 bench/decode/table.py "$W" | tee "$W/table.txt"
