#!/usr/bin/env bash
# The main job, in one command: installs what is missing, builds kport and brings up the
# whole stack on this machine, on an SQLite database under var/ that the next run reuses
# (as it reuses the build cache):
#   - kport-coordinator with the dashboard,
#   - kport-watcher on the installed toolkit, this repository's current branch and the fleet,
#   - a build runner, and a GPU runner for the GPUs nvidia-smi finds (none: checks wait
#     as "awaiting runner").
# The first run opens a bring-up pipeline for every target of the installed toolkit at
# HEAD (the watcher sees each target for the first time). Progress is printed here; logs
# go to var/log/; Ctrl-C stops everything cleanly.
#   KPORT_LISTEN=127.0.0.1:8080  address of the coordinator
#   KPORT_BUILD_DIR=build/release  a build tree to use (configured with the release preset when default)
#   KPORT_SKIP_INSTALL=1         do not run deploy/install-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

[[ ${KPORT_SKIP_INSTALL:-0} == 1 ]] || bash deploy/install-deps.sh
build=${KPORT_BUILD_DIR:-build/release}
if [[ $build == build/release ]]; then cmake --preset release >/dev/null; fi
cmake --build "$build" --target kport-coordinator kport-runner kport-watcher kport
bin=$build/bin

listen=${KPORT_LISTEN:-127.0.0.1:8080}
url=http://$listen
branch=$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo main)
[[ $branch == HEAD ]] && branch=main
nvcc=/usr/local/cuda/bin/nvcc
[[ -x $nvcc ]] || nvcc=$(command -v nvcc || true)
mkdir -p var/log

pids=()
names=()
start() {  # name command...
  local name=$1
  shift
  echo "== $(date -Is) $*" >>"var/log/$name.log"
  # Its own session: Ctrl-C reaches only this script, which stops the parts in order.
  setsid "$@" >>"var/log/$name.log" 2>&1 &
  pids+=($!)
  names+=("$name")
}
force() {
  echo "kport: stopping at once; a job in hand goes back to the queue when its lease expires"
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
}
stop() {
  trap - EXIT TERM
  trap force INT
  echo
  echo "kport: stopping (runners finish the job in hand, then the watcher and the coordinator;"
  echo "       Ctrl-C again to stop at once)"
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  echo "kport: stopped; the database (var/kport.db) and the build cache stay for the next run"
}
trap stop EXIT
trap 'exit 130' INT TERM

web=""
[[ -f web/index.html ]] && web="--web web"
start coordinator "$bin/kport-coordinator" --listen "$listen" --db var/kport.db $web
for _ in $(seq 100); do curl -sf "$url/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
if ! curl -sf "$url/healthz" >/dev/null 2>&1; then
  echo "kport: the coordinator did not come up on $listen; the end of var/log/coordinator.log:" >&2
  tail -5 var/log/coordinator.log >&2
  exit 1
fi
admin=$(cat var/admin-token)
registration=$(cat var/registration-token)
# This checkout is the repository the watcher follows and the runners build.
curl -sf -X POST -H "Authorization: Bearer $admin" "$url/api/v1/repositories" \
  -d "{\"name\":\"kernels\",\"url\":\"$root\"}" >/dev/null ||
  curl -sf -H "Authorization: Bearer $admin" "$url/api/v1/repositories" | grep -q '"kernels"' ||
  { echo "kport: cannot register this checkout as repository 'kernels'" >&2; exit 1; }

watches=fleet,git
[[ -n $nvcc ]] && watches=toolkit,fleet,git
start watcher "$bin/kport-watcher" --server "$url" --token "$admin" --watch "$watches" --interval 30 \
  --repos "kernels=$root#$branch" --nvcc "${nvcc:-nvcc}" --catalog porting/catalog/targets.json --workdir var/watcher
if [[ -n $nvcc ]]; then
  start build-runner "$bin/kport-runner" --role build --server "$url" --registration-token "$registration" \
    --workdir var/runner --nvcc "$nvcc" --catalog porting/catalog/targets.json
else
  echo "kport: no CUDA toolkit (nvcc) here: no build runner and no toolkit watch"
fi
if nvidia-smi -L >/dev/null 2>&1; then
  start gpu-runner "$bin/kport-runner" --role gpu --server "$url" --registration-token "$registration" \
    --workdir var/runner --nvcc "${nvcc:-nvcc}" --catalog porting/catalog/targets.json
  gpus=$(nvidia-smi -L | wc -l)
else
  gpus=0
fi

echo
echo "kport: dashboard  $url/"
echo "kport: API        $url/api/v1/openapi.json   (admin token in var/admin-token)"
echo "kport: watching   kernels=$root#$branch, the toolkit ${nvcc:-(none)}, $gpus GPU(s) here"
echo "kport: logs       var/log/{coordinator,watcher,build-runner,gpu-runner}.log; Ctrl-C stops"
echo

progress() {  # one line from /api/v1/queue
  curl -sf "$url/api/v1/queue" | node -e '
    let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
      const q = JSON.parse(s), j = q.jobs || {};
      const part = k => `${k.replace("_", " ")} ${j[k] || 0}`;
      console.log([["queued", "awaiting_runner", "running", "succeeded", "failed", "cancelled"].map(part).join(" · "),
                   `runners online ${q.runners_online || 0}`].join(" | "));
    });' 2>/dev/null || echo "(no answer from the coordinator)"
}
last=""
while true; do
  for i in "${!pids[@]}"; do
    if ! kill -0 "${pids[i]}" 2>/dev/null; then
      wait "${pids[i]}" && rc=0 || rc=$?
      echo "kport: ${names[i]} exited ($rc); the end of var/log/${names[i]}.log:"
      tail -5 "var/log/${names[i]}.log"
      if [[ ${names[i]} == coordinator ]]; then exit 1; fi
      unset 'pids[i]' 'names[i]'
      pids=("${pids[@]}")
      names=("${names[@]}")
      break
    fi
  done
  line=$(progress)
  if [[ $line != "$last" ]]; then
    echo "$(date +%T)  jobs: $line"
    last=$line
  fi
  sleep 5
done
