// /api/v1/targets, /kernels, /gpus, /repositories, /commits: the catalog and history.
#include <algorithm>

#include "codec.h"
#include "context.h"
#include "families.h"
#include "kport/porting/check_arches.h"
#include "kport/porting/gpu_agreement.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

bool valid_target_name(std::string_view s) {
  if (s.size() < 4 || s.size() > 16 || s.substr(0, 3) != "sm_") return false;
  for (char c : s.substr(3))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) return false;
  return s[3] >= '0' && s[3] <= '9';
}

// The repository of job `id`'s pipeline. invalid_argument naming `field` when the job is
// not known.
Result<std::string> job_repo(Context& ctx, std::int64_t id, const std::string& field) {
  auto job = ctx.store->get_job(id);
  if (!job.ok()) return std::move(job).error();
  if (!*job)
    return make_error(Errc::invalid_argument,
                      "field '" + field + "': job " + std::to_string(id) + " is not known to kport");
  auto pipeline = ctx.store->get_pipeline((*job)->pipeline_id);
  if (!pipeline.ok()) return std::move(pipeline).error();
  return *pipeline ? (*pipeline)->repo : std::string();
}

// The library (repository) a catalog upload is of: the build job `library` names, else
// the job the uploading runner holds; "" for an operator's upload naming no job.
Result<std::string> catalog_repo(Context& ctx, const Principal& who, const api::KernelCatalogUpload& upload) {
  if (upload.library && upload.library->job != 0) return job_repo(ctx, upload.library->job, "library.job");
  if (who.kind != Principal::Kind::runner) return std::string();
  auto runner = ctx.store->get_runner(who.runner_id);
  if (!runner.ok()) return std::move(runner).error();
  if (!*runner || !(*runner)->current_job) return std::string();
  return job_repo(ctx, *(*runner)->current_job, "the runner's job");
}

}  // namespace

void add_catalog_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "GET", "/api/v1/targets", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto r = ctx.store->list_targets();
    if (!r.ok()) return http::error_response(r.error());
    return http::json_ok(list_to_json(*r));
  });

  add_blocking(router, ctx, "GET", "/api/v1/targets/{target}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto t = ctx.store->get_target(req.param("target"));
    if (!t.ok()) return http::error_response(t.error());
    if (!*t)
      return http::error_response(make_error(Errc::not_found, "target '" + std::string(req.param("target")) +
                                                                  "' is not known; GET /api/v1/targets lists them"));
    json::object out = to_json(**t).as_object();
    auto arches = ctx.store->target_check_arches((*t)->name);
    if (!arches.ok()) return http::error_response(arches.error());
    // The arches that do check it: its own plus the registered ones.
    json::array a;
    for (const auto& x : porting::check_arches((*t)->arch, std::move(*arches))) a.emplace_back(x);
    out["check_arches"] = std::move(a);
    return http::json_ok(out);
  });

  add_blocking(router, ctx, "PUT", "/api/v1/targets/{target}", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    std::string name(req.param("target"));
    if (!valid_target_name(name))
      return http::error_response(
          make_error(Errc::invalid_argument, "target '" + name + "' is not a target string like sm_90a"));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    auto in = api::parse_target_input(*obj);
    if (!in.ok()) return http::error_response(in.error());
    db::Target t;
    t.name = name;
    t.arch = std::move(in->arch);
    t.features_json = json::serialize(in->features);
    t.toolkit = std::move(in->toolkit);
    const auto& check_arches = in->check_arches;
    auto added = ctx.store->upsert_target(t);
    if (!added.ok()) return http::error_response(added.error());
    if (!check_arches.empty())
      if (auto st = ctx.store->set_target_check_arches(name, check_arches); !st.ok())
        return http::error_response(st.error());
    auto stored = ctx.store->get_target(name);
    if (!stored.ok() || !*stored)
      return http::error_response(make_error(Errc::internal, "target vanished after upsert"));
    return http::json_response(*added ? 201 : 200, to_json(**stored));
  });

  add_blocking(router, ctx, "GET", "/api/v1/kernels", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::optional<std::string> family;
    if (auto f = req.query_or("family"); !f.empty()) family = std::string(f);
    auto r = ctx.store->list_kernel_instances(family);
    if (!r.ok()) return http::error_response(r.error());
    return http::json_ok(list_to_json(*r));
  });

  // Runners (after a build) and operators publish the instances a harness contains, and
  // the variants it knows with their features (also those it left out as not applicable).
  add_blocking(router, ctx, "PUT", "/api/v1/kernels", [&ctx](const Request& req) {
    auto who = authenticate(req, ctx);
    if (!who.ok()) return http::error_response(who.error());
    if (who->kind == Principal::Kind::anonymous)
      return http::error_response(make_error(Errc::unauthorized, "publishing kernels needs an admin or runner token"));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    auto upload = api::parse_kernel_catalog_upload(*obj);
    if (!upload.ok()) return http::error_response(upload.error());
    auto repo = catalog_repo(ctx, *who, *upload);
    if (!repo.ok()) return http::error_response(repo.error());
    // The library's families first: a declaration that does not validate stores nothing.
    if (upload->library)
      if (auto st = ctx.families->learn(*ctx.store, *repo, *upload->library); !st.ok())
        return http::error_response(st.error());
    std::vector<db::KernelVariant> variants;
    for (const auto& v : upload->variants) variants.push_back(to_kernel_variant(v));
    if (!variants.empty())
      if (auto st = ctx.store->upsert_kernel_variants(variants); !st.ok()) return http::error_response(st.error());
    std::vector<db::KernelInstance> list;
    for (const auto& k : upload->instances) {
      list.push_back(to_kernel_instance(k));
      list.back().repo = *repo;  // an instance is named within its library
    }
    if (!list.empty())
      if (auto st = ctx.store->upsert_kernel_instances(list); !st.ok()) return http::error_response(st.error());
    return http::json_ok(api::to_json(
        api::KernelCatalogStored{static_cast<std::int64_t>(list.size()), static_cast<std::int64_t>(variants.size())}));
  });

  // The op families known: kport's own and every library's a build reported.
  add_blocking(router, ctx, "GET", "/api/v1/families", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    api::FamilyList out;
    for (const auto& f : ctx.families->current()->all()) out.families.push_back(to_api_family(f));
    return http::json_ok(api::to_json(out));
  });

  add_blocking(router, ctx, "GET", "/api/v1/gpus", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto r = ctx.store->list_gpu_models();
    if (!r.ok()) return http::error_response(r.error());
    return http::json_ok(list_to_json(*r));
  });

  // Whether the GPUs of one model time the same cases alike (porting/gpu_agreement.h): per
  // pair of GPUs, over the cases both timed at one commit.
  add_blocking(router, ctx, "GET", "/api/v1/gpus/agreement", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    const std::string gpu(req.query_or("gpu"));
    if (gpu.empty() || gpu.size() > 256)
      return http::error_response(make_error(
          Errc::invalid_argument, "agreement needs gpu, a GPU model of at most 256 bytes, e.g. ?gpu=NVIDIA%20H200"));
    auto cases = ctx.store->same_cases_on_gpus(gpu);
    if (!cases.ok()) return http::error_response(cases.error());
    const auto families = ctx.families->current();
    const auto pairs = porting::gpu_agreement(*cases, [&](std::string_view family) -> std::optional<porting::Bound> {
      const porting::OpFamily* f = families->find(family);
      return f ? std::optional<porting::Bound>(f->bound()) : std::nullopt;
    });
    boost::json::array items;
    for (const auto& p : pairs) {
      boost::json::array bounds;
      for (const auto& b : p.bounds)
        bounds.push_back(boost::json::object{{"bound", porting::to_string(b.bound)},
                                             {"cases", b.cases},
                                             {"tolerance", b.tolerance},
                                             {"median_diff", b.median_diff},
                                             {"p90_diff", b.p90_diff},
                                             {"within", b.within},
                                             {"agree", b.agree}});
      auto clock = [](double mhz) { return mhz > 0 ? boost::json::value(mhz) : boost::json::value(nullptr); };
      items.push_back(boost::json::object{{"gpus", boost::json::array{p.gpu_a, p.gpu_b}},
                                          {"cases", p.cases},
                                          {"median_ratio", p.median_ratio},
                                          {"sm_clock_mhz", boost::json::array{clock(p.clock_a), clock(p.clock_b)}},
                                          {"bounds", std::move(bounds)},
                                          {"agree", p.agree},
                                          {"summary", porting::describe(p)}});
    }
    return http::json_ok(boost::json::object{{"gpu_model", gpu}, {"items", std::move(items)}});
  });

  add_blocking(router, ctx, "GET", "/api/v1/repositories", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto r = ctx.store->list_repositories();
    if (!r.ok()) return http::error_response(r.error());
    return http::json_ok(list_to_json(*r));
  });

  add_blocking(router, ctx, "POST", "/api/v1/repositories", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    Fields f(*obj, "");
    auto name = f.str("name", 128);
    auto url = f.str("url", 2048);
    if (!f.ok()) return http::error_response(f.error());
    auto repo = ctx.store->upsert_repository(name, url);
    if (!repo.ok()) return http::error_response(repo.error());
    return http::json_response(201, to_json(*repo));
  });

  add_blocking(router, ctx, "POST", "/api/v1/commits", [&ctx](const Request& req) {
    auto who = authenticate(req, ctx);
    if (!who.ok()) return http::error_response(who.error());
    if (who->kind == Principal::Kind::anonymous)
      return http::error_response(make_error(Errc::unauthorized, "recording a commit needs an admin or runner token"));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    auto in = api::parse_commit_input(*obj);
    if (!in.ok()) return http::error_response(in.error());
    db::Commit c;
    c.sha = std::move(in->sha);
    c.repo = std::move(in->repo);
    c.parent_sha = std::move(in->parent);
    c.message = std::move(in->message);
    c.author = std::move(in->author);
    c.time_ms = in->time_ms;
    if (auto st = ctx.store->put_commit(c); !st.ok()) return http::error_response(st.error());
    return http::json_response(201, to_json(c));
  });

  add_blocking(router, ctx, "GET", "/api/v1/commits/{sha}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::string sha(req.param("sha"));
    if (!is_commit_sha(sha))
      return http::error_response(
          make_error(Errc::invalid_argument, "'" + sha + "' is not a commit sha (7..64 lowercase hex digits)"));
    auto s = ctx.store->commit_summary(sha);
    if (!s.ok()) return http::error_response(s.error());
    if (!*s) return http::error_response(make_error(Errc::not_found, "commit " + sha + " is not known to kport"));
    return http::json_ok(to_json(**s));
  });
}

}  // namespace kport::coordinator
