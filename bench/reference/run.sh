#!/usr/bin/env bash
# The CPU double reference of the fp8 checks (nt_reference_bench.cpp) built from this tree's
# kernels/reference/gemm_reference.cpp and from BASE's (default 577ab33: one output at a
# time), each with the flags the harness builds it with (-O3), run in turn RUNS times (A B A B
# ...), printing each side's median time and that the two give the same doubles.
#
#   bash bench/reference/run.sh [BASE]
set -eu
cd "$(dirname "$0")/../.."
base=${1:-577ab33}
runs=${RUNS:-5}
out=${OUT:-/tmp/kport-reference-bench}
mkdir -p "$out"
git show "$base:kernels/reference/gemm_reference.cpp" >"$out/base_gemm_reference.cpp"
for side in tree base; do
  src=kernels/reference/gemm_reference.cpp
  [[ $side == base ]] && src=$out/base_gemm_reference.cpp
  g++ -std=c++20 -O3 -DNDEBUG -Ikernels -Ikernels/include bench/reference/nt_reference_bench.cpp "$src" \
    -o "$out/nt-$side"
done
: >"$out/tree.txt"
: >"$out/base.txt"
for _ in $(seq "$runs"); do
  "$out/nt-tree" >>"$out/tree.txt"
  "$out/nt-base" >>"$out/base.txt"
done
median() { cut -d' ' -f1 "$1" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
sums() { awk '{print $NF}' "$1" | sort -u | tr '\n' ' '; }
echo "$(uname -m), $(nproc) cores, $(date -u +%FT%TZ), $runs runs each, in turn"
echo "this tree ($(git rev-parse --short HEAD)): median $(median "$out/tree.txt") s, checksum $(sums "$out/tree.txt")"
echo "$base: median $(median "$out/base.txt") s, checksum $(sums "$out/base.txt")"
