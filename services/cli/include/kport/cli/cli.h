// The kport command-line tool, as a library so tests can drive it in-process.
//
//   kport --server URL [--token T] build --commit REV --target sm_100a [--repo NAME]
//
// `build` queues a pipeline for that commit and target (admin token), follows the build
// job with a progress line, prints one row per variant (status, registers, spills,
// shared memory, instruction audit) and the failure reason, if any.
// Exit codes: 0 success; 1 the build failed; 2 bad input (usage, unknown target,
// unknown repository); 3 the coordinator could not be reached or answered an error.
#pragma once

#include <boost/json.hpp>

#include <iosfwd>
#include <string>

namespace kport::cli {

inline constexpr int k_exit_ok = 0, k_exit_failed = 1, k_exit_usage = 2, k_exit_unavailable = 3;

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// The per-variant table for build records (GET /api/v1/builds items), sorted by variant.
std::string format_build_table(const boost::json::array& records);

}  // namespace kport::cli
