#!/usr/bin/env bash
# CPU time of the coordinator per /api/v1/best answer to seeded random questions, for
# several coordinator binaries side by side on the same database, alternating
# (A B A B ...), with nginx on the same request lines in the same session as the peer.
# The coordinator's user + system time is read from /proc/PID/stat before and after
# each wrk run, so the figure is what the server spent per answer whatever else the
# machine was doing (req/s on a shared machine moves with the load; this moves less).
# Usage: bench/api/cpu_per_answer.sh BINARY [BINARY...]
#   KPORT_BENCH_ROUNDS (2), KPORT_BENCH_SECONDS (8), KPORT_BENCH_CONNECTIONS (64),
#   KPORT_BENCH_SEED (42); the database is bench/api/run.sh's (seeded there).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { echo "usage: $0 BINARY [BINARY...]" >&2; exit 2; }
rounds=${KPORT_BENCH_ROUNDS:-2}
duration=${KPORT_BENCH_SECONDS:-8}
connections=${KPORT_BENCH_CONNECTIONS:-64}
seed=${KPORT_BENCH_SEED:-42}
work=var/bench/api
db=$work/best-${KPORT_BENCH_RESULTS:-1000000}.db
[ -f "$db" ] || { echo "no $db: run bench/api/run.sh once to seed it" >&2; exit 2; }
script=bench/api/best_random.lua
hz=$(getconf CLK_TCK)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime
requests() { awk '/requests in/ {print $1}' "$1"; }
errors() { awk '/Non-2xx|Socket errors/ {printf "  [%s]", $0}' "$1"; }
rate() { awk '/Requests\/sec/ {print $2}' "$1"; }

measure() {  # label url path pid-or-empty
  local out=$work/cpu-wrk.txt before after load
  load=$(cut -d' ' -f1 /proc/loadavg)
  [ -n "$4" ] && before=$(cpu_ticks "$4")
  wrk -t2 -c"$connections" -d"${duration}s" -s $script "$2" -- "$3" "$seed" >"$out"
  if [ -n "$4" ]; then
    after=$(cpu_ticks "$4")
    awk -v l="$1" -v n="$(requests $out)" -v r="$(rate $out)" -v t=$((after - before)) -v hz="$hz" -v load="$load" \
      -v e="$(errors $out)" 'BEGIN { printf "%-40s %10s req/s  %6.1f us CPU/answer  (load %s)%s\n", l, r, t / hz * 1e6 / n, load, e }'
  else
    printf "%-40s %10s req/s  (load %s)\n" "$1" "$(rate $out)" "$load"
  fi
}

for round in $(seq "$rounds"); do
  for bin in "$@"; do
    rm -f $work/cpu-port
    "$bin" --listen 127.0.0.1:0 --db "$db" --port-file $work/cpu-port --admin-token bench-admin \
      --registration-token bench-reg --log-level warn --threads 2 --workers 4 >>$work/coordinator.log 2>&1 &
    pid=$!
    pids+=($pid)
    for _ in $(seq 100); do [ -s $work/cpu-port ] && break; sleep 0.1; done
    port=$(cat $work/cpu-port)
    # Warm-up: each key's evidence is loaded on its first question.
    wrk -t2 -c"$connections" -d2s -s $script "http://127.0.0.1:$port" -- /api/v1/best "$seed" >/dev/null
    measure "round $round $(basename "$bin")" "http://127.0.0.1:$port" /api/v1/best "$pid"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  done
done

# nginx on the same request lines (bench/api/run.sh writes its configuration and file).
if [ -f $work/nginx/nginx.conf ]; then
  nginx -c "$PWD/$work/nginx/nginx.conf" &
  pids+=($!)
  sleep 0.5
  ngpids=$(pgrep -P "$(cat $work/nginx/nginx.pid)" || true)
  before=0
  for p in $ngpids; do before=$((before + $(cpu_ticks "$p"))); done
  load=$(cut -d' ' -f1 /proc/loadavg)
  wrk -t2 -c"$connections" -d"${duration}s" -s $script "http://127.0.0.1:18089" -- /best.json "$seed" >$work/cpu-wrk.txt
  after=0
  for p in $ngpids; do after=$((after + $(cpu_ticks "$p"))); done
  awk -v n="$(requests $work/cpu-wrk.txt)" -v r="$(rate $work/cpu-wrk.txt)" -v t=$((after - before)) -v hz="$hz" \
    -v load="$load" 'BEGIN { printf "%-40s %10s req/s  %6.1f us CPU/answer  (load %s)\n", "nginx, same request lines", r, t / hz * 1e6 / n, load }'
fi
