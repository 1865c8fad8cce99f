#include "kport/kernels/registry.h"

#include "kport/kernels/family_def.h"

namespace kport::kernels {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::e4m3: return "e4m3";
    case DType::e5m2: return "e5m2";
  }
  return "unknown";
}

const char* family_name(Family f) {
  switch (f) {
    case Family::gemm: return "gemm";
    case Family::attention: return "attention";
    case Family::rmsnorm: return "rmsnorm";
    case Family::softmax: return "softmax";
    case Family::gemm_fp8: return "gemm_fp8";
    case Family::grouped_gemm: return "grouped_gemm";
    case Family::grouped_gemm_fp8: return "grouped_gemm_fp8";
    case Family::declared: return "declared";
  }
  return "unknown";
}

const char* family_name(const Instance& inst) {
  if (inst.family == Family::declared && inst.def != nullptr) return inst.def->name.c_str();
  return family_name(inst.family);
}

long long FamilyArgs::dim(std::string_view name) const {
  if (def == nullptr) return -1;
  for (std::size_t i = 0; i < def->dims.size() && i < std::size_t(k_max_family_dims); ++i)
    if (def->dims[i].name == name) return dims[i];
  return -1;
}

void* FamilyArgs::tensor(std::string_view name) const {
  if (def == nullptr) return nullptr;
  for (std::size_t i = 0; i < def->tensors.size() && i < std::size_t(k_max_family_tensors); ++i)
    if (def->tensors[i].name == name) return tensors[i];
  return nullptr;
}

// A function-local static: registrars run during static initialisation of other
// translation units, in an order the linker chooses, so the vector must be built on first use.
std::vector<const Instance*>& registry() {
  static std::vector<const Instance*> instances;
  return instances;
}

std::vector<const FamilyDef*>& family_registry() {
  static std::vector<const FamilyDef*> families;
  return families;
}

std::vector<const FamilyOverride*>& family_overrides() {
  static std::vector<const FamilyOverride*> overrides;
  return overrides;
}

const FamilyDef* find_family(std::string_view name) {
  for (const FamilyDef* def : family_registry())
    if (def->name == name) return def;
  return nullptr;
}

const Instance* find_instance(const std::string& name) {
  for (const Instance* inst : registry())
    if (inst->name == name) return inst;
  return nullptr;
}

}  // namespace kport::kernels
