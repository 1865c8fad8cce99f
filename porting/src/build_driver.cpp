// Orchestration of build_target(): plan, configure, compile in parallel, exclude what
// failed, link. The kernels project is configured twice only when something failed:
// the first configure must list every applicable variant so each has a compile command.
#include "kport/porting/build_driver.h"

#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "build_steps.h"
#include "kport/porting/manifest.h"

namespace kport::porting {
namespace fs = std::filesystem;

const char* to_string(VariantStatus s) {
  switch (s) {
    case VariantStatus::ok: return "ok";
    case VariantStatus::not_applicable: return "not_applicable";
    case VariantStatus::compile_error: return "compile_error";
    case VariantStatus::timeout: return "timeout";
  }
  return "compile_error";
}

std::vector<const VariantRecord*> BuildReport::failed() const {
  std::vector<const VariantRecord*> out;
  for (const auto& r : records)
    if (r.status == VariantStatus::compile_error || r.status == VariantStatus::timeout) out.push_back(&r);
  return out;
}

int BuildReport::built() const {
  return static_cast<int>(std::count_if(records.begin(), records.end(),
                                        [](const VariantRecord& r) { return r.status == VariantStatus::ok; }));
}

bool BuildReport::validatable() const {
  // A target where nothing applies is not a failure of the build (its harness is empty,
  // as the planner says); one where everything that applies failed is.
  return !cancelled && !harness.empty() && (built() > 0 || failed().empty());
}

std::string BuildReport::summary() const {
  const int ok = built();
  const auto bad = failed();
  const auto na = records.size() - bad.size() - static_cast<std::size_t>(ok);
  std::string out = std::to_string(ok) + " variant" + (ok == 1 ? "" : "s") + " built, " + std::to_string(na) +
                    " not applicable on " + target;
  if (!bad.empty()) {
    out += "; " + std::to_string(bad.size()) + " of " + std::to_string(records.size()) + " variants failed on " +
           target + ": ";
    for (std::size_t i = 0; i < bad.size(); ++i)
      out += (i ? ", " : "") + bad[i]->id() + " (" + to_string(bad[i]->status) + ")";
  }
  if (!harness_error.empty())
    out += "; " + harness_error;
  else if (harness.empty() && !cancelled)
    out += "; no harness was linked";
  return out;
}

bool BuildReport::all_ok() const {
  if (harness.empty() || cancelled) return false;
  return std::none_of(records.begin(), records.end(), [](const VariantRecord& r) {
    return r.status == VariantStatus::compile_error || r.status == VariantStatus::timeout;
  });
}

namespace {

// The joined catalog, with `entry` added when it was derived, as the CMake project reads it.
Status write_catalog(const Catalog& catalog, const TargetEntry& entry, const fs::path& file) {
  auto doc = boost::json::parse(catalog.to_json());
  auto& targets = doc.as_object()["targets"].as_object();
  if (!targets.contains(entry.name)) {
    boost::json::array features;
    for (const auto& f : entry.features) features.emplace_back(f);
    targets[entry.name] = boost::json::object{{"arch", entry.arch},
                                              {"features", std::move(features)},
                                              {"max_dynamic_smem_per_block", entry.max_dynamic_smem_per_block}};
  }
  std::ofstream out(file);
  out << boost::json::serialize(doc);
  if (!out) return make_error(Errc::internal, "cannot write " + file.string());
  return {};
}

std::string summary(const VariantRecord& r) {
  std::string s = r.id() + " " + r.target + ": " + to_string(r.status);
  if (r.resources)
    s += " (regs " + std::to_string(r.resources->registers) + ", spills " +
         std::to_string(r.resources->spill_stores_bytes) + "/" + std::to_string(r.resources->spill_loads_bytes) +
         " B, smem " + std::to_string(r.resources->shared_mem_bytes) + " B)";
  char secs[32];
  std::snprintf(secs, sizeof secs, " %.1f s", r.seconds);
  s += secs;
  if (!r.cache.empty()) s += ", ccache " + r.cache;
  return s;
}

}  // namespace

namespace detail {

// Every variant compiled on its own (the variants kport_kernel_variant calls declare in
// project.source_dir), audited, and the harness linked from those that built.
Result<BuildReport> build_variants(const BuildRequest& req, const TargetEntry& target_entry, const Project& project) {
  auto say = [&](const std::string& line) {
    if (req.log) req.log(line);
  };
  const TargetEntry* entry = &target_entry;
  auto variants = discover_variants(project.source_dir);
  if (!variants.ok()) return std::move(variants).error();

  BuildReport report;
  report.target = req.target;
  report.toolkit = req.catalog->toolkit_version();
  report.plan = make_plan(*entry, *variants);
  // Variants left out on request never reach the compiler nor the harness.
  std::vector<std::string> left_out;
  if (!req.only_variants.empty()) {
    auto wanted = [&](const VariantSpec& v) {
      return std::find(req.only_variants.begin(), req.only_variants.end(), v.id()) != req.only_variants.end();
    };
    std::vector<VariantSpec> kept;
    for (auto& v : report.plan.applicable) {
      if (wanted(v))
        kept.push_back(std::move(v));
      else
        left_out.push_back(v.id());
    }
    report.plan.applicable = std::move(kept);
    std::erase_if(report.plan.not_applicable, [&](const auto& na) { return !wanted(na.variant); });
    say("building only " + std::to_string(report.plan.applicable.size()) + " requested variant(s), " +
        std::to_string(left_out.size()) + " left out");
  }
  say("plan for " + req.target + (entry->is_new ? " (new target: derived features)" : "") + ": " +
      std::to_string(report.plan.applicable.size()) + " variants apply, " +
      std::to_string(report.plan.not_applicable.size()) + " do not");
  for (const auto& na : report.plan.not_applicable) {
    VariantRecord r;
    r.family = na.variant.family;
    r.variant = na.variant.variant;
    r.target = req.target;
    r.status = VariantStatus::not_applicable;
    r.message = na.reason();
    say(r.id() + " " + req.target + ": not applicable, " + r.message);
    report.records.push_back(std::move(r));
  }

  std::error_code ec;
  fs::create_directories(req.build_dir, ec);
  fs::path catalog_file = req.build_dir / "kport-catalog.json";
  KPORT_TRY(write_catalog(*req.catalog, *entry, catalog_file));
  std::string cmake_log;
  KPORT_TRY(detail::configure_project(req, project, catalog_file, left_out, cmake_log));
  auto objects = detail::object_files(req.build_dir);
  if (!objects.ok()) return std::move(objects).error();

  // What the compiles include that the build generates (the wgmma wrappers) is made first,
  // once, as ninja would before any of them: in a fresh build tree it does not exist yet.
  KPORT_TRY(detail::run_prerequisites(req, *objects));

  const detail::Disassembler disassembler = detail::find_disassembler(req);
  say(disassembler.cuobjdump.empty() ? "SASS audit off: " + disassembler.missing
                                     : "SASS audit with " + disassembler.cuobjdump.string());

  // The harness's own parts (core, references, main) build beside the variants, so that
  // linking after them is only a link.
  std::set<std::string> variant_objects;
  for (const auto& v : *variants)
    for (const auto& source : v.sources) {
      std::error_code fec;
      if (auto it = objects->find(fs::weakly_canonical(v.dir / source, fec)); it != objects->end())
        variant_objects.insert(it->second);
    }
  const detail::HarnessLink link = detail::harness_link(req, project, variant_objects);
  std::string own_failure;
  std::thread own_parts([&] { own_failure = detail::build_before_link(req, link.before); });

  // Compile: a fixed pool of workers takes the next variant until none is left.
  std::vector<VariantRecord> built(report.plan.applicable.size());
  std::vector<bool> done(built.size(), false);
  std::atomic<std::size_t> next{0};
  std::atomic<int> finished{0};
  std::mutex log_mutex;
  int jobs = req.jobs > 0 ? req.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto work = [&] {
    for (std::size_t i; (i = next++) < built.size();) {
      if (req.cancel && req.cancel->load()) return;
      built[i] = detail::compile_variant(req, report.plan.applicable[i], *objects, disassembler);
      done[i] = true;
      std::lock_guard lock(log_mutex);
      say("[" + std::to_string(++finished) + "/" + std::to_string(built.size()) + "] " + summary(built[i]));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::min<int>(jobs, static_cast<int>(built.size())); ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  own_parts.join();

  std::vector<std::string> excluded;
  for (std::size_t i = 0; i < built.size(); ++i) {
    if (!done[i] || built[i].cancelled) {
      report.cancelled = true;
      continue;
    }
    if (built[i].cache != "hit") ++report.compiles;
    if (built[i].status != VariantStatus::ok) excluded.push_back(built[i].id());
    report.records.push_back(std::move(built[i]));
  }
  std::sort(report.records.begin(), report.records.end(),
            [](const VariantRecord& a, const VariantRecord& b) { return a.id() < b.id(); });
  if (report.cancelled) {
    report.harness_error = "the build was cancelled";
    return report;
  }

  if (!excluded.empty()) {
    say("linking kport-harness-" + req.target + " without " + std::to_string(excluded.size()) + " failed variant(s)");
    excluded.insert(excluded.end(), left_out.begin(), left_out.end());
    if (auto st = detail::configure_project(req, project, catalog_file, excluded, cmake_log); !st.ok()) {
      report.harness_error = st.error().message;
      return report;
    }
  }
  // The variants' objects are the driver's, not ninja's: run the link itself. Through ninja
  // when ninja could not say how it links, when the harness's own parts failed (ninja
  // then says why) or when failed variants changed what links.
  std::string link_log;
  auto harness = !link.command.empty() && own_failure.empty() && excluded.empty()
                     ? detail::run_link(req, project, link)
                     : detail::link_harness(req, project, link_log);
  if (!harness.ok()) {
    report.harness_error = harness.error().message;
    say(report.harness_error);
    return report;
  }
  report.harness = *harness;
  report.harness_sha256 = detail::file_sha256(*harness);
  say("linked " + harness->string() + " sha256 " + report.harness_sha256);
  return report;
}

}  // namespace detail

Result<BuildReport> build_target(const BuildRequest& request) {
  auto say = [&](const std::string& line) {
    if (request.log) request.log(line);
  };
  if (!request.catalog) return make_error(Errc::invalid_argument, "build_target needs a catalog");
  auto entry = request.catalog->find(request.target);
  if (!entry.ok()) return std::move(entry).error();
  if (!entry->supported_by_toolkit)
    return make_error(Errc::unprocessable, "the installed CUDA toolkit " + request.catalog->toolkit_version() +
                                               " cannot build " + request.target +
                                               " (nvcc --list-gpu-code does not list its SM)");
  std::error_code ec;
  const fs::path manifest_file = request.kernels_dir / k_manifest_file;
  if (!fs::exists(manifest_file, ec)) {
    if (!fs::exists(request.kernels_dir / "cmake" / "kport_kernels.cmake", ec))
      return make_error(Errc::not_found, request.kernels_dir.string() +
                                             " has no kport.json (the library manifest, docs/MANIFEST.md) and is not "
                                             "a kport kernels tree (no cmake/kport_kernels.cmake)");
    return detail::build_variants(request, *entry, detail::legacy_project(request));
  }

  // The library's manifest says how it builds.
  const fs::path base = request.checkout.empty() ? request.kernels_dir : request.checkout;
  auto origin = fs::relative(manifest_file, base, ec);
  auto manifest =
      load_manifest(manifest_file, ec || origin.empty() ? std::string(k_manifest_file) : origin.generic_string());
  if (!manifest.ok()) {
    auto error = std::move(manifest).error();
    if (error.code == Errc::not_found) error.code = Errc::internal;  // it exists: unreadable
    return error;
  }
  if (!manifest->builds_target(request.target)) {
    std::string listed;
    for (const auto& t : manifest->targets) listed += (listed.empty() ? "" : ", ") + t;
    return make_error(Errc::unprocessable, manifest->origin + " of " + manifest->name + " does not build " +
                                               request.target + " (its targets: " + listed + ")");
  }
  const fs::path build_dir = fs::absolute(request.build_dir, ec);
  const Placeholders values{request.target, cuda_arch_of(request.target), build_dir.string(),
                            fs::absolute(request.kernels_dir, ec).string()};
  std::vector<std::string> vars;
  for (const auto& [name, value] : manifest->env) {
    auto v = expand(value, values);
    if (!v.ok())
      return make_error(Errc::invalid_argument, manifest->origin + ": env." + name + ": " + v.error().message);
    vars.push_back(name + "=" + *v);
  }
  EnvWithVars extra(detail::env_of(request), std::move(vars));
  BuildRequest req = request;
  req.env = &extra;
  say("library " + manifest->name + " (" + manifest->origin + ", manifest_version " +
      std::to_string(manifest->manifest_version) + ")");

  if (manifest->cmake && manifest->cmake->variants_from == "kport_kernel_variant") {
    auto project = detail::manifest_project(req, *manifest, values);
    if (!project.ok()) return std::move(project).error();
    return detail::build_variants(req, *entry, *project);
  }
  return detail::build_whole(req, *entry, *manifest, values);
}

}  // namespace kport::porting
