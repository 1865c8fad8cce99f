#!/usr/bin/env bash
# Build-driver timings for docs/BENCHMARKS.md (issue 4, "Measure"):
#   1. cold build of every variant for one target (empty ccache, empty build tree)
#   2. warm rebuild with nothing changed (ccache hits only; goal <= 10 s)
#   3. one variant's source changed: only that variant recompiles (compiles counted)
#   4. cold build for the CI target set, one target after the other, as one runner would
# Usage: bench/build/run.sh [path/to/kport-runner]
# Env: KPORT_BENCH_TARGET (sm_90a), KPORT_BENCH_CI_TARGETS ("sm_80 sm_90a sm_100a sm_120"),
#      KPORT_BENCH_JOBS (0 = one compile per core), KPORT_BENCH_DIR (a temp dir),
#      KPORT_BENCH_SKIP_CI=1 to leave step 4 out.
# The kernels tree is the committed one (git archive HEAD), built in a private copy with
# a private ccache directory, so the steps do not depend on what else this machine built.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runner=${1:-${KPORT_RUNNER:-$root/build/dev/bin/kport-runner}}
target=${KPORT_BENCH_TARGET:-sm_90a}
ci_targets=${KPORT_BENCH_CI_TARGETS:-"sm_80 sm_90a sm_100a sm_120"}
jobs=${KPORT_BENCH_JOBS:-0}
out=${KPORT_BENCH_DIR:-$(mktemp -d /tmp/kport-bench-build.XXXXXX)}
[ -x "$runner" ] || { echo "run.sh: $runner is not built (cmake --build --preset dev --target kport-runner)" >&2; exit 2; }
command -v ccache > /dev/null || { echo "run.sh: ccache is not installed" >&2; exit 2; }
mkdir -p "$out/src"
git -C "$root" archive HEAD kernels porting/catalog | tar -x -C "$out/src"
commit=$(git -C "$root" rev-parse --short HEAD)
echo "# $(date -u +%Y-%m-%dT%H:%MZ) commit $commit, $(nproc) cores, $(nvcc --version | grep -o 'release [0-9.]*'), $(ccache --version | head -1)"
echo "# results and logs in $out"

# step LABEL TARGET BUILD_DIR: one driver run; prints wall time and the driver's summary.
step() {
  local label=$1 t=$2 dir=$3
  local start end
  start=$(date +%s.%N)
  "$runner" --build-local "$out/src/kernels" --target "$t" --build-dir "$dir" --jobs "$jobs" \
            --catalog "$out/src/porting/catalog/targets.json" > "$out/$label.txt" 2> "$out/$label.log" || true
  end=$(date +%s.%N)
  printf '%-14s %-8s wall %7.1f s  %s\n' "$label" "$t" "$(echo "$end - $start" | bc)" "$(tail -1 "$out/$label.txt")"
}

export CCACHE_DIR=$out/ccache-one
step cold "$target" "$out/build-one"
step warm "$target" "$out/build-one"
# A code change (not a comment: ccache's preprocessor mode would see through that).
echo "namespace { [[maybe_unused]] constexpr int kport_bench_edit = $(date +%s); }" \
  >> "$out/src/kernels/softmax/simt/softmax_simt.cu"
step one-edited "$target" "$out/build-one"
grep -E 'ccache miss' "$out/one-edited.log" | sed 's/^/  recompiled: /' || true

if [ "${KPORT_BENCH_SKIP_CI:-0}" != 1 ]; then
  export CCACHE_DIR=$out/ccache-ci
  ci_start=$(date +%s.%N)
  for t in $ci_targets; do step "ci-cold-$t" "$t" "$out/build-ci-$t"; done
  printf '%-14s %-8s wall %7.1f s\n' "ci-total" "$(echo $ci_targets | wc -w) tgts" "$(echo "$(date +%s.%N) - $ci_start" | bc)"
  for t in $ci_targets; do step "ci-warm-$t" "$t" "$out/build-ci-$t"; done
fi
