// An op family between its wire form (families.h, `api::Family`: what the build runner
// reports with the kernel catalog and GET /api/v1/families answers) and the services'
// domain form (`porting::OpFamily`, op_shape.h). The one home of that mapping, for the
// services that link kport::selection as well (the build runner writes it, the
// coordinator reads and answers it); kport::api itself does not depend on it.
#pragma once

#include "kport/api/families.h"
#include "kport/porting/op_shape.h"

namespace kport::api {

// The family as reported and answered: its bound resolved (declared, else from its work
// counts).
inline Family to_api_family(const porting::OpFamily& f) {
  Family out;
  out.name = f.name;
  out.description = f.description;
  for (const auto& d : f.dims) {
    std::vector<FamilyAlignment> align;
    for (const auto& a : d.rule.alignments) align.push_back({a.quantum, a.penalty});
    out.dims.push_back(FamilyDim{d.name, d.default_value, d.min, d.max, d.rule.exact, d.rule.weight, std::move(align),
                                 d.omit_default, d.full_at});
  }
  out.dtypes = f.dtypes;
  if (!f.flops.empty()) out.flops = f.flops;
  if (!f.bytes.empty()) out.bytes = f.bytes;
  out.bound = porting::to_string(f.bound());
  if (!f.example.empty()) out.example = f.example;
  for (const auto& d : f.geometry.dims)
    out.geometry.push_back(FamilyGeometryDim{d.dim, d.tile, d.step, d.split, d.max_bytes, d.align_bytes, d.max,
                                             d.run_min_bytes, d.run_max_bytes, d.run_align_bytes, d.run_multiple});
  for (const auto& r : f.requirements) out.requirements.push_back(FamilyRequirement{r.dim, r.multiple, r.when, r.why});
  out.library = f.library;
  out.repo = f.repo;
  return out;
}

// Back to the domain form; not validated (porting::check_family does that).
inline porting::OpFamily to_op_family(const Family& f) {
  porting::OpFamily out;
  out.name = f.name;
  out.description = f.description;
  for (const auto& d : f.dims) {
    porting::Shape::DimRule rule{d.weight, {}, d.exact};
    for (const auto& a : d.align) rule.alignments.push_back({a.multiple, a.penalty});
    out.dims.push_back(
        porting::OpDim{d.name, d.default_value, d.min, d.max, std::move(rule), d.omit_default, d.full_at});
  }
  out.dtypes = f.dtypes;
  out.flops = f.flops.value_or("");
  out.bytes = f.bytes.value_or("");
  out.bound_hint = porting::parse_bound(f.bound);
  out.example = f.example.value_or("");
  for (const auto& d : f.geometry)
    out.geometry.dims.push_back(porting::DimKeys{d.dim, d.tile, d.step, d.split, d.max_bytes, d.align_bytes, d.max,
                                                 d.run_min_bytes, d.run_max_bytes, d.run_align_bytes, d.run_multiple});
  for (const auto& r : f.requirements)
    out.requirements.push_back(porting::ShapeRequirement{r.dim, r.multiple, r.when, r.why});
  out.library = f.library;
  out.repo = f.repo;
  return out;
}

}  // namespace kport::api
