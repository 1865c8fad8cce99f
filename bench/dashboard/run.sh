#!/usr/bin/env bash
# Dashboard first paint on a big history: seeds (or reuses) a database of 1,000,000
# results, starts kport-coordinator on it with the dashboard, and measures every page in
# headless Chromium (bench/dashboard/measure.mjs). Figures go to docs/BENCHMARKS.md.
# Usage: bench/dashboard/run.sh [build-dir] [measure.mjs options, e.g. --waterfall]
#        (default build/release; builds what it needs)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
results=${KPORT_BENCH_RESULTS:-1000000}
runs=${KPORT_BENCH_RUNS:-5}

if [ ! -f "$build/build.ninja" ]; then cmake --preset release >/dev/null; fi
cmake --build "$build" --target kport-coordinator >/dev/null
if [ ! -d web/node_modules/playwright-core ] || [ ! -d web/node_modules/esbuild ] || [ ! -f web/vendor/uplot.esm.js ]; then
  npm ci --prefix web --no-audit --no-fund
fi
# The pages load web/dist/app.js: measure it only when it matches web/js/.
node web/scripts/bundle.mjs --check
mkdir -p var/bench
db=var/bench/dashboard-$results.db
if [ ! -f "$db" ]; then
  echo "== seeding $results results into $db"
  # The coordinator creates the schema (its migrations); seed.sql fills it in one
  # transaction, with the schema's triggers keeping the summaries as uploads would.
  rm -f "$db.tmp" "$db.tmp-wal" "$db.tmp-shm" var/bench/port
  "$build/bin/kport-coordinator" --listen 127.0.0.1:0 --db "$db.tmp" --port-file var/bench/port \
      --admin-token bench-admin --registration-token bench-reg --log-level warn &
  pid=$!
  for _ in $(seq 100); do [ -s var/bench/port ] && break; sleep 0.1; done
  kill "$pid"; wait "$pid" || true
  start=$(date +%s)
  sed "s/__RESULTS__/$results/g" bench/dashboard/seed.sql | sqlite3 -bail "$db.tmp" >/dev/null
  echo "   seeded in $(( $(date +%s) - start )) s"
  mv "$db.tmp" "$db"
fi
# The commit page is measured on the newest commit of the seeded history.
commit=$(sqlite3 "$db" "SELECT sha FROM commits WHERE message LIKE 'change %' ORDER BY time_ms DESC LIMIT 1")
echo "== measuring ($runs loads per page, fresh browser context each)"
node bench/dashboard/measure.mjs --coordinator "$build/bin/kport-coordinator" --db "$db" --runs "$runs" --commit "$commit" "${@:2}"
