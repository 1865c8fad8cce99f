#!/usr/bin/env bash
# The curated .clang-tidy checks over the ground floor and the rules every reader shares:
# common/, porting/ and kport-dispatch (CTest `style.tidy`), as errors.
#   check_tidy.sh SOURCE_DIR BUILD_DIR   (BUILD_DIR holds compile_commands.json)
set -euo pipefail
src=$1 build=$2
cd "$src"
if ! command -v clang-tidy >/dev/null; then
  echo "clang-tidy is not installed; deploy/install-deps.sh installs it" >&2
  exit 1
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "$build/compile_commands.json is missing (configure with CMAKE_EXPORT_COMPILE_COMMANDS)" >&2
  exit 1
fi
# The build's GCC-only warning flags are not clang's: let them pass unknown.
git ls-files -z -- 'common/*.cpp' 'porting/*.cpp' 'services/dispatch/*.cpp' |
  xargs -0 -P"$(nproc)" -n4 clang-tidy -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option
