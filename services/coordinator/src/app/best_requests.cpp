// Measure requests: a user asks kport to measure a shape /api/v1/best answered without
// a measurement of it, and the request follows its one check job to a measured answer.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "claim_broker.h"
#include "codec.h"
#include "families.h"
#include "kport/common/log.h"
#include "kport/porting/op_shape.h"
#include "pipelines.h"

namespace kport::coordinator::app {
namespace json = boost::json;

namespace {

bool dtype_token(std::string_view s) {
  if (s.empty() || s.size() > 8) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

// The arch of a GPU model kport knows: one a runner registered, else one results name.
Result<std::optional<std::string>> known_arch(Context& ctx, const std::string& gpu_model) {
  auto models = ctx.store->list_gpu_models();
  if (!models.ok()) return std::move(models).error();
  for (const auto& m : *models)
    if (m.name == gpu_model) return std::optional<std::string>(m.arch);
  db::ResultFilter f;
  f.gpu_model = gpu_model;
  f.limit = 1;
  auto any = ctx.store->list_results(f);
  if (!any.ok()) return std::move(any).error();
  if (any->items.empty() || any->items.front().arch.empty()) return std::optional<std::string>{};
  return std::optional<std::string>(any->items.front().arch);
}

// What kport knows of an op: the instances the builds published and the current figures
// of a dtype on every GPU model, each of its library.
struct OpRows {
  std::vector<db::BestCandidate> ran;
  std::vector<db::KernelInstance> instances;
};

Result<OpRows> op_rows(Context& ctx, const std::string& family, const std::string& dtype) {
  OpRows out;
  auto ran = ctx.store->best_candidates("", family, dtype);
  if (!ran.ok()) return std::move(ran).error();
  auto instances = ctx.store->list_kernel_instances(family);
  if (!instances.ok()) return std::move(instances).error();
  out.ran = std::move(*ran);
  out.instances = std::move(*instances);
  return out;
}

// The library a request measures: the one asked for, which must be a registered
// repository or a library with instances of the op; else the one library the op's
// instances and figures name ("" when they name none), as /api/v1/best decides whose
// evidence answers; several are refused, naming them.
Result<std::string> measure_library(Context& ctx, const MeasureRequest& rq, const OpRows& rows) {
  std::vector<std::string> libraries;
  for (const auto& i : rows.instances) libraries.push_back(i.repo);
  for (const auto& c : rows.ran) libraries.push_back(c.repo);
  if (rq.repo.empty()) {
    auto one = one_library(libraries, "op " + rq.op, "name one in the request's field 'repo' (\"repo\": \"NAME\")");
    if (!one.ok()) return std::move(one).error();
    return one->value_or(std::string());
  }
  if (rq.repo.size() > 128)
    return make_error(Errc::invalid_argument, "field 'repo': the repository name is longer than 128 bytes");
  if (std::find(libraries.begin(), libraries.end(), rq.repo) != libraries.end()) return rq.repo;
  auto repos = ctx.store->list_repositories();
  if (!repos.ok()) return std::move(repos).error();
  std::string known;
  for (const auto& r : *repos) {
    if (r.name == rq.repo) return rq.repo;
    known += (known.empty() ? "" : ", ") + r.name;
  }
  return make_error(Errc::not_found, "field 'repo': repository '" + rq.repo + "' is not known to kport (" +
                                         (known.empty() ? std::string("none is registered") : "known: " + known) +
                                         "; POST /api/v1/repositories registers one)");
}

// Whether some instance of the family in library `repo` ("" any) runs the dtype: its
// publisher listed it, or it passed on it somewhere (as provisional answers decide).
Status family_runs(const OpRows& rows, const std::string& family, const std::string& dtype, const std::string& repo) {
  const std::optional<std::string> library = repo.empty() ? std::nullopt : std::optional<std::string>(repo);
  const std::string of = repo.empty() ? std::string() : " in library '" + repo + "'";
  bool known = false;
  for (const auto& c : rows.ran) {
    if (!of_library(c.repo, library)) continue;
    known = true;
    if (c.status == db::ResultStatus::passed) return {};
  }
  std::set<std::string> listed;
  for (const auto& i : rows.instances) {
    if (!of_library(i.repo, library)) continue;
    known = true;
    if (i.dtypes)
      for (const auto& d : *i.dtypes) {
        if (d == dtype) return {};
        listed.insert(d);
      }
  }
  if (!known)
    return make_error(
        Errc::unprocessable,
        "no instance of " + family + of + " is known yet, so there is nothing to measure (a build publishes them)");
  std::string names;
  for (const auto& d : listed) names += (names.empty() ? "" : ", ") + d;
  return make_error(Errc::unprocessable, "field 'dtype': no instance of " + family + of + " runs " + dtype +
                                             (names.empty() ? std::string() : "; they run " + names));
}

}  // namespace

Result<MeasureOpened> request_measurement(Context& ctx, const MeasureRequest& rq) {
  const auto families = ctx.families->current();
  auto family = families->family(rq.op);
  if (!family.ok())
    return make_error(family.error().code,
                      "field 'op': " + family.error().message + " (GET /api/v1/families lists the families)");
  auto shape = porting::op_shape(**family, rq.shape);
  if (!shape.ok()) return make_error(shape.error().code, "field 'shape': " + shape.error().message);
  if (auto unmet = porting::unmet_requirement(**family, shape->shape))
    return make_error(Errc::unprocessable,
                      "field 'shape': no " + rq.op + " instance runs " + shape->text + ": " + *unmet);
  if (!dtype_token(rq.dtype))
    return make_error(Errc::invalid_argument,
                      "field 'dtype': '" + rq.dtype + "' is not a dtype such as bf16, fp16 or fp32");
  auto arch = known_arch(ctx, rq.gpu_model);
  if (!arch.ok()) return std::move(arch).error();
  if (!*arch)
    return make_error(Errc::not_found,
                      "field 'gpu': GPU model '" + rq.gpu_model +
                          "' has never been seen by kport (no runner registered it and no result names it);"
                          " GET /api/v1/gpus lists the known ones");
  auto rows = op_rows(ctx, rq.op, rq.dtype);
  if (!rows.ok()) return std::move(rows).error();
  auto repo = measure_library(ctx, rq, *rows);
  if (!repo.ok()) return std::move(repo).error();
  KPORT_TRY(family_runs(*rows, rq.op, rq.dtype, *repo));

  MeasureOpened out;
  out.key = db::BestKey{rq.gpu_model, rq.op, rq.dtype, shape->shape.canonical()};
  out.repo = *repo;
  out.shape_text = shape->text;
  // A request of a library reads its rows and runs on its builds only: another
  // library's harness does not hold its instances.
  const std::optional<std::string> library = repo->empty() ? std::nullopt : std::optional<std::string>(*repo);
  auto answer = exact_answer(*ctx.store, out.key, library);
  if (!answer.ok()) return std::move(answer).error();
  if (answer->measured) {
    out.outcome = MeasureOpened::Outcome::already_measured;
    out.answer = std::move(*answer);
    return out;
  }
  auto targets = target_states(ctx, library);
  if (!targets.ok()) return std::move(targets).error();
  const MeasureAsk ask{rq.gpu_model, **arch, rq.op, rq.dtype, shape->text, out.key.shape, *repo};
  auto np = plan_measure(ask, *targets, ctx.config.max_attempts);
  if (!np && library)
    return make_error(Errc::conflict, "nothing that arch " + **arch + " (" + rq.gpu_model +
                                          ") checks has a successful build of library '" + *repo +
                                          "' yet, so there is no harness of its instances to measure with; push a "
                                          "commit of " +
                                          *repo + " or POST /api/v1/pipelines with \"repo\": \"" + *repo + "\" first");
  if (!np)
    return make_error(Errc::conflict, "nothing that arch " + **arch + " (" + rq.gpu_model +
                                          ") checks has a successful build yet, so there is no harness to measure with;"
                                          " push a commit or POST /api/v1/pipelines first");
  auto opened = ctx.store->open_best_request(out.key, out.repo, *np);
  if (!opened.ok()) return std::move(opened).error();
  out.outcome = opened->created ? MeasureOpened::Outcome::queued : MeasureOpened::Outcome::coalesced;
  out.request = std::move(opened->request);
  if (opened->created) {
    ctx.broker->notify();
    auto p = ctx.store->get_pipeline(out.request->job.pipeline_id);
    if (p.ok() && *p) ctx.events->publish("pipelines", "pipeline", json::serialize(to_json(**p)));
  }
  log::info(opened->created ? "measure request queued" : "measure request asked again",
            {{"request", out.request->id},
             {"job", out.request->job_id},
             {"gpu", rq.gpu_model},
             {"op", rq.op},
             {"dtype", rq.dtype},
             {"shape", out.key.shape},
             {"repo", out.repo},
             {"requests", out.request->requests}});
  return out;
}

Result<std::vector<MeasureState>> measure_states(Context& ctx, const std::vector<db::BestRequest>& requests) {
  // Per (GPU model, family, dtype, library): the rows a request's state reads.
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<porting::Measurement>> rows;
  std::vector<MeasureState> out;
  out.reserve(requests.size());
  for (const auto& r : requests) {
    MeasureState s;
    switch (r.job.status) {
      case db::JobStatus::queued:
      case db::JobStatus::awaiting_runner: s.state = "queued"; break;
      case db::JobStatus::running: s.state = "running"; break;
      case db::JobStatus::failed:
        s.state = "failed";
        s.reason = "its check job failed: " + r.job.failure_reason.value_or("no reason given");
        break;
      case db::JobStatus::cancelled:
        s.state = "failed";
        s.reason = "its check job was cancelled";
        break;
      case db::JobStatus::succeeded: {
        const auto key = std::make_tuple(r.key.gpu_model, r.key.family, r.key.dtype, r.repo);
        auto it = rows.find(key);
        if (it == rows.end()) {
          // A request of no library (made before libraries were told apart) reads every row.
          auto all = ctx.store->best_candidates(r.key.gpu_model, r.key.family, r.key.dtype);
          if (!all.ok()) return std::move(all).error();
          std::vector<porting::Measurement> m;
          if (r.repo.empty()) {
            m.reserve(all->size());
            for (const auto& c : *all) m.push_back(to_measurement(c));
          } else {
            m = library_measurements(*all, r.repo);
          }
          it = rows.emplace(key, std::move(m)).first;
        }
        auto shape = porting::Shape::parse(r.key.shape);
        if (shape.ok()) s.answer = exact_answer(it->second, r.key.gpu_model, r.key.dtype, *shape);
        s.state = s.answer.measured ? "measured" : "failed";
        if (!s.answer.measured)
          s.reason = "its check job finished, but no instance" +
                     (r.repo.empty() ? std::string() : " of library '" + r.repo + "'") +
                     " passed and was timed at exactly this shape on " + r.key.gpu_model +
                     " (its log: GET /api/v1/jobs/" + std::to_string(r.job_id) + "/log)";
        break;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace kport::coordinator::app
