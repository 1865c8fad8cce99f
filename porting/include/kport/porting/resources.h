// Reading what the compiler says about the code it generated.
//
// parse_ptxas_verbose() reads `-Xptxas -v` output (registers, spills, shared, stack and
// constant memory per entry function). audit_ptx() counts the tensor-core instructions
// in PTX text and checks them against the features a variant declares: a variant that
// declares wgmma, tcgen05 or mma_sync but whose code has none of that instruction was
// built without it (a guard compiled it out, a wrong target) and fails the audit.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kport::porting {

struct EntryResources {
  std::string name;  // mangled entry function
  int registers = 0;
  std::int64_t spill_stores_bytes = 0, spill_loads_bytes = 0;
  std::int64_t shared_mem_bytes = 0, stack_frame_bytes = 0, constant_mem_bytes = 0;
};

// The worst entry of a unit: each figure is the maximum over its entries.
struct ResourceUsage {
  std::vector<EntryResources> entries;
  int registers = 0;
  std::int64_t spill_stores_bytes = 0, spill_loads_bytes = 0;
  std::int64_t shared_mem_bytes = 0, stack_frame_bytes = 0, constant_mem_bytes = 0;
};

ResourceUsage parse_ptxas_verbose(std::string_view compiler_output);

struct InstructionAudit {
  std::map<std::string, std::int64_t> counts;  // "wgmma" -> occurrences in the PTX
  std::vector<std::string> required;           // instruction classes the features demand
  std::vector<std::string> missing;            // required but absent
  bool passed() const { return missing.empty(); }
  std::string to_json(std::string_view source) const;  // {"source":..,"counts":{..},..}
  std::string message() const;                         // "declares wgmma but its code has no wgmma.mma_async"
};

InstructionAudit audit_ptx(std::string_view ptx, const std::vector<std::string>& declared_features);

}  // namespace kport::porting
