// Resource changes between two builds of one variant for one target (a commit and its
// parent), as the phrases a reviewer reads: "spills 0 -> 48 B", "registers 168 -> 200".
// A figure unknown on either side is not compared. The SASS audit's counts are compared
// when both sides were audited: a path instruction class present before and gone now
// ("SASS wgmma (HGMMA..) 24 -> 0") and local-memory traffic that grew ("SASS local
// stores (STL) 0 -> 12") are changes; other count changes are not (code moves).
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kport::porting {

struct ResourceFigures {
  std::string status;  // "ok", "compile_error", ...
  std::optional<std::int64_t> registers, spill_stores_bytes, spill_loads_bytes;
  std::optional<std::int64_t> shared_mem_bytes, stack_frame_bytes;
  std::map<std::string, std::int64_t> sass;  // SASS audit class counts; empty when not audited
};

std::vector<std::string> resource_changes(const ResourceFigures& before, const ResourceFigures& after);

}  // namespace kport::porting
