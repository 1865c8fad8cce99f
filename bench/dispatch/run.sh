#!/usr/bin/env bash
# kport-dispatch lookup time on this machine, and its peer in the same run:
#  1. a synthetic snapshot larger than today's H200 grids, 1M random lookups;
#  2. a coordinator on a seeded database (kport-bench-seed, 3 GPU models, 4 families):
#     its H200 snapshot over HTTP, 1M lookups on it, then the same kind of queries
#     answered by GET /api/v1/best over HTTP (distinct queries, so each is computed),
#     every measured answer compared with the lookup's.
# Usage: bench/dispatch/run.sh [build-dir]   (default build/ci; builds what it needs)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/ci}
results=${KPORT_BENCH_RESULTS:-200000}
http_n=${KPORT_BENCH_HTTP:-2000}
cmake --build "$build" --target kport-coordinator kport-bench-seed kport-bench-dispatch >/dev/null
bin=$build/bin
work=var/bench/dispatch
mkdir -p $work
db=$work/seed-$results.db
if [ ! -f $db ]; then
  echo "== seeding $results results into $db"
  $bin/kport-bench-seed --db $db --results $results
fi
echo "== commit $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== synthetic snapshot"
$bin/kport-bench-dispatch --synthetic

pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
rm -f $work/port
$bin/kport-coordinator --listen 127.0.0.1:0 --db $db --port-file $work/port --admin-token bench-admin \
    --registration-token bench-reg --log-level warn --threads 2 --workers 4 >>$work/coordinator.log 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s $work/port ] && break; sleep 0.1; done
echo "== coordinator snapshot of NVIDIA H200 ($results results seeded), peer /api/v1/best"
$bin/kport-bench-dispatch --server "http://127.0.0.1:$(cat $work/port)" --gpu "NVIDIA H200" --http "$http_n"
