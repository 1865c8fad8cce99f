// What this binary is: the kport version, the git commit it was built from and when,
// stamped by the build (cmake/build_stamp.cmake). Every executable's
// --version prints version_text(); /metrics exports kport_build_info.
//
// Header of the small kport::build_info library (the standard library alone), so that
// binaries outside kport::common (kport-dispatch) print the same line. Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace kport {

struct BuildInfo {
  std::string_view version;  // the CMake project version, e.g. "0.1.0"
  std::string_view commit;   // short git sha, or "unknown" when built outside a git checkout
  std::string_view date;     // UTC, ISO-8601: "2026-12-01T12:00:00Z"
};

const BuildInfo& build_info() noexcept;

// "PROGRAM VERSION (commit SHA, built DATE)" followed by a newline.
std::string version_text(std::string_view program);

}  // namespace kport
