// The library manifest: `kport.json` at a kernel library's root says how kport builds
// that library's harness for one target, which targets to build, its variants (or that
// the built harness's `list` names them), the op families it brings, default shape
// grids, tolerances and the environment its build and harness need. docs/MANIFEST.md is
// the format; this is its one reader.
//
// Parsing is strict: a syntax error, an unknown or repeated key, a value of the wrong
// type or a repeated variant is an invalid_argument error naming the file, the line and
// the key path ("kport.json:12: key 'build.cmake.target' must be a string").
// Pure functions plus file reads; thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/result.h"
#include "kport/porting/op_shape.h"
#include "kport/porting/variants.h"

namespace kport::porting {

inline constexpr int k_manifest_version = 1;
inline constexpr std::string_view k_manifest_file = "kport.json";

// `build.cmake`: a CMake project whose `target` is the harness of one nvcc target.
struct ManifestCmake {
  std::string source_dir = ".";      // relative to the library root
  std::string target;                // the CMake target, e.g. "kport-harness-{target}"
  std::vector<std::string> options;  // extra configure arguments, e.g. "-DARCH={arch}"
  std::string harness;               // the built program, relative to the build folder; empty: found by name
  // "kport_kernel_variant": the project declares its variants with kport's CMake helper
  // (cmake/kport_kernels.cmake); each is then compiled on its own, with resources and
  // audits, and a failing one is left out of the link. Empty: the project builds whole.
  std::string variants_from;
  int line = 0;
};

// `build.command` and `build.harness`: any program that writes the harness.
struct ManifestCommand {
  std::vector<std::string> argv;  // run in the library root, no shell
  std::string harness;            // relative to the library root, or absolute through {build_dir}
  int line = 0;
};

struct ManifestVariant {
  std::string name, family;
  std::vector<std::string> features;
  std::vector<std::string> sources;  // relative to the library root; the first is the kernel
  int line = 0;
  std::string id() const { return family + "." + name; }
};

struct ManifestTolerance {
  double normwise = 0;
  std::optional<double> max_abs_rel, lse_abs;
};

struct ManifestDim {
  std::string name;
  std::optional<std::int64_t> default_value;  // an optional dimension (attention's causal)
  std::int64_t min = 1, max = k_max_dim;      // the values a shape may give it
  Shape::DimRule rule{};                      // `exact`, `weight`, `align`
  bool omit_default = false;                  // `omit_default`: its default is left out of a shape's text
  std::string full_at;                        // `full_at`: the dimension whose value means the default (OpDim)
};

struct ManifestFamily {
  std::string name;
  std::string description;
  std::vector<ManifestDim> dims;
  std::vector<std::string> dtypes;
  std::map<std::string, ManifestTolerance> tolerances;  // per dtype, over the manifest's own
  std::string flops, bytes;                             // work expressions (work_expr.h); empty: not stated
  std::string bound;                                    // "memory", "compute" or "" (not stated)
  std::string example;                         // a shape to offer a user ("m=4096,n=4096,k=4096"); may be empty
  GeometryKeys geometry;                       // which instance config keys tile which dims; empty: not declared
  std::vector<ShapeRequirement> requirements;  // `requires`: what a shape needs for any instance to run it
  int line = 0;
};

struct ManifestShapes {
  std::vector<std::string> check, bench;
};

struct Manifest {
  int manifest_version = k_manifest_version;
  std::string name;
  std::optional<ManifestCmake> cmake;
  std::optional<ManifestCommand> command;
  bool all_targets = false;                              // "targets": "all": every target the catalog and toolkit know
  std::vector<std::string> targets;                      // otherwise these
  std::optional<std::vector<ManifestVariant>> variants;  // absent: from the harness's `list`
  std::vector<ManifestFamily> families;
  std::map<std::string, ManifestShapes> shapes;         // per family
  std::map<std::string, ManifestTolerance> tolerances;  // per dtype
  std::map<std::string, std::string> env;               // placeholders allowed in values
  std::string origin = std::string(k_manifest_file);    // what errors name

  bool builds_target(std::string_view target) const;
  const ManifestFamily* family(std::string_view family_name) const;
};

// The dtypes a manifest may name (op_shape.h's known_dtypes).
const std::vector<std::string>& manifest_dtypes();

// A declared family as the services use it, with who declared it: `library` the
// manifest's name, `repo` the repository its build came from ("" built in).
OpFamily to_op_family(const ManifestFamily& f, const std::string& library, const std::string& repo = {});
std::vector<OpFamily> op_families_of(const Manifest& m, const std::string& repo = {});

// Parses and validates manifest text; errors are invalid_argument and start with
// "<origin>:<line>: ".
Result<Manifest> parse_manifest(std::string_view text, const std::string& origin = std::string(k_manifest_file));
// Reads `file`; not_found when absent. `origin` names it in errors (default: the path).
Result<Manifest> load_manifest(const std::filesystem::path& file, const std::string& origin = {});

// What {name} stands for in the build's strings: {target} "sm_90a", {arch} "90a" (as
// CMAKE_CUDA_ARCHITECTURES takes it), {build_dir}, {source_dir} (the library root).
// "{{" and "}}" are a literal brace.
struct Placeholders {
  std::string target, arch, build_dir, source_dir;
};
// invalid_argument naming the placeholder when one is unknown or a brace is unmatched.
Result<std::string> expand(std::string_view text, const Placeholders& values);
// The {arch} of an nvcc target: "sm_90a" -> "90a".
std::string cuda_arch_of(std::string_view target);

// The folder a checkout's library lives in: `subdir` when given (a job's kernels_dir),
// else the checkout itself when it holds kport.json, else its kernels/ tree when that
// holds kport.json or is a kport kernels tree (cmake/kport_kernels.cmake). not_found,
// naming kport.json, when there is none of these.
Result<std::filesystem::path> find_library(const std::filesystem::path& checkout, const std::string& subdir = {});

// The variants a harness's `list` document names (docs/harness-protocol.md), with their
// status ("built", "not_applicable", "excluded") and reason. invalid_argument when the
// text is not a list document.
struct ListedVariant {
  VariantSpec spec;
  std::string status, reason;
};
Result<std::vector<ListedVariant>> parse_list_variants(std::string_view list_json);

}  // namespace kport::porting
