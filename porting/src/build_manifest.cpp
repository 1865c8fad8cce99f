// A library built as its manifest says: one CMake target or one command writes the
// harness; the harness's `list` says what it holds.
#include <algorithm>
#include <chrono>

#include "build_steps.h"
#include "kport/common/process.h"

namespace kport::porting::detail {
namespace fs = std::filesystem;

namespace {

Result<std::vector<std::string>> expand_all(const std::vector<std::string>& in, const Placeholders& values,
                                            const std::string& what) {
  std::vector<std::string> out;
  for (const auto& s : in) {
    auto e = expand(s, values);
    if (!e.ok()) return make_error(Errc::invalid_argument, what + ": " + e.error().message);
    out.push_back(std::move(*e));
  }
  return out;
}

}  // namespace

Result<Project> manifest_project(const BuildRequest& r, const Manifest& m, const Placeholders& values) {
  const ManifestCmake& c = *m.cmake;
  Project p;
  p.source_dir = c.source_dir == "." ? r.kernels_dir : r.kernels_dir / c.source_dir;
  auto options = expand_all(c.options, values, m.origin + ": build.cmake.options");
  if (!options.ok()) return std::move(options).error();
  p.options = std::move(*options);
  auto target = expand(c.target, values);
  if (!target.ok())
    return make_error(Errc::invalid_argument, m.origin + ": build.cmake.target: " + target.error().message);
  p.harness_target = *target;
  if (!c.harness.empty()) {
    auto h = expand(c.harness, values);
    if (!h.ok()) return make_error(Errc::invalid_argument, m.origin + ": build.cmake.harness: " + h.error().message);
    p.harness = r.build_dir / *h;
  }
  p.kport_helper = c.variants_from == "kport_kernel_variant";
  return p;
}

Result<BuildReport> build_whole(const BuildRequest& req, const TargetEntry& entry, const Manifest& m,
                                const Placeholders& values) {
  auto say = [&](const std::string& line) {
    if (req.log) req.log(line);
  };
  const auto started = std::chrono::steady_clock::now();
  BuildReport report;
  report.target = req.target;
  report.toolkit = req.catalog->toolkit_version();
  std::error_code ec;
  fs::create_directories(req.build_dir, ec);
  auto cancelled = [&] { return req.cancel && req.cancel->load(); };
  auto stop = [&](std::string why) -> Result<BuildReport> {
    report.harness_error = std::move(why);
    report.cancelled = cancelled();
    if (report.cancelled) report.harness_error = "the build was cancelled";
    say(report.harness_error);
    return report;
  };

  // 1. The harness.
  fs::path harness;
  if (m.cmake) {
    auto project = manifest_project(req, m, values);
    if (!project.ok()) return std::move(project).error();
    say("building " + m.name + ": cmake target " + project->harness_target + " of " + project->source_dir.string());
    std::string log;
    KPORT_TRY(configure_project(req, *project, {}, {}, log));
    auto built = link_harness(req, *project, log);
    if (!built.ok()) return stop(built.error().message);
    harness = *built;
  } else {
    auto argv = expand_all(m.command->argv, values, m.origin + ": build.command");
    if (!argv.ok()) return std::move(argv).error();
    auto where = expand(m.command->harness, values);
    if (!where.ok()) return make_error(Errc::invalid_argument, m.origin + ": build.harness: " + where.error().message);
    std::string shown;
    for (const auto& a : *argv) shown += (shown.empty() ? "" : " ") + a;
    say("building " + m.name + ": " + shown);
    ProcessOptions o;
    o.cwd = req.kernels_dir;
    o.timeout = req.step_timeout;
    o.cancel = req.cancel;
    auto out = env_of(req).run_process(*argv, o);
    if (!out.ok()) return stop("the build command " + argv->front() + " could not start: " + out.error().message);
    if (out->timed_out)
      return stop("the build command timed out after " + std::to_string(req.step_timeout.count()) + " s:\n" +
                  tail(out->output));
    if (out->exit_code != 0)
      return stop("the build command exited " + std::to_string(out->exit_code) + ":\n" + tail(out->output));
    harness = fs::path(*where).is_absolute() ? fs::path(*where) : req.kernels_dir / *where;
    if (!fs::is_regular_file(harness, ec))
      return stop("the build command succeeded but wrote no harness at " + harness.string() + " (build.harness)");
  }
  if (cancelled()) return stop("cancelled");

  // 2. What it holds, by its own `list`.
  ProcessOptions o;
  o.timeout = std::chrono::seconds(120);
  o.split_streams = true;
  o.cancel = req.cancel;
  auto listing = env_of(req).run_process({harness.string(), "list"}, o);
  if (!listing.ok()) return stop(harness.string() + " list could not start: " + listing.error().message);
  if (listing->exit_code != 0 || listing->timed_out)
    return stop(harness.string() + " list exited " + std::to_string(listing->exit_code) + ": " +
                tail(listing->output, 2000));
  auto listed = parse_list_variants(listing->stdout_text);
  if (!listed.ok()) return stop(harness.string() + " does not speak the harness protocol: " + listed.error().message);

  std::vector<VariantSpec> specs;
  if (m.variants) {
    for (const auto& v : *m.variants) {
      VariantSpec s;
      s.family = v.family;
      s.variant = v.name;
      s.features = v.features;
      s.sources = v.sources;
      s.dir = req.kernels_dir;
      specs.push_back(std::move(s));
    }
  } else {
    for (const auto& l : *listed) specs.push_back(l.spec);
    say("variants from the harness's list: " + std::to_string(specs.size()));
  }
  if (!req.only_variants.empty()) {
    std::erase_if(specs, [&](const VariantSpec& v) {
      return std::find(req.only_variants.begin(), req.only_variants.end(), v.id()) == req.only_variants.end();
    });
    say(m.name + " builds whole: recording only the " + std::to_string(specs.size()) + " requested variant(s)");
  }
  std::sort(specs.begin(), specs.end(), [](const VariantSpec& a, const VariantSpec& b) { return a.id() < b.id(); });
  report.plan = make_plan(entry, specs);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (const auto& na : report.plan.not_applicable) {
    VariantRecord r;
    r.family = na.variant.family;
    r.variant = na.variant.variant;
    r.target = req.target;
    r.status = VariantStatus::not_applicable;
    r.message = na.reason();
    report.records.push_back(std::move(r));
  }
  for (const auto& v : report.plan.applicable) {
    VariantRecord r;
    r.family = v.family;
    r.variant = v.variant;
    r.target = req.target;
    r.seconds = seconds;
    r.sass.reason = "the library builds whole (no per-variant objects to audit)";
    auto it =
        std::find_if(listed->begin(), listed->end(), [&](const ListedVariant& l) { return l.spec.id() == v.id(); });
    if (it == listed->end()) {
      r.status = VariantStatus::compile_error;
      r.message = m.origin + " declares it, but the built harness's list does not name it";
    } else if (it->status == "built") {
      r.status = VariantStatus::ok;
    } else {
      r.status = VariantStatus::not_applicable;
      r.message = it->reason.empty() ? "the harness did not build it (" + it->status + ")" : it->reason;
    }
    report.records.push_back(std::move(r));
  }
  std::sort(report.records.begin(), report.records.end(),
            [](const VariantRecord& a, const VariantRecord& b) { return a.id() < b.id(); });
  for (const auto& r : report.records)
    say(r.id() + " " + r.target + ": " + to_string(r.status) + (r.message.empty() ? "" : ", " + r.message));
  report.harness = harness;
  report.harness_sha256 = file_sha256(harness);
  say("built " + harness.string() + " sha256 " + report.harness_sha256);
  return report;
}

}  // namespace kport::porting::detail
