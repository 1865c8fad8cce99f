#!/usr/bin/env bash
# Installs every build and test dependency of kport on Debian 12, through apt-get only.
# Idempotent: packages already present are skipped, so a second run is quick.
# CUDA is not installed here: the build uses /usr/local/cuda when it exists and
# reports the kernel parts as skipped otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  clang-format clang-tidy
  libboost1.81-dev libboost-json1.81-dev
  libsqlite3-dev sqlite3
  libgit2-dev
  libspdlog-dev libfmt-dev
  libssl-dev ca-certificates
  nlohmann-json3-dev
  libgtest-dev libgmock-dev googletest
  curl openssl wrk nginx-light
  chromium chromium-driver nodejs
  systemd
  dpkg-dev file
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Debian's npm conflicts with a nodejs that already bundles npm (NodeSource builds do).
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---- dashboard: the chart library, the bundler and the browser-test driver, from npm ----
# web/package-lock.json pins them; `npm ci` installs exactly those into web/node_modules
# and its postinstall copies the chart library into web/vendor/, which the coordinator
# serves. esbuild comes with its binary for this platform (an npm package of its own,
# @esbuild/linux-x64 here), so nothing is downloaded past the registry; the pin matters
# because web/dist/ is esbuild's output, checked byte for byte. playwright-core
# downloads no browser: the tests use Debian's chromium above.
# Skipped when the installed tree is complete, so a second run is quick.
web_dir="$(cd "$(dirname "$0")/.." && pwd)/web"
if [ -f "$web_dir/package-lock.json" ]; then
  if [ ! -d "$web_dir/node_modules/uplot" ] || [ ! -d "$web_dir/node_modules/playwright-core" ] \
     || [ ! -d "$web_dir/node_modules/esbuild" ] || [ ! -f "$web_dir/vendor/uplot.esm.js" ]; then
    echo "install-deps: npm ci --prefix web"
    npm ci --prefix "$web_dir" --no-audit --no-fund
  else
    echo "install-deps: web/node_modules present"
  fi
fi

# ---- the OpenAPI linter: @redocly/cli, pinned in tests/openapi/package-lock.json ----
# One self-contained package (no dependencies, nothing downloaded past the registry);
# CTest CoordinatorTest.OpenApiDocumentHasNoLintErrors runs it on the served document
# with telemetry and the update check off.
lint_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/openapi"
if [ -f "$lint_dir/package-lock.json" ]; then
  if [ ! -f "$lint_dir/node_modules/@redocly/cli/bin/cli.js" ]; then
    echo "install-deps: npm ci --prefix tests/openapi"
    npm ci --prefix "$lint_dir" --no-audit --no-fund
  else
    echo "install-deps: tests/openapi/node_modules present"
  fi
fi
