#!/usr/bin/env bash
# Static-file throughput of the coordinator against nginx serving the same file in the
# same run (wrk, 1000 connections), and /healthz latency while that load runs.
# Usage: bench/serve/run.sh [BUILD_DIR]   (needs wrk, nginx, curl)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/ci}
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
file=dist/app.js
ulimit -n "$(ulimit -Hn)"

"$build/bin/kport-coordinator" --listen 127.0.0.1:0 --db "$work/kport.db" --web "$root/web" \
  --port-file "$work/port" --threads 2 --max-connections-per-address 2000 --log-level warn \
  > "$work/coordinator.log" 2>&1 & echo $! > "$work/coordinator.pid"
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
kport=$(cat "$work/port")

nport=$((kport + 1))
cat > "$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx.err;
events { worker_connections 4096; }
http {
  access_log off;
  server { listen 127.0.0.1:$nport; root $root/web; location /static/ { alias $root/web/; } }
}
CONF
nginx -c "$work/nginx.conf" -p "$work"
sleep 0.5

healthz_under_load() {  # $1: label
  local out="$work/healthz.txt"; : > "$out"
  for _ in $(seq 200); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$kport/healthz" >> "$out"; sleep 0.01; done
  sort -n "$out" | awk -v l="$1" '{a[NR]=$1} END {printf "/healthz during %s: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d probes)\n", l, a[int(NR*0.5)]*1000, a[int(NR*0.99)]*1000, a[NR]*1000, NR}'
}

echo "date: $(date -u +%FT%TZ)  commit: $(git -C "$root" rev-parse --short HEAD)  cpus: $(nproc)  $(uname -m)"
echo "file: web/$file ($(stat -c %s "$root/web/$file") bytes)"
for target in kport:$kport nginx:$nport; do
  name=${target%%:*}; port=${target#*:}
  echo "== $name: wrk -t2 -c1000 -d10s --latency /static/$file"
  wrk -t2 -c1000 -d10s --latency "http://127.0.0.1:$port/static/$file" > "$work/wrk.txt" 2>&1 &
  wrk_pid=$!
  sleep 2
  [ "$name" = kport ] && healthz_under_load "the kport static load"
  wait $wrk_pid
  grep -E "Requests/sec|Latency|99%|Socket errors|Non-2xx" "$work/wrk.txt"
done

# /healthz while 16 clients wait on a database another process holds write-locked
# (every worker blocked: the slow-query case of issue 14 at its worst).
admin=$(cat "$work/admin-token")
sqlite_in="$work/lock.fifo"; mkfifo "$sqlite_in"
sqlite3 "$work/kport.db" < "$sqlite_in" > /dev/null 2>&1 & echo $! > "$work/sqlite.pid"
exec 7> "$sqlite_in"; echo "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS lock_probe(x);" >&7
sleep 0.3
for i in $(seq 16); do
  ( while :; do curl -s -o /dev/null -m 10 -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
      -d "{\"name\":\"r$i-$RANDOM\",\"url\":\"/tmp/x.git\"}" "http://127.0.0.1:$kport/api/v1/repositories"; done ) &
  echo $! > "$work/writer$i.pid"
done
sleep 1
healthz_under_load "16 clients blocked on a locked database"
echo "/readyz meanwhile: $(curl -s -o /dev/null -w '%{http_code} in %{time_total} s' "http://127.0.0.1:$kport/readyz")"
for i in $(seq 16); do kill "$(cat "$work/writer$i.pid")"; rm "$work/writer$i.pid"; done
echo "ROLLBACK;" >&7; exec 7>&-

# Other clients under 10,000 idle connections from 127.0.0.1.
python3 - "$kport" <<'PY' &
import socket, sys, time
port = int(sys.argv[1]); held = []
for _ in range(10000):
    s = socket.socket(); s.bind(("127.0.0.1", 0))
    try: s.connect(("127.0.0.1", port)); held.append(s)
    except OSError: s.close()
sys.stderr.write(f"holding {len(held)} idle connections from 127.0.0.1\n")
time.sleep(8)
PY
echo $! > "$work/idle.pid"
sleep 3
t=$(curl -s -o /dev/null -w '%{http_code} in %{time_total} s' --interface 127.0.0.2 "http://127.0.0.1:$kport/api/v1/targets")
echo "GET /api/v1/targets from 127.0.0.2 under the idle flood: $t"
t=$(curl -s -o /dev/null -w '%{http_code} in %{time_total} s' -H "Authorization: Bearer $admin" "http://127.0.0.1:$kport/api/v1/queue")
echo "authorized GET /api/v1/queue from 127.0.0.1 (the flooding address): $t"
t=$(curl -s -o /dev/null -w '%{http_code} in %{time_total} s' "http://127.0.0.1:$kport/healthz")
echo "GET /healthz from 127.0.0.1: $t"
t=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$kport/api/v1/targets")
echo "anonymous GET /api/v1/targets from 127.0.0.1: $t (503 expected: only authorized requests and probes)"
curl -s "http://127.0.0.1:$kport/metrics" | grep -E "^kport_http_connections_(open|reserved|evicted_total|rejected_total|unprivileged_total) "
wait "$(cat "$work/idle.pid")" || true
