#!/usr/bin/env bash
# End to end on a machine with an NVIDIA GPU: starts kport-coordinator (SQLite), a build
# runner and a GPU runner, queues pipelines for one commit (two by default, back to back),
# waits for them, and prints the target's bring-up, the best-kernel answers for the
# shapes of the H200 baselines and how far the two pipelines' figures agree.
#
#   bash bench/pipeline/run_h200.sh
#
# Binaries: var/h200pkg from bench/pipeline/package.sh when present (for GPU machines
# without SQLite or libgit2), else build/release (cmake --preset release). Repository:
# var/h200pkg/repo.git, else this checkout. Environment (optional): OUT (default
# build/pipeline-out), KPORT_TARGET (sm_90a), KPORT_ARCH (9.0), KPORT_PIPELINES (2),
# KPORT_BENCH_CAP_MS (300), KPORT_BENCH_WARMUP_MS (200), KPORT_BENCH_MIN_SAMPLES (20),
# KPORT_BENCH_MAX_RSE (0.003), KPORT_BENCH_MAX_DUTY (0.5), KPORT_BENCH_THROTTLE (0.97),
# KPORT_BENCH_ROUNDS (2),
# KPORT_PIPELINE_TIMEOUT (900 s each), KPORT_AFTER_PIPELINES (a command run once the
# pipelines finished, while the stack is still up, with KPORT_URL and KPORT_ADMIN_TOKEN set),
# KPORT_CONCURRENT (set: queue the pipelines at once), KPORT_ONLY_GPUS (the GPU runner's
# --only-gpus: indexes or UUIDs; default every GPU nvidia-smi lists, a worker each).
set -u
cd "$(dirname "$0")/../.."
root=$PWD
OUT=${OUT:-$root/build/pipeline-out}
mkdir -p "$OUT"
work=$(mktemp -d /tmp/kport-pipeline.XXXXXX)
pkg=$root/var/h200pkg
if [[ -x $pkg/bin/kport-coordinator ]]; then
  loader=$(ls /lib64/ld-linux-x86-64.so.2 2>/dev/null || ls /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)
  svc() { local b=$1; shift; "$loader" --library-path "$pkg/lib" "$pkg/bin/$b" "$@"; }
  repo=$pkg/repo.git
  commit=$(cat "$pkg/commit")
  echo "binaries and repository from var/h200pkg (source commit $(cat "$pkg/source-commit"))"
else
  cmake --preset release >/dev/null && cmake --build --preset release --target kport-coordinator kport-runner || exit 1
  svc() { local b=$1; shift; "$root/build/release/bin/$b" "$@"; }
  repo=$root
  commit=$(git rev-parse HEAD)
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)

pids=()
# Runners first (each finishes its job and deregisters), then the coordinator.
stop() { for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done; }
trap stop EXIT
admin=admin-$RANDOM$RANDOM
reg=reg-$RANDOM$RANDOM
svc kport-coordinator --listen 127.0.0.1:0 --port-file "$work/port" --db "$work/kport.db" --admin-token "$admin" \
  --registration-token "$reg" --lease-seconds 120 --log-level info \
  --families "$root/kernels/kport.json" >"$OUT/coordinator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || { echo "the coordinator did not start"; tail -20 "$OUT/coordinator.log"; exit 1; }
url=http://127.0.0.1:$(cat "$work/port")
echo "coordinator at $url"
svc kport-runner --role build --server "$url" --registration-token "$reg" --workdir "$work/build-runner" \
  --catalog "$root/porting/catalog/targets.json" --nvcc "$nvcc" --name builder --claim-wait 5 >"$OUT/build-runner.log" 2>&1 &
pids+=($!)
svc kport-runner --role gpu --server "$url" --registration-token "$reg" --workdir "$work/gpu-runner" \
  --catalog "$root/porting/catalog/targets.json" --nvcc "$nvcc" --name gpu-host --claim-wait 5 \
  --bench-time-cap-ms "${KPORT_BENCH_CAP_MS:-300}" --bench-warmup-ms "${KPORT_BENCH_WARMUP_MS:-200}" \
  --bench-min-samples "${KPORT_BENCH_MIN_SAMPLES:-20}" --bench-max-rse "${KPORT_BENCH_MAX_RSE:-0.003}" \
  --bench-max-duty "${KPORT_BENCH_MAX_DUTY:-0.5}" --bench-throttle-threshold "${KPORT_BENCH_THROTTLE:-0.97}" \
  --bench-rounds "${KPORT_BENCH_ROUNDS:-2}" \
  >"$OUT/gpu-runner.log" 2>&1 &
pids+=($!)

# The workers the GPU runner starts: one per GPU it was given, else per GPU listed.
if [[ -n ${KPORT_ONLY_GPUS:-} ]]; then
  workers=$(tr ',' '\n' <<<"$KPORT_ONLY_GPUS" | grep -c .)
else
  workers=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | grep -c .)
fi
python3 "$root/bench/pipeline/drive.py" --server "$url" --token "$admin" --repo "$repo" --commit "$commit" \
  --target "${KPORT_TARGET:-sm_90a}" --arch "${KPORT_ARCH:-9.0}" --pipelines "${KPORT_PIPELINES:-2}" \
  --timeout "${KPORT_PIPELINE_TIMEOUT:-900}" --out "$OUT" --gpu-workers "$workers" \
  ${KPORT_CONCURRENT:+--concurrent}
rc=$?
if [[ -n ${KPORT_AFTER_PIPELINES:-} ]]; then
  KPORT_URL=$url KPORT_ADMIN_TOKEN=$admin bash -c "$KPORT_AFTER_PIPELINES" || rc=1
fi
# The database every answer above came from, so selection rules can be replayed against these
# very figures on any machine (a coordinator started on a copy answers as this one did).
python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))' \
  "$work/kport.db" "$OUT/kport.db" && gzip -f "$OUT/kport.db" || echo "the database was not copied"
grep -E "warn|error" "$OUT/gpu-runner.log" | tail -20
exit $rc
