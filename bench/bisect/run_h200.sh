#!/usr/bin/env bash
# One bisection over 16 real commits of kport's kernels on a machine with an NVIDIA GPU:
# builds a bare repository (c0: the packaged tree; c1..c16: 15 harmless edits of kernel
# sources and notes, and one seeded commit that lowers the pipeline stages of
# gemm.wgmma_tma.128x128x64_s6 from 6 to 4, name kept), starts kport-coordinator, a build
# runner and a GPU runner as bench/pipeline/run_h200.sh does, pushes c0 and then c16
# (before = c0) through deploy/git-hooks/post-receive, and waits until kport confirmed the
# slowdown (A/B/A/B re-measure) and bisected it by itself. Prints and writes
# $OUT/report.txt: the verdict's reasons, the bisection's first bad commit against the
# seeded one (a PASS or FAIL line), the effect +- its uncertainty, the cause, the probes and
# the wall time of each stage; the raw answers are kept as JSON under $OUT.
#
#   bash bench/pipeline/package.sh build/ci            (here: binaries and var/h200pkg/repo.git)
#   OUT=/path bash bench/bisect/run_h200.sh            (on the GPU machine, var/h200pkg carried)
#   KPORT_BISECT_DRY=1 bash bench/bisect/run_h200.sh   (no GPU: everything up to the GPU stage)
#
# The pipelines are narrowed to what the bisection needs: each validation is a manual
# pipeline queued just before its push (payload: build only gemm.wgmma_tma, check and time
# only that instance on KPORT_BISECT_CASES, bf16), so the push records the commits and
# their parents and queues nothing more (a pushed commit that has a pipeline gets none).
# c0 is validated KPORT_BISECT_AA times (the A/A history a series needs before a verdict
# judges it: 3 degrees of freedom, so 4 figures of one harness).
#
# Environment (optional): OUT (default build/bisect-out), KPORT_SEEDED (7: the seeded
# commit, 1..16), KPORT_BISECT_TIMEOUT (500 s for the whole run; exit 2 past it),
# KPORT_BISECT_DRY (1: no GPU runner; stop once the builds of c0 and c16 succeeded and
# their checks wait for a GPU), KPORT_BISECT_AA (4), KPORT_BISECT_INSTANCE
# (gemm.wgmma_tma.128x128x64_s6), KPORT_BISECT_CASES (bf16 gemm shapes separated by ';'),
# KPORT_TARGET (sm_90a), KPORT_ARCH (9.0), and the GPU runner's sampling knobs of
# bench/pipeline/run_h200.sh (KPORT_BENCH_CAP_MS 60, KPORT_BENCH_WARMUP_MS 50,
# KPORT_BENCH_MIN_SAMPLES 10, KPORT_BENCH_MAX_RSE 0.003, KPORT_BENCH_MAX_DUTY 0.5,
# KPORT_BENCH_THROTTLE 0.97, KPORT_BENCH_ROUNDS 2). The first three are shorter than the
# pipeline's: the re-measure times the instance's whole grid (about 130 cases) in 8
# interleaved processes, which at 300 ms a case takes longer than the whole run may.
# Exit status: 0 the seeded commit found (dry: every dry check passed), 1 not found or a
# step failed, 2 timed out.
set -u
t_start=$(date +%s.%N)
cd "$(dirname "$0")/../.."
root=$PWD
OUT=${OUT:-$root/build/bisect-out}
mkdir -p "$OUT"
dry=${KPORT_BISECT_DRY:-0}
[[ $dry == 0 ]] && dry=""
seeded=${KPORT_SEEDED:-7}
limit=${KPORT_BISECT_TIMEOUT:-500}
target=${KPORT_TARGET:-sm_90a}
if ! [[ $seeded =~ ^[0-9]+$ ]] || ((seeded < 1 || seeded > 16)); then
  echo "KPORT_SEEDED must be 1..16, not '$seeded'"
  exit 1
fi
work=$(mktemp -d /tmp/kport-bisect.XXXXXX)
pkg=$root/var/h200pkg
if [[ -x $pkg/bin/kport-coordinator ]]; then
  loader=$(ls /lib64/ld-linux-x86-64.so.2 2>/dev/null || ls /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)
  svc() { local b=$1; shift; "$loader" --library-path "$pkg/lib" "$pkg/bin/$b" "$@"; }
  base_repo=$pkg/repo.git
  echo "binaries and repository from var/h200pkg (source commit $(cat "$pkg/source-commit"))"
else
  cmake --preset release >/dev/null && cmake --build --preset release --target kport-coordinator kport-runner || exit 1
  svc() { local b=$1; shift; "$root/build/release/bin/$b" "$@"; }
  base_repo=""
fi
if [[ -z $dry ]]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv |
    tee "$OUT/gpu.txt"
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)

# ---- The repository: c0 and 16 commits on top of it --------------------------------
src=$work/src
g() { git -C "$src" -c user.name=kport-bench -c user.email=kport-bench@localhost "$@"; }
if [[ -n $base_repo ]]; then
  git clone -q --origin package "$base_repo" "$src" || exit 1
  g checkout -q -B main
  g remote remove package  # the pushes go to the repository made below, never back to the package
else
  mkdir -p "$src" && git archive HEAD | tar -x -C "$src"
  g init -q -b main && g add -A && g commit -q -m "kport tree of $(git rev-parse --short HEAD)" || exit 1
fi
c0=$(g rev-parse HEAD)
wgmma=kernels/gemm/wgmma_tma/gemm_wgmma_tma_sm90.cu
before_line='using Cfg128x128 = Config<128, 128, 64, 6, 1>;'
after_line='using Cfg128x128 = Config<128, 128, 64, 4, 1>;'
grep -qxF "$before_line" "$src/$wgmma" || { echo "$wgmma has no line '$before_line'"; exit 1; }
# Harmless edits: files the narrowed build (gemm.wgmma_tma and the harness) does not
# compile, so they change nothing the probes build or time.
harmless=(kernels/README.md kernels/gemm/simt/gemm_simt.cu kernels/gemm/mma_sync/gemm_mma_sync_sm80.cu
  kernels/gemm/tcgen05/gemm_tcgen05_sm100.cu kernels/attention/simt/attention_simt.cu
  kernels/attention/mma_sync/attention_mma_sync_sm80.cu kernels/attention/wgmma_tma/attention_wgmma_tma_sm90_d64.cu
  kernels/rmsnorm/simt/rmsnorm_simt.cu kernels/rmsnorm/vec16/rmsnorm_vec16.cu kernels/softmax/simt/softmax_simt.cu
  kernels/softmax/vec16/softmax_vec16.cu kernels/gemm/wgmma_tma/NOTES.md kernels/gemm/mma_sync/NOTES.md
  kernels/gemm/tcgen05/NOTES.md kernels/README.md)
commits=("$c0")
h=0
for ((i = 1; i <= 16; i++)); do
  if ((i == seeded)); then
    sed -i "s/^$before_line\$/$after_line/" "$src/$wgmma"  # no character of either line is special to sed
    grep -qxF "$after_line" "$src/$wgmma" || { echo "the seeded edit did not apply"; exit 1; }
    msg="gemm.wgmma_tma: 128x128x64 with 4 pipeline stages instead of 6 (less shared memory per block)"
  else
    f=${harmless[h]}
    h=$((h + 1))
    case $f in
      *.md) printf '\nReviewed for the sm_90a port (change %d).\n' "$i" >>"$src/$f" ;;
      *) printf '// Reviewed for the sm_90a port (change %d).\n' "$i" >>"$src/$f" ;;
    esac
    msg="$(basename "$(dirname "$f")")/$(basename "$f"): review note $i"
  fi
  g add -A && g commit -q -m "$msg" || exit 1
  commits+=("$(g rev-parse HEAD)")
done
printf '%s\n' "${commits[@]}" >"$OUT/commits.txt"
g log --format='%H %s' --first-parent --reverse HEAD >"$OUT/git-log.txt"
count=$(g rev-list --count --first-parent HEAD)
echo "repository: $count commits, c0 $(echo "$c0" | cut -c1-12), seeded c$seeded $(echo "${commits[seeded]}" | cut -c1-12)"

# The bare repository the runners clone and the pushes go to, with the post-receive hook.
origin=$work/origin.git
git init -q --bare "$origin"
# The commits' objects are there before anything is pushed to main (a tag, fetched into it,
# so no hook runs): each validation is queued before its push and must find its commit.
git -C "$origin" fetch -q "$src" "+refs/heads/main:refs/tags/kport-bench-staged" || exit 1
cp "$root/deploy/git-hooks/post-receive" "$origin/hooks/post-receive"
chmod +x "$origin/hooks/post-receive"
secret=hook-$RANDOM$RANDOM$RANDOM

# ---- The stack ------------------------------------------------------------------
pids=()
# Runners first (each finishes its job and deregisters), then the coordinator.
stop() { for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done; }
# Everything the run wrote, packed into $OUT/bisect-run.tar.gz as well: a GPU machine hands
# back a few files, not the report folder.
pack() { tar -C "$OUT" --exclude=bisect-run.tar.gz -czf "$work/bisect-run.tar.gz" . && mv "$work/bisect-run.tar.gz" "$OUT/"; }
trap 'stop; pack' EXIT
admin=admin-$RANDOM$RANDOM
reg=reg-$RANDOM$RANDOM
svc kport-coordinator --listen 127.0.0.1:0 --port-file "$work/port" --db "$work/kport.db" --admin-token "$admin" \
  --registration-token "$reg" --hook-secret "$secret" --lease-seconds 120 --log-level info \
  --families "$root/kernels/kport.json" \
  >"$OUT/coordinator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || { echo "the coordinator did not start"; tail -20 "$OUT/coordinator.log"; exit 1; }
url=http://127.0.0.1:$(cat "$work/port")
echo "coordinator at $url"
git -C "$origin" config kport.url "$url"
git -C "$origin" config kport.secret "$secret"
git -C "$origin" config kport.repo kernels
svc kport-runner --role build --server "$url" --registration-token "$reg" --workdir "$work/build-runner" \
  --catalog "$root/porting/catalog/targets.json" --nvcc "$nvcc" --name builder --claim-wait 5 >"$OUT/build-runner.log" 2>&1 &
pids+=($!)
if [[ -z $dry ]]; then
  svc kport-runner --role gpu --server "$url" --registration-token "$reg" --workdir "$work/gpu-runner" \
    --catalog "$root/porting/catalog/targets.json" --nvcc "$nvcc" --name gpu-host --claim-wait 5 \
    --bench-time-cap-ms "${KPORT_BENCH_CAP_MS:-60}" --bench-warmup-ms "${KPORT_BENCH_WARMUP_MS:-50}" \
    --bench-min-samples "${KPORT_BENCH_MIN_SAMPLES:-10}" --bench-max-rse "${KPORT_BENCH_MAX_RSE:-0.003}" \
    --bench-max-duty "${KPORT_BENCH_MAX_DUTY:-0.5}" --bench-throttle-threshold "${KPORT_BENCH_THROTTLE:-0.97}" \
    --bench-rounds "${KPORT_BENCH_ROUNDS:-2}" \
    >"$OUT/gpu-runner.log" 2>&1 &
  pids+=($!)
fi

deadline=$(python3 -c "print($t_start + $limit)")
python3 "$root/bench/bisect/drive.py" --server "$url" --token "$admin" --origin "$origin" --src "$src" \
  --commits "$OUT/commits.txt" --seeded "$seeded" --target "$target" --arch "${KPORT_ARCH:-9.0}" \
  --aa "${KPORT_BISECT_AA:-4}" --instance "${KPORT_BISECT_INSTANCE:-gemm.wgmma_tma.128x128x64_s6}" \
  ${KPORT_BISECT_CASES:+--cases "$KPORT_BISECT_CASES"} --start "$t_start" --deadline "$deadline" \
  --out "$OUT" ${dry:+--dry}
rc=$?
if [[ -z $dry ]]; then grep -E "warn|error" "$OUT/gpu-runner.log" | tail -20; fi
grep -E '"level":"(warn|error)"|\[(warn|error)\]' "$OUT/coordinator.log" | tail -10
exit $rc
