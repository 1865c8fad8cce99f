// The build driver: every variant of a kernels tree compiled for one target, audited,
// and linked into kport-harness-<target>; or a library described by its manifest
// (kport.json, manifest.h) built as it says.
//
// Steps: plan the target (planner.h); configure the tree's CMake project for that one
// target (ptxas verbose, ccache as the compiler launcher, the catalog written out so a
// target new to the table still configures); compile each applicable variant as its own
// unit, `jobs` at a time, each with a time limit (a hung compiler is killed and recorded
// as a timeout); read its resources from ptxas; audit its PTX (a second nvcc -ptx pass,
// cached by the content of the files the compile read); audit its SASS where a
// disassembler is found (sass_audit.h; cuobjdump next to nvcc, else on PATH; without one
// the record says "not audited" and why); reconfigure with the variants that failed
// excluded; link the harness; hash it.
//
// A failing variant never stops the others. Errors (Result) are reserved for what stops
// the whole build: a target nvcc cannot build (unprocessable), neither a kport.json nor a
// kernels tree (not_found), a kport.json that does not validate (invalid_argument, its
// line and key) or does not build the target (unprocessable), CMake configure or harness
// link failure (internal, with the output).
//
// With a manifest whose build.cmake.variants_from is "kport_kernel_variant" (kport's own
// kernels/kport.json) the steps above run on its project. Any other manifest builds its
// harness whole (its CMake target, or its command); the records are its variants, from
// the manifest or the built harness's `list`, planned against the target's features, with
// no per-variant resources or audits.
// Not thread-safe per build_dir: one build at a time in a directory.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kport/common/env.h"
#include "kport/common/result.h"
#include "kport/porting/catalog.h"
#include "kport/porting/planner.h"
#include "kport/porting/resources.h"
#include "kport/porting/sass_audit.h"

namespace kport::porting {

enum class VariantStatus { ok, not_applicable, compile_error, timeout };
const char* to_string(VariantStatus s);

struct VariantRecord {
  std::string family, variant, target;
  VariantStatus status = VariantStatus::ok;
  std::string message;                     // compiler diagnostics, audit failure, or why not applicable
  std::optional<ResourceUsage> resources;  // present when ptxas ran
  std::string audit_json;                  // {"ptx": {...}, "sass": {...}}; empty if no audit ran
  SassAudit sass;                          // the machine-code audit (audited == false: not run, and why)
  bool audit_passed = true;                // the PTX audit passed, and the SASS audit where it ran
  std::string cache;                       // "hit", "miss" or "" (ccache's verdict on the compile)
  double seconds = 0;                      // wall time of the compile and audit
  bool cancelled = false;                  // stopped by BuildRequest::cancel: not a real result
  std::string id() const { return family + "." + variant; }
};

struct BuildRequest {
  // The library: a folder with kport.json (docs/MANIFEST.md), or a kport kernels tree
  // (cmake/kport_kernels.cmake, variants found from its kport_kernel_variant calls).
  std::filesystem::path kernels_dir;
  std::filesystem::path checkout;    // what messages name paths relative to; empty: kernels_dir
  std::string target;                // "sm_90a"
  std::filesystem::path build_dir;   // kept between builds: cmake cache, objects, PTX cache
  const Catalog* catalog = nullptr;  // joined with the toolkit
  int jobs = 0;                      // parallel compiles; 0 = hardware threads
  std::chrono::seconds compile_timeout{900};
  std::chrono::seconds step_timeout{1800};  // cmake configure and harness link
  std::string nvcc = "/usr/local/cuda/bin/nvcc";
  std::string cmake = "cmake", ninja = "ninja", ccache = "ccache";
  std::string cuobjdump;                        // the SASS audit's disassembler; empty: next to nvcc, else on PATH
  std::function<void(const std::string&)> log;  // progress lines; may be called from workers
  const std::atomic<bool>* cancel = nullptr;    // kills running compiles, starts no more
  // Only these variants ("family.variant") are compiled and linked, the rest left out of
  // the harness and the records (a bisection's probe); empty: every variant.
  std::vector<std::string> only_variants;
  // Every child (cmake, ninja, nvcc, cuobjdump) starts through it, from worker threads too;
  // null: Env::system(). A test's Env injects a failing or hanging child there.
  Env* env = nullptr;
};

struct BuildReport {
  std::string target;
  std::string toolkit;
  Plan plan;
  std::vector<VariantRecord> records;  // one per variant of the tree, sorted by id
  std::filesystem::path harness;       // empty when no variant built or the link failed
  std::string harness_sha256;
  std::string harness_error;  // why there is no harness, when there is none
  int compiles = 0;           // compiles ccache could not answer (cache misses)
  bool cancelled = false;
  bool all_ok() const;                               // no compile_error or timeout, and a harness
  std::vector<const VariantRecord*> failed() const;  // compile_error or timeout, by id
  int built() const;                                 // variants with status ok
  // Whether the build can be validated: not cancelled, a harness, and at least one
  // variant in it unless none failed (a target where nothing applies). A build with some
  // failed variants is still validatable: its checks run for the variants that built,
  // and its records hold the failures.
  bool validatable() const;
  // One line for the job: what built, what did not apply, which variants failed and
  // why there is no harness (when there is none).
  std::string summary() const;
};

Result<BuildReport> build_target(const BuildRequest& request);

// nvcc's messages without the ptxas info chatter, capped to `limit` bytes.
std::string compiler_diagnostics(const std::string& output, std::size_t limit = 16384);

}  // namespace kport::porting
