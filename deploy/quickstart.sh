#!/usr/bin/env bash
# The main job on one machine: installs what is missing, builds kport, and runs the
# coordinator on an SQLite database under var/ (reused on the next run). Prints the URL
# and where the tokens are; Ctrl-C stops it cleanly.
#   KPORT_LISTEN=127.0.0.1:8080  address to serve on
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target kport-coordinator

mkdir -p var
listen="${KPORT_LISTEN:-127.0.0.1:8080}"
echo
echo "kport: coordinator on http://${listen}  (database var/kport.db)"
echo "kport: admin token in var/admin-token, runner registration token in var/registration-token"
echo "kport: API description at http://${listen}/api/v1/openapi.json; Ctrl-C stops"
echo
web=""
if [ -f web/index.html ]; then web="--web web"; fi
exec build/release/bin/kport-coordinator --listen "$listen" --db var/kport.db $web
