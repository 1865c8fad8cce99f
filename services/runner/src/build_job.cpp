// The catalog is taken from the commit being built when it has one: a commit that adds
// a target to porting/catalog/targets.json is built with the features it declares.
#include "kport/runner/build_job.h"

#include <fstream>
#include <sstream>

#include "kport/api/job_payload.h"
#include "kport/git/workspace.h"
#include "kport/porting/build_driver.h"
#include "kport/porting/manifest.h"
#include "kport/common/process.h"
#include "kport/runner/answers.h"
#include "parent_diff.h"
#include "publish.h"

namespace kport::runner {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

JobOutcome failed(std::string reason, bool retry = false) { return JobOutcome{false, std::move(reason), retry}; }

// The job's repository URL: the payload's repo_url, else the pipeline's repository.
Result<std::string> repository_url(CoordinatorApi& api, const ClaimedJob& job, const api::JobPayload& payload) {
  if (!payload.repo_url.empty()) return payload.repo_url;
  const std::string path = "/api/v1/pipelines/" + std::to_string(job.pipeline);
  auto pipeline = api.get_text(path);
  if (!pipeline.ok()) return std::move(pipeline).error();
  auto named = parse_pipeline_repo(*pipeline);
  if (!named.ok()) return make_error(named.error().code, "GET " + path + ": " + named.error().message);
  const std::string repo = std::move(*named);
  if (repo.empty())
    return make_error(Errc::unprocessable,
                      "pipeline " + std::to_string(job.pipeline) +
                          " names no repository; queue it with \"repo\" (POST /api/v1/repositories registers one)");
  auto list = api.get_text("/api/v1/repositories");
  if (!list.ok()) return std::move(list).error();
  auto url = parse_repository_url(*list, repo);
  if (!url.ok()) return make_error(url.error().code, "GET /api/v1/repositories: " + url.error().message);
  if (*url) return std::move(**url);
  return make_error(Errc::not_found, "repository '" + repo + "' of pipeline " + std::to_string(job.pipeline) +
                                         " is not registered (POST /api/v1/repositories {name, url})");
}

Result<porting::Catalog> load_catalog(const fs::path& checkout, const BuildSettings& s) {
  fs::path own = checkout / "porting" / "catalog" / "targets.json";
  auto c = porting::Catalog::from_file(fs::exists(own) ? own.string() : s.catalog_file);
  if (!c.ok()) return c;
  c->join(s.toolkit);
  return c;
}

}  // namespace

Result<CheckoutBuild> checkout_and_build(CoordinatorApi& api, const ClaimedJob& job, const BuildSettings& s,
                                         const std::atomic<bool>& cancel,
                                         const std::function<void(const std::string&)>& log) {
  auto payload = api::parse_job_payload(job.payload);
  if (!payload.ok())
    return make_error(Errc::unprocessable, "the job's payload cannot be read: " + payload.error().message);
  auto url = repository_url(api, job, *payload);
  if (!url.ok()) return make_error(url.error().code, "cannot find the repository to build: " + url.error().message);
  log("repository " + *url + ", commit " + job.commit + ", target " + job.target);

  fs::path ws_dir = git::workspace_dir(s.workdir / "repos", *url);
  auto ws = git::Workspace::open(*url, ws_dir);
  if (!ws.ok()) return make_error(ws.error().code, "cannot open or clone " + *url + ": " + ws.error().message);
  log(ws->cloned() ? "cloned into " + ws_dir.string() : "reusing workspace " + ws_dir.string());
  if (!ws->cloned()) {
    if (auto f = ws->fetch(); !f.ok())
      return make_error(Errc::unavailable, "cannot fetch " + *url + ": " + f.error().message);
  }
  auto sha = ws->checkout(job.commit);
  if (!sha.ok()) {
    Errc code = sha.error().code == Errc::unavailable ? Errc::unavailable : Errc::unprocessable;
    return make_error(code, "cannot check out commit " + job.commit + ": " + sha.error().message);
  }
  CheckoutBuild out;
  out.sha = *sha;
  if (auto info = ws->commit_info(*sha); info.ok()) {
    log("checked out " + *sha + " \"" + info->summary + "\" by " + info->author);
    out.parent = info->parent;
  }

  auto catalog = load_catalog(ws_dir, s);
  if (!catalog.ok())
    return make_error(Errc::unprocessable, "cannot read the target catalog: " + catalog.error().message);
  // The library: the checkout's kport.json, else its kernels/ tree (docs/MANIFEST.md).
  auto library = porting::find_library(ws_dir, payload->kernels_dir);
  if (!library.ok())
    return make_error(Errc::unprocessable,
                      "cannot build " + job.target + " at " + sha->substr(0, 12) + ": " + library.error().message);
  porting::BuildRequest req;
  req.kernels_dir = *library;
  req.checkout = ws_dir;
  out.repo_dir = ws_dir;
  out.kernels_dir = req.kernels_dir;
  req.target = job.target;
  req.build_dir = s.workdir / "build" / ws_dir.filename() / job.target;
  req.catalog = &*catalog;
  req.jobs = s.jobs;
  req.compile_timeout = s.compile_timeout;
  req.nvcc = s.nvcc;
  req.cuobjdump = s.cuobjdump;
  req.log = log;
  req.cancel = &cancel;
  req.env = s.env;
  req.only_variants = payload->variants;
  if (!req.only_variants.empty())
    log("building only " + std::to_string(req.only_variants.size()) + " variant(s) the job names");
  auto report = porting::build_target(req);
  if (!report.ok())
    return make_error(Errc::unprocessable,
                      "cannot build " + job.target + " at " + sha->substr(0, 12) + ": " + report.error().message);
  out.report = std::move(*report);
  return out;
}

JobOutcome run_build_job(CoordinatorApi& api, const ClaimedJob& job, const BuildSettings& s,
                         const std::atomic<bool>& cancel, const std::function<void(const std::string&)>& log) {
  if (job.kind != "build") return failed("this runner has the build role and cannot run a '" + job.kind + "' job");
  auto built = checkout_and_build(api, job, s, cancel, log);
  if (!built.ok()) return failed(built.error().message, built.error().code == Errc::unavailable);
  const auto& sha = built->sha;
  auto& report = built->report;
  if (report.cancelled) return failed("cancelled on request while building " + job.target);

  if (built->parent) {
    int changed = flag_resource_changes(api, *built->parent, report, log);
    log(std::to_string(changed) + " variant(s) changed resources since the parent " + built->parent->substr(0, 12));
  }
  auto published = publish_build(api, job, sha, report, log, s.env ? *s.env : Env::system(),
                                 SourceTree{built->repo_dir, built->kernels_dir});
  if (!published.ok()) return failed("built, but the upload failed: " + published.error().message, true);
  // Some variants failing does not stop the others' validation: the harness holds what
  // built, the records hold the failures, and completing the job spawns the checks.
  // Only a build with nothing to check fails.
  if (!report.validatable()) return failed(report.summary());
  if (!report.failed().empty())
    log("the harness holds the " + std::to_string(report.built()) +
        " variant(s) that built; checks run for those, "
        "the failed ones are in the build records");
  return JobOutcome{true, report.summary(), false};
}

}  // namespace kport::runner
