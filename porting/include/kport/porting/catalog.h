// The target catalog: which nvcc targets the installed toolkit can build, joined with the
// checked-in feature table porting/catalog/targets.json.
//
// The toolkit is reached through one seam, ToolkitProbe, so tests inject a listing
// instead of running nvcc. A target the table does not know gets a conservative feature
// set derived from its SM number (never an architecture-specific feature such as wgmma
// or tcgen05) and is flagged `is_new`. Catalog is immutable after load; thread-safe reads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/env.h"
#include "kport/common/result.h"

namespace kport::porting {

// What the installed toolkit says about itself.
struct ToolkitListing {
  std::string version;                 // "13.0" (from nvcc --version)
  std::vector<std::string> gpu_codes;  // nvcc --list-gpu-code: "sm_80", "sm_90", ...
  std::vector<std::string> gpu_archs;  // nvcc --list-gpu-arch: "compute_80", ...
};

class ToolkitProbe {
 public:
  virtual ~ToolkitProbe() = default;
  // unavailable when the toolkit cannot be run; the message says which command failed.
  virtual Result<ToolkitListing> probe() = 0;
};

// Runs `<nvcc> --version`, `--list-gpu-code` and `--list-gpu-arch` through `env` (the
// machine's unless a test injects one; it must outlive the probe).
std::unique_ptr<ToolkitProbe> make_nvcc_probe(std::string nvcc = "nvcc", Env& env = Env::system());
// Parses "Cuda compilation tools, release 13.0, V13.0.88" into "13.0"; empty if absent.
std::string parse_nvcc_version(std::string_view text);

struct TargetEntry {
  std::string name;                   // "sm_90a"
  std::string arch;                   // compute capability, "9.0"
  std::vector<std::string> features;  // sorted
  std::int64_t max_dynamic_smem_per_block = 0;
  std::vector<std::string> gpus;     // product names (only the catalog has them)
  std::vector<std::string> runs_on;  // compute capabilities that can load the code
  std::string note;
  bool is_new = false;                // not in the table: features were derived
  bool supported_by_toolkit = false;  // the installed nvcc can compile for it

  bool has(std::string_view feature) const;
};

// "sm_90a" -> {90, 'a'}; nullopt for anything that is not sm_<digits>[a|f].
struct TargetName {
  int number = 0;   // 90, 100, 120
  char suffix = 0;  // 0, 'a' or 'f'
};
std::optional<TargetName> parse_target_name(std::string_view name);

// The conservative entry for a target the table does not know.
TargetEntry derive_entry(std::string_view name, const TargetName& parsed);

class Catalog {
 public:
  // Parses targets.json text; bad_json / invalid_argument name the faulty entry.
  static Result<Catalog> from_json(std::string_view json_text);
  static Result<Catalog> from_file(const std::string& path);

  // Joins the toolkit listing: marks supported targets and adds the listed ones the
  // table lacks (derived, is_new). 'a'/'f' targets are supported when their base SM is.
  void join(const ToolkitListing& listing);

  // The entry for `name`: from the table, or derived and flagged new. invalid_argument
  // when `name` is not an nvcc target string.
  Result<TargetEntry> find(std::string_view name) const;
  const std::vector<TargetEntry>& entries() const { return m_entries; }
  // Targets the joined toolkit can build, in table order.
  std::vector<std::string> supported_targets() const;
  const std::string& toolkit_version() const { return m_toolkit; }
  // The table as JSON text (targets.json shape), with derived entries included, for
  // tools (the kernels CMake project) that read the same file.
  std::string to_json() const;

 private:
  std::vector<TargetEntry> m_entries;
  std::string m_toolkit;
  std::string m_source_json;
};

}  // namespace kport::porting
