// Whether code compiled for an nvcc target loads on a GPU. Host-only.
#pragma once

#include <string>

namespace kport::harness {

// Code built for `target` ("sm_90a", "sm_100f", "sm_80") loads on a GPU of compute
// capability major.minor when: "a" targets - that exact arch; "f" targets and plain
// targets - the same major with an equal or higher minor (binary compatibility within a
// major). False for strings that are not sm_<digits>[a|f].
bool target_runs_on(const std::string& target, int major, int minor);

}  // namespace kport::harness
