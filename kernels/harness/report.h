// The JSON document a check or bench run prints: a header (schema_version, command, target,
// device, seed), one entry per case, a summary. A fatal error (kernel fault, hang) prints
// what was collected so far with the error and ends the process.
#pragma once

#include <string>

#include "json_out.h"

namespace kport::harness {

class Report {
 public:
  Report(const std::string& command, Json device);
  void add(Json result);
  Json& doc() { return m_doc; }
  // Prints the report with `summary` counts of verdicts and returns the exit code: failed
  // cases give k_exit_failed, errors k_exit_cuda.
  int finish();
  // Prints the partial report plus the error and ends the process immediately (the CUDA
  // context may be unusable or a kernel may still be running).
  [[noreturn]] void abort(const HarnessError& e);

 private:
  Json summary() const;
  Json m_doc;
};

}  // namespace kport::harness
