#!/usr/bin/env bash
# Every tracked C++ and CUDA source is as .clang-format writes it (CTest `style.format`).
# To fix: git ls-files -z -- '*.cpp' '*.h' '*.cu' '*.cuh' | xargs -0 clang-format -i
#   check_format.sh SOURCE_DIR
set -euo pipefail
cd "$1"
if ! command -v clang-format >/dev/null; then
  echo "clang-format is not installed; deploy/install-deps.sh installs it" >&2
  exit 1
fi
git ls-files -z -- '*.cpp' '*.h' '*.cu' '*.cuh' | xargs -0 clang-format --style=file --dry-run --Werror
