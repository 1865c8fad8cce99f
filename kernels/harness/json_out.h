// JSON output conventions of kport-harness: one JSON document on stdout per run; errors as
// {"error":{"code":..,"message":..}} with a non-zero exit code from ExitCode.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kport::harness {

using Json = nlohmann::ordered_json;

// The version of the check/bench report's form (report.h), printed as its "schema_version":
// a field renamed, rescaled or removed, in the report or a case entry, is a new version; a
// field added is not. The error document above is the same in every version. The runner
// reads reports with kport::api::parse_harness_report (services/api), which refuses a
// version it does not know.
inline constexpr int k_report_schema_version = 1;

enum ExitCode : int {
  k_exit_ok = 0,
  k_exit_failed = 1,     // a check failed (numerics) - the run itself worked
  k_exit_usage = 2,      // bad arguments, unknown instance/dtype, bad shape
  k_exit_no_device = 3,  // no CUDA device or driver
  k_exit_cuda = 4,       // CUDA error, kernel fault (sticky error: the process must end)
  k_exit_timeout = 5,    // a kernel did not finish within --timeout-s
};

struct HarnessError {
  std::string code;     // "bad_shape", "unknown_instance", "no_device", "kernel_fault", ...
  std::string message;  // what was wrong, with which input, and what to do
  int exit_code = k_exit_usage;
};

Json error_json(const HarnessError& e);
// Prints `doc` (pretty when stdout is a terminal) and a newline, flushing stdout.
void print_json(const Json& doc);
// Prints the error document and returns its exit code.
int report_error(const HarnessError& e);

}  // namespace kport::harness
