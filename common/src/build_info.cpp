#include "kport/common/build_info.h"

// Defined in the generated build_stamp.cpp. Kept out of any header so that a new commit
// recompiles one file, not everything that wants the version.
namespace kport::detail {
extern const char k_build_version[];
extern const char k_build_commit[];
extern const char k_build_date[];
}  // namespace kport::detail

namespace kport {

const BuildInfo& build_info() noexcept {
  static const BuildInfo info{detail::k_build_version, detail::k_build_commit, detail::k_build_date};
  return info;
}

std::string version_text(std::string_view program) {
  const auto& b = build_info();
  std::string out;
  out.append(program).append(" ").append(b.version);
  out.append(" (commit ").append(b.commit).append(", built ").append(b.date).append(")\n");
  return out;
}

}  // namespace kport
