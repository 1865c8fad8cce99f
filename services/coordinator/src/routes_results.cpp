// /api/v1/results, /builds, /targets/{target}/bringup and /best: what kport measured
// and what it recommends.
#include <boost/asio/post.hpp>

#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include "best_answer.h"
#include "best_asks.h"
#include "best_evidence.h"
#include "bringup_stages.h"
#include "codec.h"
#include "families.h"
#include "kport/common/clock.h"
#include "kport/http/uri.h"
#include "kport/porting/op_shape.h"
#include "reproduce.h"
#include "kport/common/log.h"
#include "context.h"
#include "kport/porting/selection.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

// This coordinator's URL as the reader reached it: the Host header it sent (a proxy in
// front that terminates TLS says so with X-Forwarded-Proto). Without a usable Host, a
// shell variable the command's user sets.
std::string server_url(const Request& req) {
  const std::string_view host = req.header("Host");
  bool usable = !host.empty() && host.size() <= 255;
  for (char c : host)
    usable = usable && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '-' || c == ':' || c == '[' || c == ']');
  if (!usable) return std::string(k_server_placeholder);
  return std::string(req.header("X-Forwarded-Proto") == "https" ? "https://" : "http://") + std::string(host);
}

// Feature lists as stored: ["wgmma","tma"], or a target's {"wgmma":true,...}.
std::vector<std::string> feature_list(const std::string& text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  std::vector<std::string> out;
  if (ec) return out;
  if (v.is_array()) {
    for (const auto& f : v.as_array())
      if (f.is_string()) out.emplace_back(f.as_string());
  } else if (v.is_object()) {
    for (const auto& [k, val] : v.as_object())
      if (val.is_bool() ? val.as_bool() : !val.is_null()) out.emplace_back(k);
  }
  return out;
}

// The target a GPU's answers are built for: the arch-specific ("a") target of its arch
// when the catalog has one, since that is the build that uses all of its features.
std::string target_for_arch(const std::vector<db::Target>& targets, const std::string& arch) {
  std::string best;
  for (const auto& t : targets) {
    if (t.arch != arch) continue;
    if (best.empty() || (t.name.back() == 'a' && best.back() != 'a')) best = t.name;
  }
  return best;
}

// The library a question is about (?repo=NAME), a repository kport knows; nullopt when
// not asked. not_found naming the repositories known when it is none of them.
Result<std::optional<std::string>> repo_param(const Request& req, Context& ctx) {
  const std::string name(req.query_or("repo"));
  if (name.empty()) return std::optional<std::string>{};
  auto repos = ctx.store->list_repositories();
  if (!repos.ok()) return std::move(repos).error();
  std::string known;
  for (const auto& r : *repos) {
    if (r.name == name) return std::optional<std::string>(name);
    known += (known.empty() ? "" : ", ") + r.name;
  }
  return make_error(Errc::not_found, "repository '" + name + "' is not known to kport (" +
                                         (known.empty() ? std::string("none is registered") : "known: " + known) +
                                         "; POST /api/v1/repositories registers one)");
}

// The one library (repository) `libraries` name, nullopt when they name none; when they
// name several, two libraries' instances would be ranked together: invalid_argument
// naming them, for the question to pick one with ?repo=.
Result<std::optional<std::string>> one_library(const std::vector<std::string>& libraries, const BestQuestion& q) {
  return kport::coordinator::one_library(libraries, "op " + q.op + " on " + q.gpu, "ask about one with repo=NAME");
}

Result<std::optional<std::string>> one_library(const std::vector<db::BestCandidate>& rows, const BestQuestion& q) {
  std::vector<std::string> names;
  names.reserve(rows.size());
  for (const auto& c : rows) names.push_back(c.repo);
  return one_library(names, q);
}

// A 200 with a body already serialized.
Response json_text(std::string body) {
  Response r;
  r.body = std::move(body);
  return r;
}

// The answer on the worker pool: the key's evidence loaded into the index (so the next
// questions are answered on the I/O thread), else, when no row of this GPU model is
// comparable with the shape, the provisional rule over every GPU model's evidence.
// `unmeasured` is set when the answer is not a measurement at the exact shape asked, on
// a GPU model kport knows.
Response answer_best(const Request& req, Context& ctx, std::optional<UnmeasuredAsk>& unmeasured) {
  KPORT_AUTH(require_reader(req, ctx));
  auto question = parse_best_question(req, ctx.families ? ctx.families->current() : nullptr);
  if (!question.ok()) return http::error_response(question.error());
  const BestQuestion& bq = *question;
  const std::string &gpu = bq.gpu, &op = bq.op, &dtype = bq.dtype;
  const porting::Shape* shape = &bq.shape;
  if (ctx.best_index) {
    auto entry = ctx.best_index->load(gpu, op, dtype, *bq.families);
    if (!entry.ok()) return http::error_response(entry.error());
    std::optional<AskView> ask;
    if (auto body = measured_answer(**entry, bq, ask)) {
      if (ask) unmeasured = owned(*ask);  // the views die with this answer's question and entry
      return json_text(std::move(*body));
    }
  }

  // One library's evidence: the one asked about, else the one library the evidence is of.
  auto asked_repo = repo_param(req, ctx);
  KPORT_HTTP_TRY(asked_repo);
  std::optional<std::string> repo = *asked_repo;
  porting::SelectionQuery q{gpu, bq.arch, bq.target, *shape, dtype};
  auto on_gpu_rows = ctx.store->best_candidates(gpu, op, dtype);
  if (!on_gpu_rows.ok()) return http::error_response(on_gpu_rows.error());
  if (!repo) {
    auto one = one_library(*on_gpu_rows, bq);
    KPORT_HTTP_TRY(one);
    repo = std::move(*one);
  }
  std::vector<porting::Measurement> on_gpu = library_measurements(*on_gpu_rows, repo);
  std::vector<porting::Measurement> elsewhere;
  bool known_gpu = !on_gpu.empty();
  if (!on_gpu.empty() && q.arch.empty()) q.arch = on_gpu.front().arch;
  std::vector<porting::DriverSeen> drivers;
  auto add_drivers = [&](const std::string& model) -> Status {
    auto ds = ctx.store->result_drivers(model, op, dtype);
    if (!ds.ok()) return ds.error();
    for (const auto& d : *ds) drivers.push_back({model, d.driver});
    return {};
  };
  if (auto st = add_drivers(gpu); !st.ok()) return http::error_response(st.error());

  // Which dims must match and how near two shapes are: the family's declaration.
  const porting::OpFamily* declared = bq.families->find(op);
  const porting::ShapeRules rules = declared ? declared->shape_rules() : porting::ShapeRules{};
  // Provisional inputs are gathered only when they may be needed.
  porting::Candidates candidates;
  bool comparable = std::any_of(on_gpu.begin(), on_gpu.end(), [&](const porting::Measurement& m) {
    return std::isfinite(shape->distance(m.shape, rules));
  });
  if (!comparable) {
    if (q.arch.empty() || !known_gpu) {
      auto models = ctx.store->list_gpu_models();
      if (!models.ok()) return http::error_response(models.error());
      for (const auto& m : *models)
        if (m.name == gpu) {
          known_gpu = true;
          if (q.arch.empty()) q.arch = m.arch;
        }
    }
    if (q.arch.empty() && q.target.empty())
      return http::error_response(
          make_error(Errc::not_found, "GPU model '" + gpu +
                                          "' has never been seen by kport; pass arch= (e.g. 10.0) or target= (e.g. "
                                          "sm_100a) for a provisional answer"));
    auto targets = ctx.store->list_targets();
    if (!targets.ok()) return http::error_response(targets.error());
    if (q.target.empty()) q.target = target_for_arch(*targets, q.arch);
    if (q.target.empty())
      return http::error_response(
          make_error(Errc::not_found, "no target of arch " + q.arch +
                                          " is registered, so kport cannot tell which instances build for " + gpu +
                                          "; pass target= (e.g. sm_100a)"));
    auto target =
        std::find_if(targets->begin(), targets->end(), [&](const db::Target& t) { return t.name == q.target; });
    if (target == targets->end())
      return http::error_response(make_error(
          Errc::not_found,
          "target '" + q.target +
              "' is not registered (GET /api/v1/targets lists them; kport-watcher adds new ones from the catalog)"));
    if (q.arch.empty()) q.arch = target->arch;
    auto all = ctx.store->best_candidates("", op, dtype);
    if (!all.ok()) return http::error_response(all.error());
    auto instances = ctx.store->list_kernel_instances(op);
    if (!instances.ok()) return http::error_response(instances.error());
    if (!repo) {
      std::vector<std::string> seen;
      for (const auto& c : *all) seen.push_back(c.repo);
      for (const auto& i : *instances) seen.push_back(i.repo);
      auto one = one_library(seen, bq);
      KPORT_HTTP_TRY(one);
      repo = std::move(*one);
    }
    porting::CandidateQuery cq{op, dtype, q.target, feature_list(target->features_json), false, {}, {}};
    std::set<std::string> others;
    for (const auto& c : *all) {
      if (!of_library(c.repo, repo)) continue;
      if (c.status == db::ResultStatus::passed) cq.ran_dtype.push_back(c.instance);
      if (c.gpu_model != gpu) {
        elsewhere.push_back(to_measurement(c));
        others.insert(c.gpu_model);
      }
    }
    db::BuildRecordFilter bf;
    bf.target = q.target;
    bf.family = op;
    bf.limit = 1;
    auto any_build = ctx.store->list_build_records(bf);
    auto built = ctx.store->built_variants(q.target, op, repo);
    auto variants = ctx.store->list_kernel_variants(op);
    if (!variants.ok()) return http::error_response(variants.error());
    for (const auto& v : *variants) cq.variants.push_back({v.variant, feature_list(v.features_json)});
    if (!any_build.ok()) return http::error_response(any_build.error());
    if (!built.ok()) return http::error_response(built.error());
    cq.has_build = !any_build->items.empty();
    for (const auto& b : *built) cq.built_variants.push_back(b.variant);
    std::vector<porting::InstanceInfo> infos;
    std::set<std::string> named;  // the library's own instances; one of no library by that name is left out
    for (const auto& i : *instances)
      if (!i.repo.empty() && of_library(i.repo, repo)) named.insert(i.name);
    for (const auto& i : *instances)
      if (of_library(i.repo, repo) && !(i.repo.empty() && named.count(i.name)))
        infos.push_back({i.name, i.family, i.variant, feature_list(i.features_json), i.dtypes});
    auto found = porting::provisional_candidates(cq, infos);
    if (!found.ok()) return http::error_response(found.error());
    candidates = std::move(*found);
    for (const auto& model : others)
      if (auto st = add_drivers(model); !st.ok()) return http::error_response(st.error());
  }
  porting::SelectionInputs in{on_gpu, elsewhere, candidates.list, candidates.basis, candidates.without_instances,
                              drivers};
  in.rules = &rules;
  WaveInputs waves;
  // An answer from another shape moves the figures there by each instance's waves.
  const bool timed_here = std::any_of(on_gpu.begin(), on_gpu.end(),
                                      [&](const porting::Measurement& m) { return m.ranks() && m.shape == *shape; });
  if (comparable && !timed_here) {
    auto w = wave_inputs(*ctx.store, gpu, *bq.families, op, repo);
    if (!w.ok()) return http::error_response(w.error());
    waves = std::move(*w);
    in.sm_count = waves.sm_count;
    in.geometry = waves.geometry;
  }
  auto sel = porting::select_best(q, in);
  std::string body = "{";
  JsonText w(body);
  write_members(w, sel);
  const bool measured_exactly = sel.kind == porting::Selection::Kind::measured && sel.exact_shape;
  // The ask's views are into the question and this: copied before either goes.
  const std::string answer_repo = repo.value_or("");
  std::optional<AskView> ask;
  write_question_members(w, bq, q.arch, q.target, answer_repo, measured_exactly, known_gpu, ask);
  if (ask) unmeasured = owned(*ask);
  w.raw('}');
  return json_text(std::move(body));
}

}  // namespace

void add_result_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "GET", "/api/v1/results", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::ResultFilter f;
    KPORT_HTTP_TRY(page_params(req, f.limit, f.before_id));
    auto set = [&](std::string_view key, std::optional<std::string>& slot) {
      if (auto v = req.query_or(key); !v.empty()) slot = std::string(v);
    };
    set("commit", f.commit_sha);
    set("target", f.target);
    set("gpu", f.gpu_model);
    set("family", f.family);
    set("op", f.family);
    set("variant", f.variant);
    set("instance", f.instance);
    set("dtype", f.dtype);
    set("shape", f.shape);
    if (f.shape) {
      auto s = porting::Shape::parse(*f.shape);
      if (!s.ok()) return http::error_response(s.error());
    }
    if (auto s = req.query_or("status"); !s.empty()) {
      f.status = db::parse_result_status(s);
      if (!f.status)
        return http::error_response(
            make_error(Errc::invalid_argument, "status must be passed, failed, crashed, timeout or unsupported"));
    }
    auto since = int_query(req, "since_ms", 0, INT64_MAX);
    KPORT_HTTP_TRY(since);
    if (*since) f.since_ms = **since;
    auto page = ctx.store->list_results(f);
    if (!page.ok()) return http::error_response(page.error());
    return http::json_ok(page_to_json(*page));
  });

  add_blocking(router, ctx, "GET", "/api/v1/results/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto r = ctx.store->get_result(*id);
    if (!r.ok()) return http::error_response(r.error());
    if (!*r)
      return http::error_response(make_error(Errc::not_found, "result " + std::to_string(*id) + " does not exist"));
    json::object out = to_json(**r).as_object();
    out["reproduce"] = to_json(reproduction(**r, server_url(req)));
    return http::json_ok(out);
  });

  add_blocking(router, ctx, "GET", "/api/v1/builds", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::BuildRecordFilter f;
    KPORT_HTTP_TRY(page_params(req, f.limit, f.before_id));
    if (auto v = req.query_or("commit"); !v.empty()) f.commit_sha = std::string(v);
    if (auto v = req.query_or("target"); !v.empty()) f.target = std::string(v);
    if (auto v = req.query_or("family"); !v.empty()) f.family = std::string(v);
    if (auto v = req.query_or("variant"); !v.empty()) f.variant = std::string(v);
    if (auto v = req.query_or("job"); !v.empty()) {
      char* end = nullptr;
      std::string text(v);
      long long id = std::strtoll(text.c_str(), &end, 10);
      if (*end != '\0' || id <= 0)
        return http::error_response(make_error(Errc::invalid_argument, "job must be a positive job id"));
      f.job_id = id;
    }
    if (auto v = req.query_or("status"); !v.empty()) {
      f.status = db::parse_build_status(v);
      if (!f.status)
        return http::error_response(
            make_error(Errc::invalid_argument, "status must be ok, not_applicable, compile_error or timeout"));
    }
    auto page = ctx.store->list_build_records(f);
    if (!page.ok()) return http::error_response(page.error());
    return http::json_ok(page_to_json(*page));
  });

  add_blocking(router, ctx, "GET", "/api/v1/builds/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto b = ctx.store->get_build_record(*id);
    if (!b.ok()) return http::error_response(b.error());
    if (!*b)
      return http::error_response(
          make_error(Errc::not_found, "build record " + std::to_string(*id) + " does not exist"));
    return http::json_ok(to_json(**b));
  });

  add_blocking(router, ctx, "GET", "/api/v1/targets/{target}/bringup", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::optional<std::string> commit;
    if (auto c = req.query_or("commit"); !c.empty()) {
      auto sha = ctx.store->resolve_commit(c);
      if (!sha.ok()) return http::error_response(sha.error());
      if (!*sha)
        return http::error_response(
            make_error(Errc::not_found, "no pipeline or record for commit '" + std::string(c) + "'"));
      commit = std::move(*sha);
    }
    auto repo = repo_param(req, ctx);
    KPORT_HTTP_TRY(repo);
    auto b = ctx.store->target_board(req.param("target"), commit, *repo);
    if (!b.ok()) return http::error_response(b.error());
    if (!*b)
      return http::error_response(make_error(Errc::not_found, "target '" + std::string(req.param("target")) +
                                                                  "' is not known; GET /api/v1/targets lists them"));
    return http::json_ok(bringup_json(**b, stages_of(**b)));
  });

  // A measured answer whose key's evidence is current in the index is written on the
  // I/O thread, from memory: no store, no worker hop. Only anonymous reads go that way
  // (a token may need the store to check); everything else, and every key the index
  // holds no current entry for, goes to the worker pool, which loads the entry.
  router.add(
      "GET", "/api/v1/best",
      [&ctx](Request&& req, http::Reply reply) {
        if (ctx.best_index && ctx.config.open_reads && req.header("Authorization").empty()) {
          auto question = parse_best_question(req, ctx.families ? ctx.families->current() : nullptr);
          if (!question.ok()) return reply(http::error_response(question.error()));
          if (auto entry = ctx.best_index->current(question->gpu, question->op, question->dtype, *question->families)) {
            std::optional<AskView> unmeasured;
            if (auto body = measured_answer(*entry, *question, unmeasured)) {
              if (unmeasured && ctx.best_asks) ctx.best_asks->record(*unmeasured, now_unix_ms());
              return reply(json_text(std::move(*body)));
            }
          }
        }
        boost::asio::post(*ctx.workers, [&ctx, req = std::move(req), reply = std::move(reply)]() mutable {
          Response res;
          std::optional<UnmeasuredAsk> unmeasured;
          try {
            res = answer_best(req, ctx, unmeasured);
          } catch (const std::exception& e) {
            log::error("best-kernel answer failed", {{"error", e.what()}});
            res = http::error_response(make_error(Errc::internal, "internal error; the coordinator logged it"));
            unmeasured.reset();
          }
          if (res.status == 200 && unmeasured && ctx.best_asks) ctx.best_asks->record(*unmeasured, now_unix_ms());
          reply(std::move(res));
        });
      },
      "/api/v1/best");
}

}  // namespace kport::coordinator
