// Writes the snapshot document kport::dispatch::Snapshot reads (schema_version 2): the
// one home of the format, so the coordinator's route and the library never disagree.
// Used by the coordinator (GET /api/v1/dispatch/snapshot); not installed with the
// library. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kport/porting/op_shape.h"
#include "kport/porting/selection.h"

namespace kport::dispatch {

struct SnapshotFigure {  // one current figure: what select_best consumes
  std::string op, dtype;
  porting::Measurement m;
};

struct SnapshotSource {
  std::string gpu_model, arch;
  std::int64_t generated_at_ms = 0;
  std::string generated_at;  // the same instant as ISO-8601 UTC
  std::vector<SnapshotFigure> figures;
  int sm_count = 0;                                      // 0: unknown
  std::vector<porting::InstanceGeometry> geometry = {};  // instances whose geometry is known
  // Per op, its family's dimension rules (porting::OpFamily::shape_rules()): written with
  // each table of the op as `dims`; an op without: every dimension plain.
  std::map<std::string, porting::ShapeRules> rules = {};
  // Per op, its family's requirements (porting::OpFamily::requirements): written with each
  // table of the op as `requires`, so a lookup rules out what the API refuses.
  std::map<std::string, std::vector<porting::ShapeRequirement>> requirements = {};
};

// The document, checksummed (FNV-1a 64 over its bytes with the checksum's digits
// zeroed). Figures are grouped per (op, dtype) and ordered, so one source always
// writes the same bytes.
std::string write_snapshot(const SnapshotSource& source);

}  // namespace kport::dispatch
