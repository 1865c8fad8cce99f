#include "kport/kernels/registry.h"

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
  }
  return "unknown";
}

// A function-local static: registrars run during static initialisation of other
// translation units, in an order the linker chooses, so the vector must be built on first use.
std::vector<const Instance*>& registry() {
  static std::vector<const Instance*> instances;
  return instances;
}

const Instance* find_instance(const std::string& name) {
  for (const Instance* inst : registry())
    if (inst->name == name) return inst;
  return nullptr;
}

}  // namespace kport::kernels
