#!/usr/bin/env bash
# Load benchmark of the coordinator on this machine, with nginx serving the same bytes
# as a static file in the same run as the peer.
#  1. seeds a database with 1,000,000 results (kept in var/bench/ and reused),
#  2. wrk on GET /api/v1/best against the coordinator, then nginx on the same bytes:
#     the fixed question (gemm bf16 4096^3 on the H200), then seeded random questions
#     (bench/api/best_random.lua: measured and unmeasured shapes over every GPU model,
#     family and dtype), with nginx sent the same request lines (it ignores the query),
#  3. claim -> result -> complete throughput on a fresh database.
# The load average before each wrk run is printed with it: other work on the machine
# moves these figures.
# Usage: bench/api/run.sh [build-dir]   (default build/release; builds what it needs)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
results=${KPORT_BENCH_RESULTS:-1000000}
duration=${KPORT_BENCH_SECONDS:-15}
connections=${KPORT_BENCH_CONNECTIONS:-64}

if [ ! -f "$build/build.ninja" ]; then cmake --preset release >/dev/null; fi
cmake --build "$build" --target kport-coordinator kport-bench-seed kport-bench-queue >/dev/null
bin=$build/bin
work=var/bench/api
mkdir -p $work
db=$work/best-$results.db
if [ ! -f $db ]; then
  echo "== seeding $results results into $db"
  $bin/kport-bench-seed --db $db --results $results
fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

start_coordinator() {  # db port-file; sets $port (not in a subshell, so cleanup knows the pid)
  rm -f "$2"
  $bin/kport-coordinator --listen 127.0.0.1:0 --db "$1" --port-file "$2" --admin-token bench-admin \
      --registration-token bench-reg --log-level warn --threads 2 --workers 4 >>"$work/coordinator.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$2" ] && break; sleep 0.1; done
  port=$(cat "$2")
}

start_coordinator $db $work/port
query="/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096"
curl -sf "http://127.0.0.1:$port$query" > $work/best.json
echo "== best-kernel answer ($(wc -c < $work/best.json) bytes): $(head -c 160 $work/best.json)..."

random_script=bench/api/best_random.lua
seed=${KPORT_BENCH_SEED:-42}
load() { echo "   (load average before: $(cut -d' ' -f1-3 /proc/loadavg))"; }
# A short warm-up: the coordinator loads each key's evidence on its first question.
wrk -t2 -c"$connections" -d2s -s $random_script "http://127.0.0.1:$port" -- /api/v1/best "$seed" >/dev/null

# nginx with the same bytes as a static file, same worker count as the coordinator's I/O threads.
mkdir -p $work/nginx/html $work/nginx/tmp
cp $work/best.json $work/nginx/html/best.json
cat > $work/nginx/nginx.conf <<NGINX
worker_processes 2;
daemon off;
pid $PWD/$work/nginx/nginx.pid;
error_log $PWD/$work/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $PWD/$work/nginx/tmp;
  proxy_temp_path $PWD/$work/nginx/tmp;
  fastcgi_temp_path $PWD/$work/nginx/tmp;
  uwsgi_temp_path $PWD/$work/nginx/tmp;
  scgi_temp_path $PWD/$work/nginx/tmp;
  server {
    listen 127.0.0.1:18089;
    location / { root $PWD/$work/nginx/html; default_type application/json; }
  }
}
NGINX
nginx -c $PWD/$work/nginx/nginx.conf &
pids+=($!)
sleep 0.5

echo "== wrk: kport-coordinator GET /api/v1/best, fixed question ($results results, $connections connections, ${duration}s)"; load
wrk -t2 -c"$connections" -d"${duration}s" --latency "http://127.0.0.1:$port$query" | tee $work/wrk-kport.txt
echo "== wrk: nginx static file, same body"; load
wrk -t2 -c"$connections" -d"${duration}s" --latency "http://127.0.0.1:18089/best.json" | tee $work/wrk-nginx.txt
echo "== wrk: kport-coordinator GET /api/v1/best, seeded random questions (seed $seed)"; load
wrk -t2 -c"$connections" -d"${duration}s" --latency -s $random_script "http://127.0.0.1:$port" -- /api/v1/best "$seed" \
    | tee $work/wrk-kport-random.txt
echo "== wrk: nginx static file, the same request lines"; load
wrk -t2 -c"$connections" -d"${duration}s" --latency -s $random_script "http://127.0.0.1:18089" -- /best.json "$seed" \
    | tee $work/wrk-nginx-random.txt
echo "== best-kernel evidence held in memory"
curl -sf "http://127.0.0.1:$port/metrics" | grep '^kport_best_index' | tee $work/best-index.txt

echo "== queue: claim -> result -> complete on a fresh database"
rm -f $work/queue.db*
start_coordinator $work/queue.db $work/qport; qport=$port
$bin/kport-bench-queue --server "http://127.0.0.1:$qport" --admin-token bench-admin \
    --registration-token bench-reg --pipelines "${KPORT_BENCH_PIPELINES:-2000}" --runners 4 | tee $work/queue.txt
