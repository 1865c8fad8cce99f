#!/usr/bin/env bash
# KPORT_ONLY_VARIANTS: a kernels tree configured with it builds the variants it names and
# reports every other as excluded (the harness's compiled-in target info, which `list`
# prints); a name that is no variant of the tree fails the configuration, naming it.
#   only_variants_test.sh <kernels source dir> <work dir>
set -u
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
cmake -S "$src" -B "$work/ok" -G Ninja -DKPORT_CUDA_TARGETS=sm_90a \
  "-DKPORT_ONLY_VARIANTS=gemm.wgmma_tma;rmsnorm.vec16" >"$work/ok.log" 2>&1 ||
  { cat "$work/ok.log"; fail "configuring with two variants failed"; }
info=$work/ok/generated/target_info_sm_90a.cpp
[[ -f $info ]] || fail "no $info"
for id in gemm.wgmma_tma rmsnorm.vec16; do
  grep -q "{\"$id\", \"[^\"]*\", \"\"}" "$info" || fail "$id is not among the variants built: $(cat "$info")"
done
for id in gemm.simt attention.wgmma_tma softmax.vec16 gemm_fp8.wgmma_tma; do
  grep -q "{\"$id\", \"[^\"]*\", \"excluded from this build (not in KPORT_ONLY_VARIANTS)\"}" "$info" ||
    fail "$id is not reported excluded: $(cat "$info")"
done
# A variant the target cannot run keeps its own reason.
grep -q '{"gemm.tcgen05", "[^"]*", "missing features: tcgen05,tmem"}' "$info" || fail "gemm.tcgen05's reason changed"
if cmake -S "$src" -B "$work/typo" -G Ninja -DKPORT_CUDA_TARGETS=sm_90a \
  "-DKPORT_ONLY_VARIANTS=gemm.wgmma" >"$work/typo.log" 2>&1; then
  fail "a name that is no variant was accepted"
fi
grep -q "KPORT_ONLY_VARIANTS names 'gemm.wgmma', which is no variant of this tree" "$work/typo.log" ||
  { cat "$work/typo.log"; fail "the refusal does not name the unknown variant"; }
echo "PASS"
