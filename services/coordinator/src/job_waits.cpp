#include "job_waits.h"

#include "kport/common/clock.h"

namespace kport::coordinator {

namespace {

std::string plural(std::int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Which runner would take it, as its registration would say it.
std::string wanted_runner(const db::Job& j) {
  if (j.kind == db::JobKind::build) return "build runner for target " + j.target;
  std::string s = "GPU runner of arch " + j.arch.value_or("?");
  if (j.gpu_model) s += " (" + *j.gpu_model + ")";
  return s;
}

}  // namespace

std::optional<std::string> wait_reason(const WaitFacts& f) {
  const db::Job& j = f.job;
  if (j.status != db::JobStatus::queued && j.status != db::JobStatus::awaiting_runner) return std::nullopt;
  if (j.depends_on) {
    const std::string dep = "job " + std::to_string(*j.depends_on);
    if (!f.dependency) return "waiting on its build, " + dep + ", which no longer exists";
    if (f.dependency->status != db::JobStatus::succeeded)
      return "waiting on its build, " + dep + " (" + std::string(db::to_string(f.dependency->status)) + ")";
  }
  if (j.not_before_ms && *j.not_before_ms > f.now_ms) {
    std::string s =
        "backing off after attempt " + std::to_string(j.attempt) + " until " + iso8601_utc(*j.not_before_ms);
    if (j.failure_reason) s += ": " + *j.failure_reason;
    return s;
  }
  if (!f.place) return "queued";
  if (f.place->runners == 0) return "no online " + wanted_runner(j);
  if (f.place->ahead > 0)
    return "queued behind " + plural(f.place->ahead, "job") + " for the same runners (" +
           std::to_string(f.place->runners_busy) + " of " + plural(f.place->runners, "runner") + " busy)";
  if (f.place->runners_busy >= f.place->runners)
    return "next in line; every " + wanted_runner(j) + " is busy (" + plural(f.place->runners, "runner") + ")";
  return "next in line; an idle " + wanted_runner(j) + " claims it at its next poll";
}

}  // namespace kport::coordinator
