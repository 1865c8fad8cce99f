// /api/v1/results, /builds, /targets/{target}/bringup and /best: what kport measured
// and what it recommends.
#include <boost/asio/post.hpp>

#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include "best_asks.h"
#include "best_evidence.h"
#include "bringup_stages.h"
#include "codec.h"
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

constexpr std::string_view k_families[] = {"gemm", "attention", "rmsnorm", "softmax"};

bool simple_token(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// This coordinator's URL as the reader reached it: the Host header it sent (a proxy in
// front that terminates TLS says so with X-Forwarded-Proto). Without a usable Host, a
// shell variable the command's user sets.
std::string server_url(const Request& req) {
  const std::string_view host = req.header("Host");
  bool usable = !host.empty() && host.size() <= 255;
  for (char c : host)
    usable = usable && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                        c == ':' || c == '[' || c == ']');
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

// An answer as served: its body, and the counter of the question when it was not a
// measurement at the exact shape asked (BestAsks), so that a cache hit counts too.
struct ServedAnswer {
  std::string body;
  std::shared_ptr<BestAsks::Counter> unmeasured;
};

// Serialized answers by request target, each tagged with the data generation it was
// computed at. Bounded: cleared when it holds too many distinct queries.
class AnswerCache {
 public:
  std::optional<ServedAnswer> get(const std::string& key, std::uint64_t gen) const {
    std::shared_lock lock(m_mu);
    auto it = m_map.find(key);
    if (it == m_map.end() || it->second.first != gen) return std::nullopt;
    return it->second.second;
  }
  void put(const std::string& key, std::uint64_t gen, ServedAnswer answer) {
    std::unique_lock lock(m_mu);
    if (m_map.size() >= k_max_entries) m_map.clear();
    m_map[key] = {gen, std::move(answer)};
  }

 private:
  static constexpr std::size_t k_max_entries = 4096;
  mutable std::shared_mutex m_mu;
  std::unordered_map<std::string, std::pair<std::uint64_t, ServedAnswer>> m_map;
};

void count_ask(const std::shared_ptr<BestAsks::Counter>& unmeasured) {
  if (unmeasured) unmeasured->add(now_unix_ms());
}

// `unmeasured` is set when the answer is not a measurement at the exact shape asked, on
// a GPU model kport knows, for a shape the family can be measured at.
Response answer_best(const Request& req, Context& ctx, std::optional<db::BestKey>& unmeasured) {
  KPORT_AUTH(require_reader(req, ctx));
  std::string gpu(req.query_or("gpu")), op(req.query_or("op")), dtype(req.query_or("dtype"));
  std::string shape_text(req.query_or("shape"));
  if (gpu.empty() || op.empty() || dtype.empty() || shape_text.empty())
    return http::error_response(make_error(Errc::invalid_argument,
        "best needs gpu, op, dtype and shape, e.g. ?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096"));
  if (std::find(std::begin(k_families), std::end(k_families), op) == std::end(k_families))
    return http::error_response(make_error(Errc::invalid_argument, "op '" + op + "' is not one of gemm, attention, rmsnorm, softmax"));
  if (!simple_token(dtype, 8))
    return http::error_response(make_error(Errc::invalid_argument, "dtype '" + dtype + "' is not a dtype such as bf16, fp16 or fp32"));
  if (gpu.size() > 256) return http::error_response(make_error(Errc::invalid_argument, "gpu name is longer than 256 bytes"));
  auto shape = porting::Shape::parse(shape_text);
  if (!shape.ok()) return http::error_response(shape.error());

  porting::SelectionQuery q{gpu, std::string(req.query_or("arch")), std::string(req.query_or("target")), *shape, dtype};
  auto on_gpu_rows = ctx.store->best_candidates(gpu, op, dtype);
  if (!on_gpu_rows.ok()) return http::error_response(on_gpu_rows.error());
  std::vector<porting::Measurement> on_gpu, elsewhere;
  for (const auto& c : *on_gpu_rows) on_gpu.push_back(to_measurement(c));
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

  // Provisional inputs are gathered only when they may be needed.
  porting::Candidates candidates;
  bool comparable = std::any_of(on_gpu.begin(), on_gpu.end(),
                                [&](const porting::Measurement& m) { return std::isfinite(shape->distance(m.shape)); });
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
      return http::error_response(make_error(Errc::not_found, "GPU model '" + gpu +
          "' has never been seen by kport; pass arch= (e.g. 10.0) or target= (e.g. sm_100a) for a provisional answer"));
    auto targets = ctx.store->list_targets();
    if (!targets.ok()) return http::error_response(targets.error());
    if (q.target.empty()) q.target = target_for_arch(*targets, q.arch);
    if (q.target.empty())
      return http::error_response(make_error(Errc::not_found, "no target of arch " + q.arch +
          " is registered, so kport cannot tell which instances build for " + gpu + "; pass target= (e.g. sm_100a)"));
    auto target = std::find_if(targets->begin(), targets->end(), [&](const db::Target& t) { return t.name == q.target; });
    if (target == targets->end())
      return http::error_response(make_error(Errc::not_found, "target '" + q.target +
          "' is not registered (GET /api/v1/targets lists them; kport-watcher adds new ones from the catalog)"));
    if (q.arch.empty()) q.arch = target->arch;
    auto all = ctx.store->best_candidates("", op, dtype);
    if (!all.ok()) return http::error_response(all.error());
    porting::CandidateQuery cq{op, dtype, q.target, feature_list(target->features_json), false, {}, {}};
    std::set<std::string> others;
    for (const auto& c : *all) {
      if (c.status == db::ResultStatus::passed) cq.ran_dtype.push_back(c.instance);
      if (c.gpu_model != gpu) { elsewhere.push_back(to_measurement(c)); others.insert(c.gpu_model); }
    }
    db::BuildRecordFilter bf;
    bf.target = q.target;
    bf.family = op;
    bf.limit = 1;
    auto any_build = ctx.store->list_build_records(bf);
    auto built = ctx.store->built_variants(q.target, op);
    auto instances = ctx.store->list_kernel_instances(op);
    auto variants = ctx.store->list_kernel_variants(op);
    if (!variants.ok()) return http::error_response(variants.error());
    for (const auto& v : *variants) cq.variants.push_back({v.variant, feature_list(v.features_json)});
    if (!any_build.ok()) return http::error_response(any_build.error());
    if (!built.ok()) return http::error_response(built.error());
    if (!instances.ok()) return http::error_response(instances.error());
    cq.has_build = !any_build->items.empty();
    for (const auto& b : *built) cq.built_variants.push_back(b.variant);
    std::vector<porting::InstanceInfo> infos;
    for (const auto& i : *instances)
      infos.push_back({i.name, i.family, i.variant, feature_list(i.features_json), i.dtypes});
    auto found = porting::provisional_candidates(cq, infos);
    if (!found.ok()) return http::error_response(found.error());
    candidates = std::move(*found);
    for (const auto& model : others)
      if (auto st = add_drivers(model); !st.ok()) return http::error_response(st.error());
  }
  porting::SelectionInputs in{on_gpu, elsewhere, candidates.list, candidates.basis, candidates.without_instances, drivers};
  WaveInputs waves;
  // An answer from another shape moves the figures there by each instance's waves.
  const bool timed_here = std::any_of(on_gpu.begin(), on_gpu.end(),
                                      [&](const porting::Measurement& m) { return m.ranks() && m.shape == *shape; });
  if (comparable && !timed_here) {
    auto w = wave_inputs(*ctx.store, gpu, op);
    if (!w.ok()) return http::error_response(w.error());
    waves = std::move(*w);
    in.sm_count = waves.sm_count;
    in.geometry = waves.geometry;
  }
  auto sel = porting::select_best(q, in);
  json::object out = to_json(sel).as_object();
  out["query"] = json::object{{"gpu", gpu}, {"op", op}, {"dtype", dtype}, {"shape", shape->canonical()},
                              {"arch", q.arch}, {"target", q.target}};
  // Not measured at this shape: say how to have it measured (a GPU model kport knows, a
  // shape its family can run), and count the question.
  const bool measured_exactly = sel.kind == porting::Selection::Kind::measured && sel.exact_shape;
  if (!measured_exactly && known_gpu) {
    if (auto runnable = porting::op_shape(op, shape_text); runnable.ok()) {
      unmeasured = db::BestKey{gpu, op, dtype, runnable->shape.canonical()};
      out["measure"] = json::object{
          {"requests", "POST /api/v1/best/requests"},
          {"body", json::object{{"gpu", gpu}, {"op", op}, {"dtype", dtype}, {"shape", runnable->text}}},
          {"list", "GET /api/v1/best/requests?gpu=" + http::percent_encode(gpu)}};
    }
  }
  return http::json_ok(out);
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
    set("commit", f.commit_sha); set("target", f.target); set("gpu", f.gpu_model);
    set("family", f.family); set("op", f.family); set("variant", f.variant);
    set("instance", f.instance); set("dtype", f.dtype); set("shape", f.shape);
    if (f.shape) {
      auto s = porting::Shape::parse(*f.shape);
      if (!s.ok()) return http::error_response(s.error());
    }
    if (auto s = req.query_or("status"); !s.empty()) {
      f.status = db::parse_result_status(s);
      if (!f.status) return http::error_response(make_error(Errc::invalid_argument, "status must be passed, failed, crashed, timeout or unsupported"));
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
    if (!*r) return http::error_response(make_error(Errc::not_found, "result " + std::to_string(*id) + " does not exist"));
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
      if (*end != '\0' || id <= 0) return http::error_response(make_error(Errc::invalid_argument, "job must be a positive job id"));
      f.job_id = id;
    }
    if (auto v = req.query_or("status"); !v.empty()) {
      f.status = db::parse_build_status(v);
      if (!f.status) return http::error_response(make_error(Errc::invalid_argument, "status must be ok, not_applicable, compile_error or timeout"));
    }
    auto page = ctx.store->list_build_records(f);
    if (!page.ok()) return http::error_response(page.error());
    return http::json_ok(page_to_json(*page));
  });

  add_blocking(router, ctx, "GET", "/api/v1/targets/{target}/bringup", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::optional<std::string> commit;
    if (auto c = req.query_or("commit"); !c.empty()) {
      auto sha = ctx.store->resolve_commit(c);
      if (!sha.ok()) return http::error_response(sha.error());
      if (!*sha) return http::error_response(make_error(Errc::not_found, "no pipeline or record for commit '" + std::string(c) + "'"));
      commit = std::move(*sha);
    }
    auto b = ctx.store->target_board(req.param("target"), commit);
    if (!b.ok()) return http::error_response(b.error());
    if (!*b) return http::error_response(make_error(Errc::not_found, "target '" + std::string(req.param("target")) + "' is not known; GET /api/v1/targets lists them"));
    return http::json_ok(bringup_json(**b, stages_of(**b)));
  });

  // Best-kernel answers are cached per query string until the next write that can
  // change them (answers_generation); a hit is answered on the I/O thread without
  // touching the database. Only anonymous reads are cached, so no auth is skipped.
  auto cache = std::make_shared<AnswerCache>();
  router.add("GET", "/api/v1/best", [&ctx, cache](Request&& req, http::Reply reply) {
    bool cacheable = ctx.config.open_reads && req.header("Authorization").empty() && ctx.answers_generation;
    std::uint64_t gen = cacheable ? ctx.answers_generation->load(std::memory_order_acquire) : 0;
    if (cacheable) {
      if (auto hit = cache->get(req.target, gen)) {
        count_ask(hit->unmeasured);
        Response res;
        res.body = std::move(hit->body);
        return reply(std::move(res));
      }
    }
    boost::asio::post(*ctx.workers, [&ctx, cache, cacheable, gen, req = std::move(req), reply = std::move(reply)]() mutable {
      Response res;
      std::optional<db::BestKey> unmeasured;
      try {
        res = answer_best(req, ctx, unmeasured);
      } catch (const std::exception& e) {
        log::error("best-kernel answer failed", {{"error", e.what()}});
        res = http::error_response(make_error(Errc::internal, "internal error; the coordinator logged it"));
        unmeasured.reset();
      }
      std::shared_ptr<BestAsks::Counter> counter;
      if (res.status == 200 && unmeasured && ctx.best_asks) counter = ctx.best_asks->counter(*unmeasured);
      count_ask(counter);
      if (cacheable && res.status == 200) cache->put(req.target, gen, ServedAnswer{res.body, counter});
      reply(std::move(res));
    });
  }, "/api/v1/best");
}

}  // namespace kport::coordinator
