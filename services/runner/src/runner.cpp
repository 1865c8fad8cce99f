#include "kport/runner/runner.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "kport/common/log.h"

namespace kport::runner {
namespace json = boost::json;

Runner::Runner(RunnerConfig config, JobHandler& handler)
    : m_config(std::move(config)), m_handler(handler), m_api(m_config.server) {}

Status BuildHandler::prepare() {
  auto listing = porting::make_nvcc_probe(m_nvcc)->probe();
  if (!listing.ok()) return make_error(listing.error().code, "no usable CUDA toolkit: " + listing.error().message + "; pass --nvcc PATH");
  m_settings.toolkit = *listing;
  return {};
}

Result<json::object> BuildHandler::registration(const std::string& name) {
  auto catalog = porting::Catalog::from_file(m_settings.catalog_file);
  if (!catalog.ok()) return catalog.error();
  catalog->join(m_settings.toolkit);
  json::array targets;
  for (const auto& t : catalog->supported_targets()) targets.emplace_back(t);
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return json::object{{"name", name}, {"role", "build"},
                      {"capabilities", json::object{{"toolkit", m_settings.toolkit.version}, {"targets", targets},
                                                    {"cores", cores}}}};
}

JobOutcome BuildHandler::run(CoordinatorApi& api, const ClaimedJob& job, const std::atomic<bool>& cancel, const LogFn& log) {
  return run_build_job(api, job, m_settings, cancel, log);
}

Status Runner::register_self() {
  auto body = m_handler.registration(m_config.name);
  if (!body.ok()) return body.error();
  auto reg = m_api.register_runner(m_config.registration_token, *body);
  if (!reg.ok()) return reg.error();
  m_token = reg->token;
  m_heartbeat = reg->heartbeat_interval;
  log::info("registered", {{"runner", reg->runner_id}, {"name", m_config.name}, {"role", json::value_to<std::string>((*body)["role"])}});
  return {};
}

void Runner::run_job(const ClaimedJob& job) {
  log::info("claimed job", {{"job", job.id}, {"attempt", job.attempt}, {"commit", job.commit}, {"target", job.target}});
  std::atomic<bool> cancel{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  // The heartbeat thread has its own connection: the job's uploads may take a while.
  std::thread heart([&] {
    CoordinatorApi api(m_config.server, m_token);
    std::unique_lock lock(mu);
    while (!cv.wait_for(lock, m_heartbeat, [&] { return done; })) {
      lock.unlock();
      auto hb = api.heartbeat(job.id, job.attempt);
      if (hb.ok() && hb->cancel_requested && !cancel.exchange(true)) log::warn("cancel requested", {{"job", job.id}});
      if (!hb.ok() && (hb.error().code == Errc::conflict || hb.error().code == Errc::gone)) {
        log::warn("lease lost; stopping the job", {{"job", job.id}, {"error", hb.error().message}});
        cancel = true;
      }
      lock.lock();
    }
  });
  std::string text;
  std::mutex text_mu;
  auto say = [&](const std::string& line) {
    log::info(line, {{"job", job.id}});
    std::lock_guard l(text_mu);
    text += line + "\n";
  };
  JobOutcome outcome = m_handler.run(m_api, job, cancel, say);
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  heart.join();
  say(std::string(outcome.succeeded ? "succeeded: " : "failed: ") + outcome.reason);
  if (auto st = m_api.append_log(job.id, job.attempt, text); !st.ok())
    log::warn("cannot upload the job log", {{"job", job.id}, {"error", st.error().message}});
  if (auto st = m_api.complete(job.id, job.attempt, outcome.succeeded, outcome.reason, outcome.retry); !st.ok())
    log::warn("cannot complete the job", {{"job", job.id}, {"error", st.error().message}});
  log::info(outcome.succeeded ? "job succeeded" : "job failed", {{"job", job.id}, {"reason", outcome.reason}});
}

int Runner::run(const std::atomic<bool>& stop) {
  if (auto st = m_handler.prepare(); !st.ok()) {
    log::error(st.error().message);
    return 2;
  }
  auto backoff = std::chrono::milliseconds(500);
  auto pause = [&](std::chrono::milliseconds d) {
    for (auto t = std::chrono::milliseconds(0); t < d && !stop; t += std::chrono::milliseconds(100))
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  };
  bool registered = false;
  int jobs_done = 0;
  while (!stop) {
    if (!registered) {
      auto st = register_self();
      if (!st.ok()) {
        if (st.error().code == Errc::unauthorized || st.error().code == Errc::forbidden ||
            st.error().code == Errc::invalid_argument || st.error().code == Errc::not_found) {
          log::error("registration refused: " + st.error().message + "; check --registration-token and --server");
          return 2;
        }
        log::warn("cannot register yet; retrying", {{"error", st.error().message}});
        pause(backoff);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(15'000));
        continue;
      }
      registered = true;
      backoff = std::chrono::milliseconds(500);
    }
    if (auto st = m_handler.ready(); !st.ok()) {
      log::warn("not taking work: " + st.error().message);
      pause(std::chrono::seconds(5));
      continue;
    }
    auto claimed = m_api.claim(m_config.claim_wait);
    if (!claimed.ok()) {
      if (claimed.error().code == Errc::unauthorized) {
        log::warn("runner token rejected; registering again");
        registered = false;
        continue;
      }
      log::warn("claim failed; retrying", {{"error", claimed.error().message}});
      pause(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(15'000));
      continue;
    }
    backoff = std::chrono::milliseconds(500);
    if (!*claimed) continue;
    run_job(**claimed);
    if (m_config.max_jobs > 0 && ++jobs_done >= m_config.max_jobs) break;
  }
  if (registered) {
    if (auto st = m_api.deregister(); !st.ok()) log::warn("deregister failed", {{"error", st.error().message}});
    else log::info("deregistered");
  }
  return 0;
}

}  // namespace kport::runner
