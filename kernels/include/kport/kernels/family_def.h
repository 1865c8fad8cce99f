// An op family a library declares as data, so that kport's harness lists, checks and times
// its instances exactly as it does kport's own families: shapes from the dims, seeded inputs,
// poisoned outputs, the CPU reference in double, per-dtype tolerances, the grids, TFLOP/s and
// GB/s. A library defines one FamilyDef per family in a source the harness always links
// (kport_harness_family in CMake), registers it with KPORT_REGISTER_FAMILY, and points its
// instances at it (Instance{Family::declared, ..., &def}).
//
// A shape of the family is its dims as key=value pairs ("rows=4096,cols=8192"); a dim with a
// default may be left out, and the canonical shape text names every dim in the def's order.
// The definitions are read at static-initialisation time and never change; the harness checks
// each one (names, extents, grids) before it lists or runs anything and refuses a broken one
// with the error `bad_family`, naming the family and what is wrong.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kport/kernels/registry.h"

namespace kport::kernels {

struct FamilyDim {
  std::string name = {};                                  // the shape key: letters, digits, '_'
  std::optional<long long> default_value = std::nullopt;  // the value when a shape leaves the key out
  long long min = 1, max = 1LL << 30;                     // inclusive range of the value
};

enum class TensorRole { input, output };
enum class TensorType { case_dtype, f32 };  // the case's dtype, or fp32 whatever the case

struct FamilyTensor {
  std::string name = {};
  TensorRole role = TensorRole::input;
  std::vector<std::string> extent = {};  // dim names: elements = product of their values (none: 1)
  TensorType type = TensorType::case_dtype;
  float lo = -1.0f, hi = 1.0f;  // an input's values: uniform in [lo, hi) from the case's seed
};

struct FamilyTolerance {
  DType dtype;
  double normwise;     // ||out - ref||_2 / ||ref||_2 at most this
  double max_abs_rel;  // max |out - ref| at most this * max |ref|
};

// Work per call from the dims and the dtype (`a.tensors` are null).
using FamilyCount = double (*)(const FamilyArgs& a);
// The CPU reference: `inputs[i]` is input tensor i's host copy widened to float (exact for
// every dtype), `outputs[i]` where output tensor i's reference goes, in double, both indexed
// as FamilyDef::tensors (nullptr at the other role's indices). `a` holds the dims and the
// dtype; its tensor pointers are null.
using FamilyReference = void (*)(const FamilyArgs& a, const float* const* inputs, double* const* outputs);

struct FamilyDef {
  std::string name = {};         // not one of kport's (gemm, ...); letters, digits, '_'
  std::string description = {};  // one line, for `list`
  std::vector<FamilyDim> dims = {};
  std::vector<DType> dtypes = {};          // the case dtypes the family takes; every instance's are among them
  std::vector<FamilyTensor> tensors = {};  // inputs and at least one output, in FamilyArgs order
  FamilyReference reference = nullptr;
  FamilyCount flops = nullptr;  // nullptr: no TFLOP/s (a memory-bound family)
  FamilyCount bytes = nullptr;  // nullptr: every tensor once (inputs read, outputs written)
  // Per case dtype; a dtype left out takes kport's default for it (harness/tolerance.h).
  std::vector<FamilyTolerance> tolerances = {};
  std::vector<std::string> bench_grid = {};  // the shapes `bench --all` walks (at least one)
  std::vector<std::string> check_grid = {};  // the shapes `check --all` walks; empty: the bench grid
};

// A library's own grids or tolerances for a family, kport's ("softmax") or a declared one,
// registered with KPORT_OVERRIDE_FAMILY: a non-empty grid replaces the family's, a tolerance
// replaces the family's for its dtype. At most one override per family.
struct FamilyOverride {
  std::string family = {};
  std::vector<std::string> bench_grid = {};
  std::vector<std::string> check_grid = {};
  std::vector<FamilyTolerance> tolerances = {};
};

// Every family and override registered in this binary, in registration order.
std::vector<const FamilyDef*>& family_registry();
std::vector<const FamilyOverride*>& family_overrides();
const FamilyDef* find_family(std::string_view name);

struct FamilyRegistrar {
  explicit FamilyRegistrar(const FamilyDef& def) { family_registry().push_back(&def); }
  explicit FamilyRegistrar(const FamilyOverride& o) { family_overrides().push_back(&o); }
};

}  // namespace kport::kernels

// KPORT_REGISTER_FAMILY(def): `def` is a FamilyDef with static storage duration, defined in
// the same translation unit (instances in other units name it through an extern declaration).
#define KPORT_REGISTER_FAMILY(def) \
  static ::kport::kernels::FamilyRegistrar KPORT_KERNEL_CONCAT(kport_family_registrar_, __LINE__) { def }
// KPORT_OVERRIDE_FAMILY(override): `override` is a FamilyOverride with static storage duration.
#define KPORT_OVERRIDE_FAMILY(override) \
  static ::kport::kernels::FamilyRegistrar KPORT_KERNEL_CONCAT(kport_family_override_, __LINE__) { override }
