// The search is decided again from every probe each time one ends, never from a state
// kept between steps: a restart, or two probes ending at once, cannot leave it holding a
// stale idea of where it was. What is kept is what the rule cannot read back from the
// probes: the commits (the repository may be rewritten later), the cases with the
// verdict's figures at each end, and where the good end's first evidence came from.
#include "bisections.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>

#include "claim_broker.h"
#include "codec.h"
#include "delivery_sender.h"
#include "forge_report.h"
#include "hooks_and_verdicts.h"
#include "job_plan.h"
#include "kport/api/job_payload.h"
#include "kport/common/clock.h"
#include "kport/common/log.h"
#include "kport/porting/flake.h"
#include "verdict.h"

namespace kport::coordinator::app {
namespace json = boost::json;

namespace {

// Advancing reads the probes and writes the next ones: once at a time.
std::mutex g_advance;

constexpr int k_max_probes = 64;  // a search that needs more is not converging

// A case as the bisection keeps it.
struct CaseSpec {
  std::string key, family, variant, instance, dtype, shape;
  std::optional<double> good_us, bad_us;
  double sigma_rel = 0;
};

std::string key_of(const db::ResultRecord& r) { return r.instance + " " + r.dtype + " " + r.shape; }
std::string key_of(const db::BuildRecord& b) { return b.family + "." + b.variant; }

bool failing(db::ResultStatus s) {
  return s == db::ResultStatus::failed || s == db::ResultStatus::crashed || s == db::ResultStatus::timeout;
}
bool failing(db::BuildStatus s) { return s == db::BuildStatus::compile_error || s == db::BuildStatus::timeout; }

json::value opt(const std::optional<double>& v) { return v ? json::value(*v) : json::value(nullptr); }
std::optional<double> opt_num(const json::object& o, const char* k) {
  const auto* v = o.if_contains(k);
  if (!v || !v->is_number()) return std::nullopt;
  return v->to_number<double>();
}
std::string str(const json::object& o, const char* k) {
  const auto* v = o.if_contains(k);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

json::array cases_to_json(const std::vector<CaseSpec>& cases) {
  json::array a;
  for (const auto& c : cases)
    a.push_back(json::object{{"key", c.key},
                             {"family", c.family},
                             {"variant", c.variant},
                             {"instance", c.instance},
                             {"dtype", c.dtype},
                             {"shape", c.shape},
                             {"good_us", opt(c.good_us)},
                             {"bad_us", opt(c.bad_us)},
                             {"sigma", c.sigma_rel}});
  return a;
}

std::vector<CaseSpec> cases_from(const std::string& text) {
  std::vector<CaseSpec> out;
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_array()) return out;
  for (const auto& e : v.as_array()) {
    if (!e.is_object()) continue;
    const auto& o = e.as_object();
    CaseSpec c{str(o, "key"),         str(o, "family"),     str(o, "variant"),
               str(o, "instance"),    str(o, "dtype"),      str(o, "shape"),
               opt_num(o, "good_us"), opt_num(o, "bad_us"), opt_num(o, "sigma").value_or(0)};
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> strings_from(const std::string& text) {
  std::vector<std::string> out;
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_array()) return out;
  for (const auto& e : v.as_array())
    if (e.is_string()) out.emplace_back(e.as_string());
  return out;
}

json::object env_json(const porting::ProbeEnv& e) {
  return json::object{{"toolkit", e.toolkit}, {"driver", e.driver}, {"runner", e.runner}};
}
porting::ProbeEnv env_from(const std::string& text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return {};
  const auto& o = v.as_object();
  return porting::ProbeEnv{str(o, "toolkit"), str(o, "driver"), str(o, "runner")};
}
porting::ProbeEnv env_of(const db::ResultRecord& r) { return {r.toolkit, r.driver, r.gpu_uuid}; }

// The probe pipeline of one commit: a build of the affected variants, its checks of the
// affected cases (spawned by the store, pinned to the bisection's GPU model).
db::NewPipeline plan_probe(const db::Bisection& b, const std::vector<CaseSpec>& cases, const std::string& commit,
                           int max_attempts) {
  api::JobPayload payload;
  std::set<std::string> variants, instances;
  std::vector<api::CaseAsk> asks;
  std::set<std::string> asked;
  for (const auto& c : cases) {
    variants.insert(c.family + "." + c.variant);
    if (b.kind == "build_failure") continue;
    instances.insert(c.instance);
    if (asked.insert(c.family + " " + c.dtype + " " + c.shape).second) asks.push_back({c.family, c.dtype, c.shape});
  }
  payload.variants.assign(variants.begin(), variants.end());
  if (b.kind != "build_failure") {
    payload.cases = asks;
    payload.instances.assign(instances.begin(), instances.end());
    payload.bench = b.kind == "perf_regression";
  }
  db::NewPipeline np;
  np.reason = db::PipelineReason::manual;
  np.repo = b.repo;
  np.commit_sha = commit;
  np.note = "bisection probe of " + commit.substr(0, 12) + ": " + b.kind + " on " + b.target +
            (b.gpu_model.empty() ? "" : " / " + b.gpu_model) + " between " + b.good_sha.substr(0, 12) + " and " +
            b.bad_sha.substr(0, 12);
  db::JobSpec spec;
  spec.kind = db::JobKind::build;
  spec.commit_sha = commit;
  spec.target = b.target;
  spec.max_attempts = max_attempts;
  set_payload(spec, payload);
  np.jobs.push_back(std::move(spec));
  return np;
}

void announce_probes(Context& ctx, const db::Bisection& b, std::size_t from) {
  ctx.broker->notify();
  for (std::size_t i = from; i < b.probes.size(); ++i) {
    auto p = ctx.store->get_pipeline(b.probes[i].pipeline_id);
    if (p.ok() && *p) ctx.events->publish("pipelines", "pipeline", json::serialize(to_json(**p)));
  }
  ctx.events->publish("bisections", "bisection", json::serialize(bisection_json(b)));
}

porting::BisectInput input_of(const db::Bisection& b, const std::vector<CaseSpec>& cases) {
  porting::BisectInput in;
  in.kind = porting::bisect_kind_from(b.kind).value_or(porting::BisectKind::perf_regression);
  in.commits = strings_from(b.commits_json);
  for (const auto& c : cases) in.cases.push_back({c.key, c.good_us, c.bad_us, c.sigma_rel});
  in.good_env = env_from(b.good_env_json);
  in.bad_env = env_from(b.bad_env_json);
  return in;
}

bool ended(db::PipelineStatus s) {
  return s == db::PipelineStatus::succeeded || s == db::PipelineStatus::failed || s == db::PipelineStatus::cancelled;
}

// What one probe pipeline saw of each case.
Result<porting::ProbeFact> probe_fact(Context& ctx, const db::Bisection& b, const db::BisectionProbe& p,
                                      const std::vector<CaseSpec>& cases) {
  porting::ProbeFact f;
  f.commit = p.commit_sha;
  f.pipeline = p.pipeline_id;
  f.finished = ended(p.status);
  if (!f.finished) return f;
  auto in = ctx.store->probe_inputs(p.pipeline_id);
  if (!in.ok()) return std::move(in).error();
  // A probe that measured nothing: its jobs failed on the machine, or were cancelled.
  for (const auto& j : in->jobs) {
    if (j.status == db::JobStatus::failed && j.failure_reason && porting::infrastructure_failure(*j.failure_reason)) {
      f.end = porting::ProbeEnd::infrastructure;
      f.end_reason = std::string(db::to_string(j.kind)) + " job " + std::to_string(j.id) + ": " + *j.failure_reason;
      return f;
    }
  }
  for (const auto& j : in->jobs)
    if (j.status == db::JobStatus::cancelled) {
      f.end = porting::ProbeEnd::cancelled;
      f.end_reason = std::string(db::to_string(j.kind)) + " job " + std::to_string(j.id) + " cancelled";
      return f;
    }
  for (const auto& c : cases) {
    porting::CaseObservation o;
    o.key = c.key;
    if (b.kind == "build_failure") {
      for (const auto& r : in->builds)
        if (r.target == b.target && key_of(r) == c.key) {
          o.present = r.status != db::BuildStatus::not_applicable;
          o.failing = failing(r.status);
        }
    } else {
      for (const auto& r : in->results) {
        if (r.target != b.target || r.gpu_model != b.gpu_model || key_of(r) != c.key) continue;
        if (r.status == db::ResultStatus::unsupported) continue;
        o.present = true;
        o.failing = failing(r.status);
        o.result = r.id;
        if (r.status == db::ResultStatus::passed && r.median_us) {
          o.median_us = r.median_us;
          o.se_rel = porting::median_standard_error(r.median_us, r.stddev_us, r.samples);
        }
        if (f.env.driver.empty()) f.env = env_of(r);
      }
    }
    f.cases.push_back(std::move(o));
  }
  return f;
}

json::object outcome_json(const porting::BisectStep& s) {
  json::array suspects, effects, judged;
  for (const auto& c : s.suspects) suspects.emplace_back(c);
  for (const auto& e : s.effects)
    effects.push_back(json::object{{"case", e.key},
                                   {"good_us", e.good_us},
                                   {"bad_us", e.bad_us},
                                   {"effect", e.effect},
                                   {"uncertainty", e.uncertainty}});
  for (const auto& [commit, o] : s.judged)
    judged.push_back(json::object{{"commit", commit}, {"outcome", porting::to_string(o)}});
  return json::object{{"last_good", s.last_good ? json::value(*s.last_good) : json::value(nullptr)},
                      {"suspects", std::move(suspects)},
                      {"effects", std::move(effects)},
                      {"judged", std::move(judged)}};
}

// The repository of the pipelines of a commit, as registered.
Result<db::Repository> repository_of(Context& ctx, const db::VerdictInputs& in, const std::string& sha) {
  std::string name;
  for (const auto& j : in.jobs) {
    auto p = ctx.store->get_pipeline(j.pipeline_id);
    if (!p.ok()) return std::move(p).error();
    if (*p && !(*p)->repo.empty()) {
      name = (*p)->repo;
      break;
    }
  }
  if (name.empty())
    return make_error(Errc::unprocessable, "commit " + sha.substr(0, 12) +
                                               " has no pipeline of a registered repository: nothing to read its "
                                               "history from");
  auto repos = ctx.store->list_repositories();
  if (!repos.ok()) return std::move(repos).error();
  for (const auto& r : *repos)
    if (r.name == name) return r;
  return make_error(Errc::unprocessable, "repository '" + name + "' of commit " + sha.substr(0, 12) +
                                             " is not registered (POST /api/v1/repositories)");
}

// The cases of `kind` the bad commit's verdict counts on (target, GPU model).
Result<std::vector<std::string>> counted_cases(Context& ctx, const BisectRequest& rq) {
  auto v = commit_verdict(ctx, rq.bad);
  if (!v.ok()) return std::move(v).error();
  std::vector<std::string> keys;
  for (const auto& r : v->reasons) {
    if (r.kind != porting::to_string(rq.kind) || r.target != rq.target) continue;
    if (rq.kind == porting::BisectKind::build_failure) {
      keys.push_back(r.variant);
      continue;
    }
    if (r.gpu_model != rq.gpu_model) continue;
    auto fig = [&](const char* k) {
      auto it = r.figures.find(k);
      return it != r.figures.end() && std::holds_alternative<std::string>(it->second)
                 ? std::get<std::string>(it->second)
                 : std::string();
    };
    keys.push_back(fig("instance") + " " + fig("dtype") + " " + fig("shape"));
  }
  return keys;
}

}  // namespace

Result<BisectOpened> start_bisection(Context& ctx, const BisectRequest& rq) {
  const bool build = rq.kind == porting::BisectKind::build_failure;
  if (!build && rq.gpu_model.empty())
    return make_error(Errc::invalid_argument,
                      "a " + std::string(porting::to_string(rq.kind)) + " bisection needs 'gpu_model'");
  auto bad = ctx.store->verdict_inputs(rq.bad);
  if (!bad.ok()) return std::move(bad).error();
  if (bad->jobs.empty())
    return make_error(Errc::not_found, "commit " + rq.bad.substr(0, 12) + " has no pipeline; push it first");
  std::optional<std::string> good = rq.good;
  if (!good) {
    auto a = ctx.store->validated_ancestor(rq.bad);
    if (!a.ok()) return std::move(a).error();
    good = *a;
  }
  if (!good)
    return make_error(Errc::unprocessable,
                      "commit " + rq.bad.substr(0, 12) + " has no validated ancestor; name the good end with 'good'");
  auto base = ctx.store->verdict_inputs(*good);
  if (!base.ok()) return std::move(base).error();

  std::vector<std::string> wanted = rq.cases;
  if (wanted.empty()) {
    auto counted = counted_cases(ctx, rq);
    if (!counted.ok()) return std::move(counted).error();
    wanted = std::move(*counted);
  }
  if (wanted.empty())
    return make_error(Errc::unprocessable, "the verdict of " + rq.bad.substr(0, 12) + " counts no " +
                                               porting::to_string(rq.kind) + " on " + rq.target +
                                               (build ? "" : " / " + rq.gpu_model) + "; name the cases to follow");
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  const porting::BisectPolicy policy;
  if (static_cast<int>(wanted.size()) > policy.max_cases) wanted.resize(static_cast<std::size_t>(policy.max_cases));

  // The cases with the figures at each end; the good end's provenance.
  std::vector<CaseSpec> cases;
  porting::ProbeEnv good_env, bad_env;
  std::string arch;
  porting::NoiseBook noise;
  if (rq.kind == porting::BisectKind::perf_regression) {
    auto history = ctx.store->commit_series_history(rq.bad);
    if (!history.ok()) return std::move(history).error();
    noise = noise_book(*history);
  }
  for (const auto& key : wanted) {
    CaseSpec c;
    c.key = key;
    if (build) {
      const db::BuildRecord* now = nullptr;
      for (const auto& b : bad->builds)
        if (b.target == rq.target && key_of(b) == key) now = &b;
      if (!now || !failing(now->status))
        return make_error(Errc::invalid_argument, "variant '" + key + "' does not fail to build on " + rq.target +
                                                      " at " + rq.bad.substr(0, 12));
      c.family = now->family;
      c.variant = now->variant;
      cases.push_back(std::move(c));
      continue;
    }
    auto find = [&](const db::VerdictInputs& in) -> const db::ResultRecord* {
      for (const auto& r : in.results)
        if (r.target == rq.target && r.gpu_model == rq.gpu_model && key_of(r) == key) return &r;
      return nullptr;
    };
    const db::ResultRecord* now = find(*bad);
    const db::ResultRecord* before = find(*base);
    if (!now)
      return make_error(Errc::invalid_argument, "case '" + key + "' has no result on " + rq.target + " / " +
                                                    rq.gpu_model + " at " + rq.bad.substr(0, 12));
    c.family = now->family;
    c.variant = now->variant;
    c.instance = now->instance;
    c.dtype = now->dtype;
    c.shape = now->shape;
    if (arch.empty()) arch = now->arch;
    if (before && good_env.driver.empty()) good_env = env_of(*before);
    if (bad_env.driver.empty()) bad_env = env_of(*now);
    if (rq.kind == porting::BisectKind::perf_regression) {
      if (!before || !before->median_us || !now->median_us)
        return make_error(Errc::invalid_argument, "case '" + key + "' is not timed at both " + good->substr(0, 12) +
                                                      " and " + rq.bad.substr(0, 12));
      c.good_us = before->median_us;
      c.bad_us = now->median_us;
      if (auto m = noise.find(porting::SeriesKey{now->gpu_model, now->driver, now->instance, now->dtype, now->shape});
          m != noise.end() && m->second.enough)
        c.sigma_rel = m->second.sigma_rel;
    } else if (!failing(now->status)) {
      return make_error(Errc::invalid_argument,
                        "case '" + key + "' does not fail at " + rq.bad.substr(0, 12) + " on " + rq.gpu_model);
    }
    cases.push_back(std::move(c));
  }

  auto repo = repository_of(ctx, *bad, rq.bad);
  if (!repo.ok()) return std::move(repo).error();
  if (!ctx.commit_path) return make_error(Errc::unavailable, "this coordinator cannot read repository history");
  auto commits = ctx.commit_path(repo->url, *good, rq.bad, static_cast<std::size_t>(policy.max_commits));
  if (!commits.ok())
    return make_error(commits.error().code, "cannot read the commits from " + good->substr(0, 12) + " to " +
                                                rq.bad.substr(0, 12) + " in " + repo->name + ": " +
                                                commits.error().message);
  // Adjacent ends leave nothing to search: the verdict already names the commit.
  if (rq.origin == "auto" && commits->size() < 3)
    return BisectOpened{std::nullopt, "no commit between " + good->substr(0, 12) + " and " + rq.bad.substr(0, 12)};

  db::Bisection b;
  b.kind = porting::to_string(rq.kind);
  b.origin = rq.origin;
  b.repo = repo->name;
  b.target = rq.target;
  b.gpu_model = build ? "" : rq.gpu_model;
  b.arch = arch;
  // Every probe is timed in one environment: the bad end's driver, where a registered runner
  // of the GPU model reports it (runners of one model may run different drivers); with
  // none, any driver, as the probes could otherwise never run.
  if (!build && !bad_env.driver.empty()) {
    auto runners = ctx.store->list_runners();
    if (!runners.ok()) return std::move(runners).error();
    for (const auto& r : *runners)
      if (r.role == db::RunnerRole::gpu && r.caps.gpu_model == b.gpu_model && r.caps.driver == bad_env.driver)
        b.driver = bad_env.driver;
  }
  b.good_sha = *good;
  b.bad_sha = rq.bad;
  json::array list;
  for (const auto& c : *commits) list.emplace_back(c);
  b.commits_json = json::serialize(list);
  b.cases_json = json::serialize(cases_to_json(cases));
  b.good_env_json = json::serialize(env_json(good_env));
  b.bad_env_json = json::serialize(env_json(bad_env));
  const porting::BisectStep first = porting::next_step(input_of(b, cases), policy);
  b.summary = first.why;
  std::vector<db::NewPipeline> probes;
  for (const auto& c : first.probe) probes.push_back(plan_probe(b, cases, c, ctx.config.max_attempts));
  auto opened = ctx.store->open_bisection(b, probes);
  if (!opened.ok()) return std::move(opened).error();
  if (!*opened)
    return BisectOpened{std::nullopt, "a bisection of " + b.kind + " on " + b.target +
                                          (build ? "" : " / " + b.gpu_model) + " at " + rq.bad.substr(0, 12) +
                                          " exists already"};
  announce_probes(ctx, **opened, 0);
  log::info("bisection started", {{"bisection", (*opened)->id},
                                  {"kind", b.kind},
                                  {"target", b.target},
                                  {"gpu", b.gpu_model},
                                  {"good", b.good_sha},
                                  {"bad", b.bad_sha},
                                  {"commits", commits->size()},
                                  {"cases", cases.size()}});
  return BisectOpened{std::move(*opened), ""};
}

std::size_t start_bisections(Context& ctx, const porting::Verdict& v) {
  if (!v.baseline) return 0;
  std::map<std::tuple<std::string, std::string, std::string>, BisectRequest> groups;
  for (const auto& r : v.reasons) {
    auto kind = porting::bisect_kind_from(r.kind);
    if (!kind) continue;
    const bool build = *kind == porting::BisectKind::build_failure;
    auto& rq = groups[{r.kind, r.target, build ? "" : r.gpu_model}];
    rq.kind = *kind;
    rq.target = r.target;
    rq.gpu_model = build ? "" : r.gpu_model;
    rq.bad = v.commit;
    rq.good = v.baseline;
    rq.origin = "auto";
    if (build) {
      rq.cases.push_back(r.variant);
      continue;
    }
    auto fig = [&](const char* k) {
      auto it = r.figures.find(k);
      return it != r.figures.end() && std::holds_alternative<std::string>(it->second)
                 ? std::get<std::string>(it->second)
                 : std::string();
    };
    rq.cases.push_back(fig("instance") + " " + fig("dtype") + " " + fig("shape"));
  }
  std::size_t opened = 0;
  for (const auto& [key, rq] : groups) {
    // A reason is bisected once: asked again (every check job's completion asks), it is
    // answered from the store before the repository is read.
    db::BisectionFilter f;
    f.commit = rq.bad;
    auto known = ctx.store->list_bisections(f);
    if (!known.ok()) continue;
    const bool exists = std::any_of(known->items.begin(), known->items.end(), [&](const db::Bisection& b) {
      return b.bad_sha == rq.bad && b.kind == std::get<0>(key) && b.target == rq.target && b.gpu_model == rq.gpu_model;
    });
    if (exists) continue;
    // A baseline that is the parent leaves nothing to search, known without the repository.
    if (auto c = ctx.store->get_commit(rq.bad); c.ok() && *c && (*c)->parent_sha == rq.good) continue;
    auto started = start_bisection(ctx, rq);
    if (!started.ok()) {
      log::warn("bisection not started",
                {{"commit", rq.bad}, {"kind", std::get<0>(key)}, {"error", started.error().message}});
      continue;
    }
    if (started->bisection) ++opened;
  }
  return opened;
}

namespace {

// One line for a commit status: what the bisection found, or that it stopped.
std::string bisection_note(const db::Bisection& b) {
  if (b.state == "cancelled") return "bisection cancelled";
  if (b.state == "failed") return "bisection stopped";
  if (b.state == "running") return "bisecting";
  std::string note = b.first_bad_sha ? "first bad " + b.first_bad_sha->substr(0, 12) : "bisected";
  if (b.effect && b.uncertainty) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %+.2f%% +- %.2f%%", *b.effect * 100, *b.uncertainty * 100);
    note += buf;
  }
  return note + " (" + b.cause.value_or("no cause") + ")";
}

// What the end of `after` (the bisection as it ends) is told: the bad commit's completed
// forge reports sent again with it, and the bisection.finished webhooks. A report not
// completed yet lists the bisection when it completes; nothing is sent for it now.
std::vector<db::NewDelivery> end_deliveries(Context& ctx, const db::Bisection& after) {
  BisectionEndInputs in;
  in.commit = after.bad_sha;
  in.bisection_json = json::serialize(bisection_json(after));
  in.public_url = ctx.config.public_url;
  in.notify_urls = ctx.config.notify_urls;
  in.max_attempts = ctx.config.delivery_max_attempts;
  std::vector<std::string> lines;
  db::BisectionFilter bf;
  bf.commit = after.bad_sha;
  bf.limit = 20;
  if (auto known = ctx.store->list_bisections(bf); known.ok())
    for (const auto& b : known->items) lines.push_back(bisection_line(b.id == after.id ? after : b, in.public_url));
  std::optional<porting::Verdict> verdict;
  std::map<std::int64_t, std::string> repro;
  auto reports = ctx.store->commit_reports(after.bad_sha, 5);
  if (!reports.ok())
    log::warn("bisection's reports not read", {{"bisection", after.id}, {"error", reports.error().message}});
  else
    for (const auto& pr : *reports) {
      if (pr.connection.kind.empty() || pr.reported.value_or("") != "completed") continue;
      if (!verdict) {
        auto v = commit_verdict(ctx, after.bad_sha);
        if (!v.ok()) {
          log::warn("verdict for the bisection's report failed",
                    {{"bisection", after.id}, {"error", v.error().message}});
          break;
        }
        verdict = std::move(*v);
        repro = verdict_repro_commands(ctx, *verdict);
      }
      ReportInputs ri;
      ri.pipeline = pr.pipeline;
      ri.connection = pr.connection;
      ri.state = "completed";
      ri.verdict = &*verdict;
      ri.public_url = in.public_url;
      ri.repro_commands = repro;
      ri.bisections = lines;
      ri.status_note = bisection_note(after);
      ri.max_attempts = in.max_attempts;
      ri.now_ms = now_unix_ms();
      in.reports.push_back(std::move(ri));
    }
  return plan_bisection_end(in);
}

// Ends a running bisection with what it found (or why it stopped), enqueueing what its
// end tells the forge and the webhooks in the same transaction.
bool end_bisection(Context& ctx, const db::Bisection& bis, const db::BisectionEnd& end) {
  db::Bisection after = bis;
  after.state = end.state;
  after.cause = end.cause;
  after.first_bad_sha = end.first_bad_sha;
  after.effect = end.effect;
  after.uncertainty = end.uncertainty;
  after.summary = end.summary;
  after.outcome_json = end.outcome_json.empty() ? std::string("{}") : end.outcome_json;
  after.updated_ms = after.finished_ms.emplace(now_unix_ms());
  auto finished = ctx.store->finish_bisection(bis.id, end, end_deliveries(ctx, after));
  if (!finished.ok()) {
    log::warn("bisection not ended", {{"bisection", bis.id}, {"error", finished.error().message}});
    return false;
  }
  if (!*finished) return false;
  if (auto now = ctx.store->get_bisection(bis.id); now.ok() && *now)
    ctx.events->publish("bisections", "bisection", json::serialize(bisection_json(**now)));
  log::info("bisection ended", {{"bisection", bis.id},
                                {"state", end.state},
                                {"cause", end.cause.value_or("")},
                                {"first_bad", end.first_bad_sha.value_or("")},
                                {"probes", bis.probes.size()},
                                {"why", end.summary}});
  return true;
}

// The probes of an ended bisection still open: their jobs are cancelled (their ends then
// find nothing running to advance). Returns the pipelines.
std::vector<std::int64_t> cancel_open_probes(Context& ctx, const db::Bisection& bis) {
  std::vector<std::int64_t> open;
  for (const auto& p : bis.probes)
    if (!ended(p.status)) open.push_back(p.pipeline_id);
  for (auto pipeline : open) {
    auto n = ctx.store->cancel_pipeline(pipeline);
    if (!n.ok())
      log::warn("bisection probe not cancelled",
                {{"bisection", bis.id}, {"pipeline", pipeline}, {"error", n.error().message}});
    else if (*n > 0)
      ctx.events->publish("jobs", "job", json::serialize(json::object{{"pipeline", pipeline}, {"cancelled", *n}}));
  }
  return open;
}

// Decides the next step of a running bisection from its probes (the caller holds
// g_advance).
void advance(Context& ctx, std::int64_t bisection_id) {
  auto b = ctx.store->get_bisection(bisection_id);
  if (!b.ok() || !*b || (*b)->state != "running") return;
  const db::Bisection& bis = **b;
  const std::vector<CaseSpec> cases = cases_from(bis.cases_json);
  porting::BisectInput in = input_of(bis, cases);
  for (const auto& p : bis.probes) {
    auto f = probe_fact(ctx, bis, p, cases);
    if (!f.ok()) {
      log::warn("bisection probe unreadable", {{"bisection", bis.id}, {"error", f.error().message}});
      return;
    }
    in.probes.push_back(std::move(*f));
  }
  const porting::BisectPolicy policy;
  const porting::BisectStep step = porting::next_step(in, policy);
  if (step.action == porting::BisectStep::Action::wait) {
    (void)ctx.store->note_bisection(bis.id, step.why);
    return;
  }
  if (step.action == porting::BisectStep::Action::stop) {
    db::BisectionEnd end;
    end.state = step.cancelled ? "cancelled" : "failed";
    end.summary = step.why;
    if (end_bisection(ctx, bis, end)) cancel_open_probes(ctx, bis);
    return;
  }
  if (step.action == porting::BisectStep::Action::probe) {
    if (static_cast<int>(bis.probes.size() + step.probe.size()) > k_max_probes) {
      db::BisectionEnd end;
      end.state = "failed";
      end.summary = "gave up after " + std::to_string(bis.probes.size()) + " probes: " + step.why;
      end_bisection(ctx, bis, end);
      return;
    }
    std::vector<db::NewPipeline> probes;
    for (const auto& c : step.probe) probes.push_back(plan_probe(bis, cases, c, ctx.config.max_attempts));
    auto added = ctx.store->add_bisection_probes(bis.id, probes);
    if (!added.ok()) {
      log::warn("bisection probe not queued", {{"bisection", bis.id}, {"error", added.error().message}});
      return;
    }
    (void)ctx.store->note_bisection(bis.id, step.why);
    if (auto now = ctx.store->get_bisection(bis.id); now.ok() && *now) announce_probes(ctx, **now, bis.probes.size());
    log::info("bisection probes", {{"bisection", bis.id}, {"probes", step.probe.size()}, {"why", step.why}});
    return;
  }
  db::BisectionEnd end;
  end.cause = porting::to_string(step.cause);
  end.first_bad_sha = step.first_bad;
  end.effect = step.effect;
  end.uncertainty = step.uncertainty;
  end.summary = step.why;
  end.outcome_json = json::serialize(outcome_json(step));
  end_bisection(ctx, bis, end);
}

}  // namespace

bool advance_pipeline(Context& ctx, std::int64_t pipeline_id) {
  auto id = ctx.store->bisection_of_pipeline(pipeline_id);
  if (!id.ok() || !*id) return false;
  std::lock_guard lock(g_advance);
  advance(ctx, **id);
  return true;
}

bool advance_probe(Context& ctx, const db::Job& job) { return advance_pipeline(ctx, job.pipeline_id); }

std::size_t sweep_bisections(Context& ctx) {
  db::BisectionFilter f;
  f.state = "running";
  f.limit = 100;
  auto running = ctx.store->list_bisections(f);
  if (!running.ok()) return 0;
  std::size_t n = 0;
  for (const auto& b : running->items) {
    // One with a probe still open is advanced when that probe ends.
    const bool open =
        std::any_of(b.probes.begin(), b.probes.end(), [](const db::BisectionProbe& p) { return !ended(p.status); });
    if (open) continue;
    std::lock_guard lock(g_advance);
    advance(ctx, b.id);
    ++n;
  }
  return n;
}

Result<db::Bisection> cancel_bisection(Context& ctx, std::int64_t id, const std::string& reason) {
  std::lock_guard lock(g_advance);
  auto b = ctx.store->get_bisection(id);
  if (!b.ok()) return std::move(b).error();
  if (!*b)
    return make_error(Errc::not_found, "no bisection " + std::to_string(id) + "; GET /api/v1/bisections lists them");
  if ((*b)->state != "running")
    return make_error(Errc::conflict, "bisection " + std::to_string(id) + " has already ended (" + (*b)->state + ")");
  std::vector<std::int64_t> open;
  for (const auto& p : (*b)->probes)
    if (!ended(p.status)) open.push_back(p.pipeline_id);
  db::BisectionEnd end;
  end.state = "cancelled";
  end.summary = "cancelled by hand" + (reason.empty() ? std::string() : ": " + reason);
  if (!open.empty()) {
    end.summary += " (open probe pipeline";
    for (std::size_t i = 0; i < open.size(); ++i) end.summary += (i ? ", " : " ") + std::to_string(open[i]);
    end.summary += " cancelled)";
  }
  if (!end_bisection(ctx, **b, end))
    return make_error(Errc::conflict, "bisection " + std::to_string(id) + " has already ended");
  // Ended first: the probes' ends that follow find nothing running to advance.
  cancel_open_probes(ctx, **b);
  auto now = ctx.store->get_bisection(id);
  if (!now.ok()) return std::move(now).error();
  if (!*now) return make_error(Errc::internal, "bisection " + std::to_string(id) + " vanished");
  return std::move(**now);
}

json::object bisection_json(const db::Bisection& b) {
  json::array probes;
  for (const auto& p : b.probes)
    probes.push_back(json::object{{"pipeline", p.pipeline_id},
                                  {"commit", p.commit_sha},
                                  {"status", db::to_string(p.status)},
                                  {"created", iso8601_utc(p.created_ms)}});
  json::array cases;
  for (const auto& c : cases_from(b.cases_json)) {
    json::object o{{"key", c.key}, {"family", c.family}, {"variant", c.variant}};
    if (b.kind != "build_failure") {
      o["instance"] = c.instance;
      o["dtype"] = c.dtype;
      o["shape"] = c.shape;
    }
    if (b.kind == "perf_regression") {
      o["good_us"] = opt(c.good_us);
      o["bad_us"] = opt(c.bad_us);
      o["sigma"] = c.sigma_rel;
    }
    cases.push_back(std::move(o));
  }
  json::array commits;
  for (const auto& c : strings_from(b.commits_json)) commits.emplace_back(c);
  boost::system::error_code ec;
  json::value outcome = json::parse(b.outcome_json, ec);
  if (ec || !outcome.is_object()) outcome = json::object{};
  const auto& oc = outcome.as_object();
  auto member = [&](const char* k, json::value fallback) {
    const auto* v = oc.if_contains(k);
    return v ? *v : fallback;
  };
  return json::object{{"id", b.id},
                      {"kind", b.kind},
                      {"origin", b.origin},
                      {"state", b.state},
                      {"repo", b.repo},
                      {"target", b.target},
                      {"gpu_model", b.gpu_model.empty() ? json::value(nullptr) : json::value(b.gpu_model)},
                      {"arch", b.arch},
                      {"driver", b.driver.empty() ? json::value(nullptr) : json::value(b.driver)},
                      {"good", b.good_sha},
                      {"bad", b.bad_sha},
                      {"commits", std::move(commits)},
                      {"cases", std::move(cases)},
                      {"cause", b.cause ? json::value(*b.cause) : json::value(nullptr)},
                      {"first_bad", b.first_bad_sha ? json::value(*b.first_bad_sha) : json::value(nullptr)},
                      {"last_good", member("last_good", nullptr)},
                      {"suspects", member("suspects", json::array{})},
                      {"effect", opt(b.effect)},
                      {"uncertainty", opt(b.uncertainty)},
                      {"effects", member("effects", json::array{})},
                      {"judged", member("judged", json::array{})},
                      {"summary", b.summary},
                      {"probes", std::move(probes)},
                      {"created", iso8601_utc(b.created_ms)},
                      {"updated", iso8601_utc(b.updated_ms)},
                      {"finished", b.finished_ms ? json::value(iso8601_utc(*b.finished_ms)) : json::value(nullptr)}};
}

std::string bisection_line(const db::Bisection& b, const std::string& public_url) {
  std::string line = b.kind + " on " + b.target + (b.gpu_model.empty() ? "" : " / " + b.gpu_model) + " between `" +
                     b.good_sha.substr(0, 12) + "` and `" + b.bad_sha.substr(0, 12) + "`: " + b.state;
  if (b.first_bad_sha) line += ", first bad commit `" + b.first_bad_sha->substr(0, 12) + "`";
  if (b.effect && b.uncertainty) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ", effect %+.2f%% +- %.2f%%", *b.effect * 100, *b.uncertainty * 100);
    line += buf;
  }
  if (b.cause) line += ", cause " + *b.cause;
  if (b.state != "done") line += " (" + b.summary + ")";  // running: its step; stopped: why
  return line + " (" + public_url + "/#/bisection/" + std::to_string(b.id) + ")";
}

}  // namespace kport::coordinator::app
