// `kport-runner --build-local KERNELS_DIR --target T`: the build a job would run, on a
// local tree, with no coordinator: the same driver, catalog and table. For developers
// reproducing a CI build and for bench/build/run.sh.
#pragma once

#include <iosfwd>
#include <string>

#include "kport/runner/build_job.h"

namespace kport::runner {

struct LocalBuild {
  std::string kernels_dir;
  std::string target;
  std::string build_dir;
  std::string catalog_file;
  std::string nvcc = "nvcc";
  std::string cuobjdump;  // the SASS audit's disassembler; empty: beside nvcc, else PATH
  int jobs = 0;
  std::chrono::seconds compile_timeout{900};
};

// Prints progress to `err`, the per-variant table and a one-line JSON summary
// ({"target":..,"seconds":..,"compiles":..,"variants":..,"failed":..}) to `out`.
// Returns 0 when every applicable variant built and the harness linked, 1 otherwise,
// 2 for bad input (no toolkit, unknown target, not a kernels tree).
int build_locally(const LocalBuild& request, std::ostream& out, std::ostream& err);

}  // namespace kport::runner
