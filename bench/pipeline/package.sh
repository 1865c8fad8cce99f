#!/usr/bin/env bash
# Stages what bench/pipeline/run_h200.sh needs on a GPU machine that has no SQLite or
# libgit2: the service binaries, the shared libraries they load beyond glibc and the C++
# runtime (run there through the dynamic loader's --library-path, so the compilers and
# harnesses the runners start keep the machine's own libraries), and a bare repository
# holding HEAD's tree as one commit.
#   bash bench/pipeline/package.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
pkg=var/h200pkg
cmake --build "$build" --target kport-coordinator kport-runner runner_unit_test >/dev/null
rm -rf "$pkg"
mkdir -p "$pkg/bin" "$pkg/lib"
cp "$build/bin/kport-coordinator" "$build/bin/kport-runner" "$pkg/bin/"
# The runner's unit tests hold the GPU discovery test, which skips where there is no GPU.
if [[ -x $build/tests/runner_unit_test ]]; then cp "$build/tests/runner_unit_test" "$pkg/bin/"; fi
ldd "$pkg/bin/"* | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libresolv)\.so' |
  while read -r lib; do cp -L "$lib" "$pkg/lib/"; done
src=$(mktemp -d)
git archive HEAD | tar -x -C "$src"
(cd "$src" && git init -q -b main && git add -A &&
  git -c user.name=kport -c user.email=kport@localhost commit -q -m "kport tree of $(git -C "$OLDPWD" rev-parse --short HEAD)")
git clone -q --bare "$src" "$pkg/repo.git"
git -C "$src" rev-parse HEAD >"$pkg/commit"
git rev-parse HEAD >"$pkg/source-commit"
rm -rf "$src"
du -sh "$pkg" | awk '{print "staged " $2 ": " $1}'
