// Internal steps of the build driver (build_driver.cpp): the CMake project of a kernels
// tree, and one variant's compile and audit. Not part of the public contract.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kport/porting/build_driver.h"

namespace kport::porting::detail {

// The seam every child of a build starts through (BuildRequest::env, else the machine's).
inline Env& env_of(const BuildRequest& request) { return request.env ? *request.env : Env::system(); }

// Configures the kernels project for request.target with `excluded` variant ids left out.
Status configure_project(const BuildRequest& request, const std::filesystem::path& catalog_file,
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

// Whether ninja would not rebuild `object` (a dry run says there is no work).
bool ninja_up_to_date(const BuildRequest& request, const std::string& object);

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

// Links kport-harness-<target>; returns its path.
Result<std::filesystem::path> link_harness(const BuildRequest& request, std::string& log);

std::string file_sha256(const std::filesystem::path& file);

}  // namespace kport::porting::detail
