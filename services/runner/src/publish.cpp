#include "publish.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "kport/api/family_mapping.h"
#include "kport/common/process.h"
#include "kport/porting/manifest.h"
#include "kport/porting/variants.h"

namespace kport::runner {
namespace json = boost::json;

api::BuildRecordUpload build_record(const porting::VariantRecord& r, const std::string& commit,
                                    const std::string& artifact) {
  api::BuildRecordUpload b;
  b.commit = commit;
  b.target = r.target;
  b.family = r.family;
  b.variant = r.variant;
  // The driver's statuses and the wire's are the same four names.
  b.status = api::parse_build_outcome(porting::to_string(r.status)).value_or(api::BuildOutcome::compile_error);
  b.message = r.message;
  if (r.resources) {
    b.registers = r.resources->registers;
    b.spill_stores_bytes = r.resources->spill_stores_bytes;
    b.spill_loads_bytes = r.resources->spill_loads_bytes;
    b.shared_mem_bytes = r.resources->shared_mem_bytes;
    b.stack_frame_bytes = r.resources->stack_frame_bytes;
    b.constant_mem_bytes = r.resources->constant_mem_bytes;
  }
  if (!r.audit_json.empty()) {
    boost::system::error_code ec;
    auto audit = json::parse(r.audit_json, ec);
    if (!ec) b.instruction_audit = std::move(audit);
  }
  if (r.status == porting::VariantStatus::ok && !artifact.empty()) b.artifact = artifact;
  return b;
}

std::vector<api::KernelVariantUpload> harness_variants(const json::object& list) {
  std::vector<api::KernelVariantUpload> out;
  const auto* vs = list.if_contains("variants");
  if (!vs || !vs->is_array()) return out;
  for (const auto& v : vs->as_array()) {
    const auto* id = v.is_object() ? v.as_object().if_contains("variant") : nullptr;
    const auto* features = v.is_object() ? v.as_object().if_contains("features") : nullptr;
    if (!id || !id->is_string() || !features) continue;
    const std::string full(id->as_string());
    const auto dot = full.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == full.size()) continue;
    std::vector<std::string> names;
    if (features->is_array()) {
      for (const auto& f : features->as_array())
        if (f.is_string()) names.emplace_back(f.as_string());
    } else if (features->is_string()) {
      // The harness prints a variant's features comma separated, as its CMake call lists them.
      const std::string text(features->as_string());
      for (std::size_t at = 0; at <= text.size();) {
        auto end = std::min(text.find(',', at), text.size());
        if (end > at) names.emplace_back(text.substr(at, end - at));
        at = end + 1;
      }
    } else {
      continue;
    }
    out.push_back({full.substr(0, dot), full.substr(dot + 1), std::move(names)});
  }
  return out;
}

namespace {

// `kport-harness-<t> list` -> what PUT /api/v1/kernels takes: the instances, and every
// variant the harness knows with its features (those it left out too: a target never
// built is planned from them). An instance without a string name, family or variant is an
// Error: the harness printed a list kport cannot publish.
Result<api::KernelCatalogUpload> harness_catalog(const std::filesystem::path& harness, Env& env) {
  kport::ProcessOptions o;
  o.timeout = std::chrono::seconds(120);
  auto out = env.run_process({harness.string(), "list"}, o);
  if (!out.ok()) return std::move(out).error();
  if (out->exit_code != 0)
    return make_error(Errc::internal,
                      harness.string() + " list exited with " + std::to_string(out->exit_code) + ": " + out->output);
  boost::system::error_code ec;
  auto doc = json::parse(out->output, ec);
  if (ec || !doc.is_object()) return make_error(Errc::internal, harness.string() + " list did not print a JSON object");
  api::KernelCatalogUpload catalog;
  catalog.variants = harness_variants(doc.as_object());
  if (const auto* vs = doc.as_object().if_contains("variants"); vs && vs->is_array())
    for (const auto& v : vs->as_array()) {
      const auto* list = v.is_object() ? v.as_object().if_contains("instances") : nullptr;
      if (!list || !list->is_array()) continue;
      for (const auto& i : list->as_array()) {
        if (!i.is_object()) continue;
        const auto& io = i.as_object();
        api::KernelInstanceUpload inst;
        const std::pair<const char*, std::string*> named[] = {
            {"name", &inst.name}, {"family", &inst.family}, {"variant", &inst.variant}};
        for (const auto& [key, to] : named) {
          const auto* x = io.if_contains(key);
          if (!x || !x->is_string())
            return make_error(Errc::internal, harness.string() + " list printed an instance without a string '" + key +
                                                  "': " + json::serialize(io));
          *to = std::string(x->as_string());
        }
        if (const auto* f = io.if_contains("features")) inst.features = *f;
        // Which dtypes it runs: provisional answers offer only instances that run the one asked.
        if (const auto* d = io.if_contains("dtypes"); d && d->is_array()) {
          inst.dtypes.emplace();
          for (const auto& x : d->as_array())
            if (x.is_string()) inst.dtypes->emplace_back(x.as_string());
        }
        if (const auto* c = io.if_contains("config")) inst.config = *c;
        catalog.instances.push_back(std::move(inst));
      }
    }
  return catalog;
}

}  // namespace

std::optional<api::LibraryFamilies> library_families(const SourceTree& tree, std::int64_t job) {
  if (tree.kernels_dir.empty()) return std::nullopt;
  // The build read this manifest before it built; a tree without one declares nothing.
  auto manifest = porting::load_manifest(tree.kernels_dir / porting::k_manifest_file);
  if (!manifest.ok() || manifest->families.empty()) return std::nullopt;
  api::LibraryFamilies out;
  out.library = manifest->name;
  out.job = job;
  for (const auto& f : porting::op_families_of(*manifest)) out.families.push_back(api::to_api_family(f));
  return out;
}

void locate_sources(std::vector<api::BuildRecordUpload>& records, const SourceTree& tree) {
  if (tree.kernels_dir.empty()) return;
  // The variants' sources: a manifest's declared ones, else the kport_kernel_variant calls.
  Result<std::vector<porting::VariantSpec>> specs = std::vector<porting::VariantSpec>{};
  const auto manifest_file = tree.kernels_dir / porting::k_manifest_file;
  std::error_code exists_ec;
  if (std::filesystem::exists(manifest_file, exists_ec)) {
    auto manifest = porting::load_manifest(manifest_file);
    if (!manifest.ok()) return;
    if (manifest->cmake && !manifest->cmake->variants_from.empty()) {
      specs = porting::discover_variants(tree.kernels_dir / manifest->cmake->source_dir);
    } else if (manifest->variants) {
      for (const auto& v : *manifest->variants) {
        porting::VariantSpec spec;
        spec.family = v.family;
        spec.variant = v.name;
        spec.sources = v.sources;
        spec.dir = tree.kernels_dir;
        specs->push_back(std::move(spec));
      }
    }
  } else {
    specs = porting::discover_variants(tree.kernels_dir);
  }
  if (!specs.ok()) return;
  const std::filesystem::path root = tree.repo_dir.empty() ? tree.kernels_dir.parent_path() : tree.repo_dir;
  std::map<std::string, std::pair<std::string, int>> where;  // family.variant -> (path, line)
  for (const auto& v : *specs) {
    if (v.sources.empty()) continue;
    const std::filesystem::path file = v.dir / v.sources.front();
    std::error_code ec;
    auto rel = std::filesystem::relative(file, root, ec);
    if (ec || rel.empty() || rel.native().rfind("..", 0) == 0) continue;
    // The kernel's line: its first __global__, where a reader of the annotation looks.
    int line = 1, at = 0;
    std::ifstream in(file);
    for (std::string text; std::getline(in, text);) {
      ++at;
      if (text.find("__global__") != std::string::npos) {
        line = at;
        break;
      }
    }
    where[v.id()] = {rel.generic_string(), line};
  }
  for (auto& r : records)
    if (auto it = where.find(r.family + "." + r.variant); it != where.end()) {
      r.source_path = it->second.first;
      r.source_line = it->second.second;
    }
}

std::map<std::string, std::string> manifest_env(const std::filesystem::path& kernels_dir) {
  if (kernels_dir.empty()) return {};
  std::error_code ec;
  if (!std::filesystem::exists(kernels_dir / porting::k_manifest_file, ec)) return {};
  auto manifest = porting::load_manifest(kernels_dir / porting::k_manifest_file);
  return manifest.ok() ? manifest->env : std::map<std::string, std::string>{};
}

Status publish_build(CoordinatorApi& api, const ClaimedJob& job, const std::string& commit,
                     const porting::BuildReport& report, const std::function<void(const std::string&)>& log, Env& env,
                     const SourceTree& tree) {
  std::string artifact;
  if (!report.harness.empty()) {
    std::ifstream in(report.harness, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    std::string name = report.harness.filename().string();
    KPORT_TRY(api.put_artifact(job.id, job.attempt, report.harness_sha256, name, "harness", bytes.str()));
    artifact = report.harness_sha256;
    log("uploaded artifact " + name + " sha256 " + artifact + " (" + std::to_string(bytes.str().size()) + " bytes)");
  }
  // The harness's environment travels with its records: the GPU runner starts its check
  // and bench processes with it, as the build started its list.
  const auto library_env = manifest_env(tree.kernels_dir);
  std::vector<api::BuildRecordUpload> records;
  for (const auto& r : report.records) {
    records.push_back(build_record(r, commit, artifact));
    records.back().harness_env = library_env;
  }
  locate_sources(records, tree);
  if (!records.empty()) KPORT_TRY(api.post_build_records(job.id, job.attempt, std::move(records)));
  log("uploaded " + std::to_string(report.records.size()) + " build records");
  if (!report.harness.empty()) {
    // Its placeholders as the GPU runner reads them: {build_dir} the harness's folder.
    std::vector<std::string> vars;
    const std::filesystem::path harness_dir = report.harness.parent_path();
    std::error_code ec;
    const std::string source_dir = std::filesystem::absolute(tree.kernels_dir, ec).string();
    for (const auto& [name, value] : library_env) {
      auto v = porting::expand(value, porting::Placeholders{report.target, porting::cuda_arch_of(report.target),
                                                            harness_dir.string(), source_dir});
      if (v.ok()) vars.push_back(name + "=" + *v);
    }
    EnvWithVars with_library(env, std::move(vars));
    auto catalog = harness_catalog(report.harness, with_library);
    if (!catalog.ok()) {
      log("cannot list the harness's instances: " + catalog.error().message);
      return catalog.error();
    }
    catalog->library = library_families(tree, job.id);
    if (!catalog->instances.empty() || !catalog->variants.empty() || catalog->library) {
      KPORT_TRY(api.put_kernels(*catalog));
      log("published " + std::to_string(catalog->instances.size()) + " kernel instances of " +
          std::to_string(catalog->variants.size()) + " variants" +
          (catalog->library ? " and the " + std::to_string(catalog->library->families.size()) + " families of " +
                                  catalog->library->library
                            : std::string()));
    }
  }
  return {};
}

}  // namespace kport::runner
