#!/usr/bin/env bash
# A/A figures of every bench-grid case of the library on one GPU, for bench/regressions/
# report.sh: builds kport-harness-sm_90a from kernels/ and runs every case of `bench --all
# --dtype all`, ordered by problem, in KPORT_PASSES processes back to back (fast rounds:
# 100 ms time cap, RSE 0.3 %, the runner's duty cycle and L2 flush), each report kept as start<S>-pass<P>.json.gz, all of
# them packed into $OUT/start<S>.tar.gz (unpack each start's into one DIR for report.sh). One call
# per machine start (KPORT_START=1, 2, 3 ...); the figures of several starts are compared
# with each other by report.sh.
#
# A start of more processes than one call's time allows is made of calls back to back on
# the same warm machine: KPORT_FIRST_PASS=P numbers this call's passes from P (a second
# call with KPORT_FIRST_PASS=5 runs passes 5..8 of the same start, the harness already
# built), and the tarball packs every report of the start so far.
#
# With KPORT_CHANGE_PAIRS=N (default 6) it then times a real kernel change against the
# unchanged harness, interleaved: the harness is built again with the stage count of two
# wgmma_tma instances lowered (128x128x64: 6 -> 4 stages, 128x256x64: 4 -> 3; names kept,
# as a commit retuning an instance keeps them), and N pairs of processes, unchanged then
# changed, time those instances' bf16 grid (change<S>-<A|B><P>.json.gz).
# KPORT_CHANGE=128x256 makes only the 128x256x64 edit (4 -> 3 stages, 0-2.4 % on most of its
# shapes at 0a6da06) and times that instance's grid with its unchanged 2x1-cluster twin (the
# control): the "about 2 %" change. KPORT_CHANGE=128x128 makes only 128x128x64 6 -> 5 stages
# and times it with the unchanged 128x128x64_s4_k2 (the control).
# KPORT_LATER_WARMUP_MS (default 20, the GPU runner's) shortens the warm-up of every case after a
# process's first, so that eight passes fit one call.
# KPORT_KERNELS_DIR=DIR builds the harness from another copy of kernels/: the kernels of the
# commit the other starts measured, so that a start made after the kernels changed still
# compares the same code (`git archive <commit> kernels cmake CMakeLists.txt tests/kernels
# tests/gpu porting/catalog | tar -x -C var/aa`, then KPORT_KERNELS_DIR=var/aa/kernels).
#   KPORT_START=1 bash bench/regressions/run_h200.sh      (OUT defaults to build/regressions-out)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build/regressions-out}
START=${KPORT_START:-1}
# The reports are written to W and packed into $OUT/start$START.tar.gz at the end, also when
# the run is stopped: a GPU machine hands back a few files, not one per process.
W=${KPORT_WORK:-$PWD/build/regressions-work}
mkdir -p "$W"
pack() { tar -C "$W" -czf "$OUT/start$START.tar.gz" . && echo "packed $(ls "$W" | wc -l) files into $OUT/start$START.tar.gz"; }
trap pack EXIT
trap "exit 143" TERM INT
PASSES=${KPORT_PASSES:-8}
FIRST_PASS=${KPORT_FIRST_PASS:-1}
PAIRS=${KPORT_CHANGE_PAIRS:-6}
BUDGET_S=${KPORT_BUDGET_S:-470}  # no new A/A pass starts after this many seconds
mkdir -p "$OUT"
t0=$(date +%s)
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader \
  | tee -a "$W/start$START-gpu.txt"
KDIR=${KPORT_KERNELS_DIR:-kernels}
B=build/h-kern-sa${KPORT_KERNELS_DIR:+-other}  # a build directory keeps its source
cmake -S "$KDIR" -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DKPORT_CUDA_TARGETS=sm_90a >/dev/null &&
  cmake --build $B >"$W/start$START-build.log" 2>&1 || { echo "harness build failed"; tail -20 "$W/start$START-build.log"; exit 2; }
H=$PWD/build/h-aa-harness
cp $B/bin/kport-harness-sm_90a "$H"
sha256sum "$H" | cut -c1-64 | tee -a "$W/start$START-harness.txt"
echo "[$(( $(date +%s) - t0 ))s] harness built"
SAMPLING=(--time-cap-ms 100 --warmup-ms 200 --later-warmup-ms "${KPORT_LATER_WARMUP_MS:-20}" --min-samples 10 --max-rse 0.003 --max-duty 0.5
  --no-baseline)
HC=
if (( PAIRS > 0 )); then
  SRC=$KDIR/gemm/wgmma_tma/gemm_wgmma_tma_sm90.cu
  cp $SRC "$SRC.orig"
  s256_3='s/^using Cfg128x256 = Config<128, 256, 64, 4, 1>;/using Cfg128x256 = Config<128, 256, 64, 3, 1>;/'
  case ${KPORT_CHANGE:-both} in
    128x256) edits=(-e "$s256_3") CHANGE_FILTER=wgmma_tma.128x256x64_s4 ;;
    128x128)
      edits=(-e 's/^using Cfg128x128 = Config<128, 128, 64, 6, 1>;/using Cfg128x128 = Config<128, 128, 64, 5, 1>;/')
      CHANGE_FILTER=wgmma_tma.128x128x64_s ;;
    *)
      edits=(-e "$s256_3" -e 's/^using Cfg128x128 = Config<128, 128, 64, 6, 1>;/using Cfg128x128 = Config<128, 128, 64, 4, 1>;/')
      CHANGE_FILTER=wgmma_tma.128x ;;
  esac
  sed -i "${edits[@]}" $SRC
  if [[ $(diff "$SRC.orig" $SRC | grep -c '^>') == $((${#edits[@]} / 2)) ]] &&
    cmake --build $B >>"$W/start$START-build.log" 2>&1; then
    HC=$PWD/build/h-change-harness
    cp $B/bin/kport-harness-sm_90a "$HC"
    echo "[$(( $(date +%s) - t0 ))s] changed harness built: $(sha256sum "$HC" | cut -c1-12)"
  else
    echo "the changed harness did not build; no change pairs"
  fi
  mv "$SRC.orig" $SRC
fi
# Every grid case, the competitors of a problem one after the other, as the GPU runner
# orders a round's cases (the harness makes a problem's inputs once for all of them).
mapfile -t CASES < <("$H" bench --all --dtype all --plan | python3 -c '
import json, sys
plan = json.load(sys.stdin)["plan"]
plan.sort(key=lambda c: (c["family"], c["dtype"], c["shape_text"]))
for c in plan:
    print("--case"); print(c["instance"] + ":" + c["dtype"] + ":" + c["shape_text"])')
echo "$(( ${#CASES[@]} / 2 )) cases, ordered by problem"
for p in $(seq "$FIRST_PASS" $((FIRST_PASS + PASSES - 1))); do
  if (( $(date +%s) - t0 > BUDGET_S )); then echo "budget reached before pass $p"; break; fi
  timeout 300 "$H" bench "${CASES[@]}" --seed $((START * 1000 + p)) "${SAMPLING[@]}" \
    2>"$W/start$START-pass$p.err" | gzip >"$W/start$START-pass$p.json.gz"
  echo "[$(( $(date +%s) - t0 ))s] pass $p: exit ${PIPESTATUS[0]}"
done
if [[ -n $HC ]]; then
  for p in $(seq "$PAIRS"); do
    for side in A B; do
      bin=$H; [[ $side == B ]] && bin=$HC
      timeout 120 "$bin" bench --all --filter "$CHANGE_FILTER" --dtype bf16 --seed $((START * 1000 + 500 + p)) \
        "${SAMPLING[@]}" 2>"$W/change$START-$side$p.err" | gzip >"$W/change$START-$side$p.json.gz"
    done
    echo "[$(( $(date +%s) - t0 ))s] change pair $p"
  done
fi
