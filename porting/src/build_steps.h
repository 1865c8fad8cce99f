// Internal steps of the build driver (build_driver.cpp): the CMake project of a kernels
// tree, and one variant's compile and audit. Not part of the public contract.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kport/porting/build_driver.h"
#include "kport/porting/manifest.h"

namespace kport::porting::detail {

// The seam every child of a build starts through (BuildRequest::env, else the machine's).
inline Env& env_of(const BuildRequest& request) { return request.env ? *request.env : Env::system(); }

// The CMake project a build configures and the harness it links: a legacy kernels tree's
// own (source kernels_dir, -DKPORT_CUDA_TARGETS=<target>, bin/kport-harness-<target>), or
// what the library's manifest says.
struct Project {
  std::filesystem::path source_dir;
  std::vector<std::string> options;  // configure arguments beyond the driver's own
  std::string harness_target;        // the build target that links the harness
  std::filesystem::path harness;     // the program it writes; empty: found by its name
  bool kport_helper = true;          // configured with the -DKPORT_* settings of cmake/kport_kernels.cmake
};
Project legacy_project(const BuildRequest& request);
// The project of a manifest's build.cmake, its strings expanded.
Result<Project> manifest_project(const BuildRequest& request, const Manifest& manifest, const Placeholders& values);

// The variants of project.source_dir's kport_kernel_variant calls, each compiled and
// audited on its own, the harness linked from those that built (build_driver.cpp).
Result<BuildReport> build_variants(const BuildRequest& request, const TargetEntry& entry, const Project& project);
// A manifest's library built whole, by its CMake target or its command; its variants
// from the manifest or the harness's `list` (build_manifest.cpp).
Result<BuildReport> build_whole(const BuildRequest& request, const TargetEntry& entry, const Manifest& manifest,
                                const Placeholders& values);

// Configures the kernels project for request.target with `excluded` variant ids left out.
Status configure_project(const BuildRequest& request, const Project& project, const std::filesystem::path& catalog_file,
                         const std::vector<std::string>& excluded, std::string& log);

// Source file -> object file, from compile_commands.json of the configured project.
Result<std::map<std::filesystem::path, std::string>> object_files(const std::filesystem::path& build_dir);

// The exact command ninja runs to produce `object` (so a later ninja run is a cache hit).
Result<std::string> ninja_command(const BuildRequest& request, const std::string& object);
// The commands ninja runs before that compile when building the object from scratch
// (`ninja -t commands` but its last line): what generates the headers it includes (the
// wgmma wrappers). Each is idempotent and writes its output atomically.
Result<std::vector<std::string>> ninja_prerequisites(const BuildRequest& request, const std::string& object);
// Runs, once each and one at a time, the prerequisites of every object (what the build
// generates that compiles include), before any variant compiles: variants compile in
// parallel and share them. The first that fails is the error, with its output.
Status run_prerequisites(const BuildRequest& request, const std::map<std::filesystem::path, std::string>& objects);

// The SASS audit's tool, found once per build: request.cuobjdump when set, else
// cuobjdump beside request.nvcc, else on PATH. Empty path: none, and `missing` says why.
struct Disassembler {
  std::filesystem::path cuobjdump;
  std::string missing;
};
Disassembler find_disassembler(const BuildRequest& request);

// `cuobjdump -sass` of a variant's objects, audited for request.target.
SassAudit audit_objects(const BuildRequest& request, const Disassembler& tool, const VariantSpec& variant,
                        const std::vector<std::filesystem::path>& objects);

// Compiles and audits one variant; never fails as a whole: failures become the record.
VariantRecord compile_variant(const BuildRequest& request, const VariantSpec& variant,
                              const std::map<std::filesystem::path, std::string>& objects, const Disassembler& tool);

// How project.harness_target links once its variants' objects exist: what else the link
// reads that the build makes (the harness's core, references and main, their libraries),
// and the link command itself, as ninja would run it. The driver compiles the variants
// itself, so ninja has no record of their objects: linking through ninja would compile
// them all again (a second full compile where there is no ccache). `command` is empty when
// ninja cannot say; the caller then links through ninja.
struct HarnessLink {
  std::vector<std::string> before;  // ninja targets, built while the variants compile
  std::string output;               // the harness, relative to the build directory
  std::string command;              // run with the build directory as its working directory
};
HarnessLink harness_link(const BuildRequest& request, const Project& project,
                         const std::set<std::string>& variant_objects);
// `ninja` over those targets; empty when they built, else ninja's output.
std::string build_before_link(const BuildRequest& request, const std::vector<std::string>& targets);
// Runs the link command of `link`; returns the harness's path.
Result<std::filesystem::path> run_link(const BuildRequest& request, const Project& project, const HarnessLink& link);

// Builds project.harness_target; returns the harness's path.
Result<std::filesystem::path> link_harness(const BuildRequest& request, const Project& project, std::string& log);
// Where a build left the program named `name`: build_dir/name, build_dir/bin/name, else the
// first regular executable of that name below build_dir. Empty when there is none.
std::filesystem::path find_built_program(const std::filesystem::path& build_dir, const std::string& name);

// The output's last `n` bytes.
std::string tail(const std::string& text, std::size_t n = 8000);

std::string file_sha256(const std::filesystem::path& file);

}  // namespace kport::porting::detail
