// What a kport-harness binary is: the kport version, the git commit it was built from and
// the UTC build date, stamped by the build (cmake/build_stamp.cmake writes the harness's own
// build_stamp.cpp: the harness never links services), and the target it was built for.
// `kport-harness-<target> --version` prints version_json(). Thread-safe.
#pragma once

#include <string_view>

#include "json_out.h"

namespace kport::harness {

struct BuildStamp {
  std::string_view version;  // the CMake project version, e.g. "0.1.0"
  std::string_view commit;   // short git sha, or "unknown" when built outside a git checkout
  std::string_view date;     // UTC, ISO-8601: "2026-12-01T12:00:00Z"
};

const BuildStamp& build_stamp() noexcept;

// {"program": "kport-harness-<target>", "version", "commit", "built", "target"}.
Json version_json(std::string_view target);

}  // namespace kport::harness
