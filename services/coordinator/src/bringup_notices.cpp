#include "bringup_notices.h"

#include <boost/json.hpp>

#include <algorithm>
#include <mutex>

#include "bringup_stages.h"
#include "kport/common/log.h"
#include "kport/http/uri.h"

namespace kport::coordinator {
namespace json = boost::json;

std::vector<std::pair<std::string, std::int64_t>> stage_counts(const porting::StageCounts& c) {
  return {{"builds", c.builds},
          {"resources_clean", c.resources_clean},
          {"numerics_passed", c.numerics_passed},
          {"measured", c.measured},
          {"selected_best", c.selected_best}};
}

std::optional<porting::StageCounts> parse_stage_counts(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto n = [&](const char* key) -> std::optional<std::int64_t> {
    const auto* x = o.if_contains(key);
    if (!x || !x->is_int64()) return std::nullopt;
    return x->as_int64();
  };
  porting::StageCounts c;
  std::int64_t* fields[] = {&c.variants,        &c.applicable, &c.builds,       &c.resources_clean,
                            &c.numerics_passed, &c.measured,   &c.selected_best};
  const char* names[] = {"variants",        "applicable", "builds",       "resources_clean",
                         "numerics_passed", "measured",   "selected_best"};
  for (std::size_t i = 0; i < std::size(names); ++i) {
    auto got = n(names[i]);
    if (!got) return std::nullopt;
    *fields[i] = *got;
  }
  return c;
}

BringupChange bringup_change(const std::optional<porting::StageCounts>& told, const std::vector<std::string>& announced,
                             const porting::StageCounts& now) {
  BringupChange out;
  auto known = [&](const std::string& m) {
    return std::find(announced.begin(), announced.end(), m) != announced.end();
  };
  const auto before = told ? stage_counts(*told) : std::vector<std::pair<std::string, std::int64_t>>{};
  const auto after = stage_counts(now);
  for (std::size_t i = 0; i < after.size(); ++i) {
    const auto& [stage, count] = after[i];
    if (count > 0 && !known(stage + "/first")) out.milestones.push_back(stage + "/first");
    if (now.applicable > 0 && count >= now.applicable && !known(stage + "/all"))
      out.milestones.push_back(stage + "/all");
    if (!before.empty() && count < before[i].second) out.regressions.push_back({stage, before[i].second, count});
  }
  return out;
}

std::vector<db::NewDelivery> bringup_deliveries(const BringupNotice& n) {
  std::vector<db::NewDelivery> out;
  const std::string page =
      n.public_url + "/#/target/" + n.target + (n.repo.empty() ? "" : "?repo=" + http::percent_encode(n.repo));
  auto base = [&](const char* event) {
    return json::object{{"event", event},
                        {"target", n.target},
                        {"repo", n.repo},
                        {"is_new", n.is_new},
                        {"commit", n.commit ? json::value(*n.commit) : json::value(nullptr)},
                        {"progress", counts_json(n.counts)},
                        {"url", page}};
  };
  json::array milestones;
  for (const auto& m : n.change.milestones) {
    const auto slash = m.find('/');
    const std::string stage = m.substr(0, slash);
    std::int64_t count = 0;
    for (const auto& [s, c] : stage_counts(n.counts))
      if (s == stage) count = c;
    milestones.push_back(json::object{
        {"stage", stage}, {"level", m.substr(slash + 1)}, {"count", count}, {"applicable", n.counts.applicable}});
  }
  json::array drops;
  for (const auto& d : n.change.regressions)
    drops.push_back(json::object{{"stage", d.stage}, {"before", d.before}, {"after", d.after}});
  for (const auto& url : n.notify_urls) {
    db::NewDelivery d;
    d.kind = "webhook";
    d.subject = "webhook " + url;  // in order with the verdicts told to the same URL
    d.commit_sha = n.commit.value_or("");
    d.url = url;
    d.max_attempts = n.max_attempts;
    if (!milestones.empty()) {
      d.event = "bringup.milestone";
      json::object body = base("bringup.milestone");
      body["milestones"] = milestones;
      d.body = json::serialize(body);
      out.push_back(d);
    }
    if (!drops.empty()) {
      d.event = "bringup.regression";
      json::object body = base("bringup.regression");
      body["regressions"] = drops;
      d.body = json::serialize(body);
      out.push_back(d);
    }
  }
  return out;
}

void notify_bringup(Context& ctx, std::int64_t job_id) {
  if (ctx.config.notify_urls.empty()) return;
  auto job = ctx.store->get_job(job_id);
  if (!job.ok() || !*job) return;
  const std::string target = (*job)->target, commit = (*job)->commit_sha;
  db::JobFilter f;
  f.commit_sha = commit;
  f.target = target;
  f.limit = db::k_max_page_limit;
  auto jobs = ctx.store->list_jobs(f);
  if (!jobs.ok()) return log::warn("bring-up not looked at", {{"target", target}, {"error", jobs.error().message}});
  for (const auto& j : jobs->items)
    if (j.status == db::JobStatus::queued || j.status == db::JobStatus::awaiting_runner ||
        j.status == db::JobStatus::running)
      return;  // the commit is not validated on this target yet
  // One look at a time: two jobs ending together must not announce a milestone twice.
  static std::mutex mu;
  std::lock_guard lock(mu);
  // The job's library's board and mark: each library's stages are told apart.
  std::optional<std::string> repo;
  if (auto pipeline = ctx.store->get_pipeline((*job)->pipeline_id); pipeline.ok() && *pipeline)
    if (!(*pipeline)->repo.empty()) repo = (*pipeline)->repo;
  auto board = ctx.store->target_board(target, std::nullopt, repo);
  if (!board.ok() || !*board) return;
  if ((*board)->stage_commit != commit) return;  // an older commit's job: not the library's state now
  const porting::BringupStages stages = stages_of(**board);
  const std::string library = (*board)->repo.value_or("");
  auto mark = ctx.store->bringup_mark(target, library);
  if (!mark.ok()) return log::warn("bring-up mark not read", {{"target", target}, {"error", mark.error().message}});
  const std::string counts = json::serialize(counts_json(stages.counts));
  BringupNotice n;
  n.target = target;
  n.repo = library;
  n.is_new = (*board)->target.is_new;
  n.commit = commit;
  n.counts = stages.counts;
  n.change = bringup_change(parse_stage_counts(mark->counts_json), mark->milestones, stages.counts);
  if (n.change.empty() && mark->counts_json == counts) return;
  n.public_url = ctx.config.public_url;
  n.notify_urls = ctx.config.notify_urls;
  n.max_attempts = ctx.config.delivery_max_attempts;
  db::BringupMark next = *mark;
  next.commit_sha = commit;
  next.counts_json = counts;
  next.milestones.insert(next.milestones.end(), n.change.milestones.begin(), n.change.milestones.end());
  if (auto st = ctx.store->put_bringup_mark(next, bringup_deliveries(n)); !st.ok())
    return log::warn("bring-up mark not written", {{"target", target}, {"error", st.error().message}});
  if (!n.change.empty())
    log::info("bring-up told", {{"target", target},
                                {"milestones", static_cast<std::int64_t>(n.change.milestones.size())},
                                {"regressions", static_cast<std::int64_t>(n.change.regressions.size())}});
}

}  // namespace kport::coordinator
