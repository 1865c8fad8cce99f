#include "tolerance.h"

#include "declared_family.h"

namespace kport::harness {

using kport::kernels::DType;
using kport::kernels::Family;

namespace {

Tolerance builtin_tolerance(Family family, DType dtype) {
  // lse is always computed in fp32 from the rounded inputs; its error grows with log(L)
  // terms only, so one absolute bound serves every shape.
  const double lse = family == Family::attention ? (dtype == DType::f32 ? 1e-4 : 2e-3) : 0.0;
  // gemm_fp8: the reference multiplies the same dequantized values, so what is left is fp32
  // accumulation (wgmma's, promoted every 128 K) and the bf16 output's rounding (2^-9
  // relative), for either fp8 input format.
  if (family == Family::gemm_fp8 || family == Family::grouped_gemm_fp8) return {6e-3, 1.6e-2, 0.0};
  switch (dtype) {
    case DType::f32: return {5e-5, 1e-4, lse};
    case DType::f16: return {3e-3, 8e-3, lse};
    case DType::bf16: return {1.2e-2, 3e-2, lse};
    case DType::e4m3:
    case DType::e5m2: return {6e-3, 1.6e-2, lse};  // only gemm_fp8 takes them (above)
  }
  return {0, 0, 0};
}

// The library's tolerance for `dtype` among `list`, if it names one.
void apply(const std::vector<kport::kernels::FamilyTolerance>& list, DType dtype, Tolerance& tol) {
  for (const auto& t : list)
    if (t.dtype == dtype) tol.normwise = t.normwise, tol.max_abs_rel = t.max_abs_rel;
}

}  // namespace

Tolerance tolerance_for(Family family, DType dtype, const kport::kernels::FamilyDef* def) {
  // A declared family is judged by the rule of kport's rowwise families: no lse.
  Tolerance tol = builtin_tolerance(family == Family::declared ? Family::softmax : family, dtype);
  if (family == Family::declared && def != nullptr) apply(def->tolerances, dtype, tol);
  const std::string name =
      family == Family::declared ? (def != nullptr ? def->name : "") : kport::kernels::family_name(family);
  if (const auto* o = find_override(name)) apply(o->tolerances, dtype, tol);
  return tol;
}

}  // namespace kport::harness
