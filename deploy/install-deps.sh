#!/usr/bin/env bash
# Installs every build and test dependency of kport on Debian 12, through apt-get only.
# Idempotent: packages already present are skipped, so a second run is quick.
# CUDA is not installed here: the build uses /usr/local/cuda when it exists and
# reports the kernel parts as skipped otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost1.81-dev libboost-json1.81-dev
  libsqlite3-dev sqlite3
  libgit2-dev
  libspdlog-dev libfmt-dev
  nlohmann-json3-dev
  libgtest-dev libgmock-dev googletest
  curl wrk nginx-light
  chromium chromium-driver nodejs
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
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
