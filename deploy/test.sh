#!/usr/bin/env bash
# The test command: installs what is missing (apt-get), builds every part with the `ci`
# preset (warnings are errors) and runs every test tier that can run on this machine.
# Tiers are CTest labels: unit, integration, e2e, gpu (skips with a reason without a
# GPU). Extra arguments go to ctest, e.g. `deploy/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci --parallel 2 "$@"
