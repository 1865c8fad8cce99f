#include "version.h"

#include <string>

// Defined in the generated build_stamp.cpp (kernels/CMakeLists.txt); only this file reads
// them, so a new commit recompiles one file.
namespace kport::harness::detail {
extern const char k_build_version[];
extern const char k_build_commit[];
extern const char k_build_date[];
}  // namespace kport::harness::detail

namespace kport::harness {

const BuildStamp& build_stamp() noexcept {
  static const BuildStamp stamp{detail::k_build_version, detail::k_build_commit, detail::k_build_date};
  return stamp;
}

Json version_json(std::string_view target) {
  const BuildStamp& b = build_stamp();
  return Json{{"program", "kport-harness-" + std::string(target)},
              {"version", std::string(b.version)},
              {"commit", std::string(b.commit)},
              {"built", std::string(b.date)},
              {"target", std::string(target)}};
}

}  // namespace kport::harness
