#include "kport/runner/runner.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "backoff.h"
#include "kport/common/log.h"

namespace kport::runner {
namespace json = boost::json;

Runner::Runner(RunnerConfig config, JobHandler& handler)
    : m_config(std::move(config)), m_handler(handler), m_api(m_config.server, {}, m_config.ca_file) {}

Status BuildHandler::prepare() {
  auto listing = porting::make_nvcc_probe(m_nvcc)->probe();
  if (!listing.ok())
    return make_error(listing.error().code,
                      "no usable CUDA toolkit: " + listing.error().message + "; pass --nvcc PATH");
  m_settings.toolkit = *listing;
  return {};
}

Result<api::RunnerRegistration> BuildHandler::registration(const std::string& name) {
  auto catalog = porting::Catalog::from_file(m_settings.catalog_file);
  if (!catalog.ok()) return catalog.error();
  catalog->join(m_settings.toolkit);
  api::RunnerRegistration r;
  r.name = name;
  r.role = api::RunnerRole::build;
  for (const auto& t : catalog->supported_targets()) r.capabilities.targets.push_back(t);
  r.capabilities.toolkit = m_settings.toolkit.version;
  r.capabilities.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return r;
}

JobOutcome BuildHandler::run(CoordinatorApi& api, const ClaimedJob& job, const std::atomic<bool>& cancel,
                             const LogFn& log) {
  return run_build_job(api, job, m_settings, cancel, log);
}

Status Runner::register_self() {
  auto body = m_handler.registration(m_config.name);
  if (!body.ok()) return body.error();
  auto reg = m_api.register_runner(m_config.registration_token, *body);
  if (!reg.ok()) return reg.error();
  m_token = reg->token;
  m_heartbeat = reg->heartbeat_interval;
  log::info("registered",
            {{"runner", reg->runner_id}, {"name", m_config.name}, {"role", std::string(api::to_string(body->role))}});
  return {};
}

namespace {

// The message of whatever was thrown, for a last-resort log line.
std::string what_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// Ends an attempt on the coordinator, trying again with backoff while the answer does not
// come or cannot be read (a proxy, a restart). A conflict or gone means the lease is no
// longer ours (it expired, or an earlier try was recorded): nothing left to do.
void end_attempt(CoordinatorApi& api, const Lease& lease, bool succeeded, const std::string& reason, bool retry) {
  Backoff backoff(std::chrono::milliseconds(500), std::chrono::milliseconds(4'000));
  for (int tries = 1;; ++tries) {
    auto st = api.complete(lease.job, lease.attempt, succeeded, reason, retry);
    if (st.ok()) return;
    const bool final = st.error().code == Errc::conflict || st.error().code == Errc::gone || tries == 4;
    log::warn(final ? "cannot complete the job; its lease will expire on the coordinator"
                    : "cannot complete the job yet; retrying",
              {{"job", lease.job}, {"attempt", lease.attempt}, {"try", tries}, {"error", st.error().message}});
    if (final) return;
    std::this_thread::sleep_for(backoff.next());
  }
}

}  // namespace

void Runner::run_job(const ClaimedJob& job) {
  log::info("claimed job", {{"job", job.id}, {"attempt", job.attempt}, {"commit", job.commit}, {"target", job.target}});
  std::atomic<bool> cancel{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  // The heartbeat thread has its own connection: the job's uploads may take a while. An
  // answer it cannot read costs one beat, not the process: the lease runs on until the next
  // good answer, or expires on the coordinator, which then says so (conflict or gone).
  std::thread heart([&] {
    CoordinatorApi api(m_config.server, m_token, m_config.ca_file);
    std::unique_lock lock(mu);
    while (!cv.wait_for(lock, m_heartbeat, [&] { return done; })) {
      lock.unlock();
      try {
        auto hb = api.heartbeat(job.id, job.attempt);
        if (hb.ok() && hb->cancel_requested && !cancel.exchange(true)) log::warn("cancel requested", {{"job", job.id}});
        if (!hb.ok() && (hb.error().code == Errc::conflict || hb.error().code == Errc::gone)) {
          log::warn("lease lost; stopping the job", {{"job", job.id}, {"error", hb.error().message}});
          cancel = true;
        } else if (!hb.ok()) {
          log::warn("heartbeat failed; the lease holds until it expires",
                    {{"job", job.id}, {"error", hb.error().message}});
        }
      } catch (...) {
        log::error("heartbeat failed unexpectedly", {{"job", job.id}, {"error", what_of(std::current_exception())}});
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
  JobOutcome outcome;
  try {
    outcome = m_handler.run(m_api, job, cancel, say);
  } catch (...) {
    // A last resort: handlers return their failures. The job goes back to the queue with its reason.
    outcome = JobOutcome{false, "the runner failed while running the job: " + what_of(std::current_exception()), true};
    log::error("job handler threw", {{"job", job.id}, {"error", outcome.reason}});
  }
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  heart.join();
  say(std::string(outcome.succeeded ? "succeeded: " : "failed: ") + outcome.reason);
  if (auto st = m_api.append_log(job.id, job.attempt, text); !st.ok())
    log::warn("cannot upload the job log", {{"job", job.id}, {"error", st.error().message}});
  end_attempt(m_api, Lease{job.id, job.attempt}, outcome.succeeded, outcome.reason, outcome.retry);
  log::info(outcome.succeeded ? "job succeeded" : "job failed", {{"job", job.id}, {"reason", outcome.reason}});
}

int Runner::run(const std::atomic<bool>& stop) {
  if (auto st = m_handler.prepare(); !st.ok()) {
    log::error(st.error().message);
    return 2;
  }
  Backoff backoff(std::chrono::milliseconds(500), std::chrono::milliseconds(15'000));
  auto pause = [&](std::chrono::milliseconds d) {
    for (auto t = std::chrono::milliseconds(0); t < d && !stop; t += std::chrono::milliseconds(100))
      std::this_thread::sleep_for(std::min(std::chrono::milliseconds(100), d - t));
  };
  bool registered = false;
  int jobs_done = 0;
  while (!stop) {
    // Every failure below is a value; the catch is the last resort that keeps this
    // worker (and, in a GPU runner, every other GPU's) alive whatever slipped through.
    try {
      if (!registered) {
        auto st = register_self();
        if (!st.ok()) {
          if (st.error().code == Errc::unauthorized || st.error().code == Errc::forbidden ||
              st.error().code == Errc::invalid_argument || st.error().code == Errc::not_found) {
            log::error("registration refused: " + st.error().message + "; check --registration-token and --server");
            return 2;
          }
          const auto wait = backoff.next();
          log::warn("cannot register yet; retrying", {{"error", st.error().message}, {"retry_in_ms", wait.count()}});
          pause(wait);
          continue;
        }
        registered = true;
        backoff.reset();
      }
      if (auto st = m_handler.ready(); !st.ok()) {
        log::warn("not taking work: " + st.error().message);
        pause(std::chrono::seconds(5));
        continue;
      }
      std::optional<Lease> unreadable;
      auto claimed = m_api.claim(m_config.claim_wait, &unreadable);
      if (!claimed.ok()) {
        if (claimed.error().code == Errc::unauthorized) {
          log::warn("runner token rejected; registering again");
          registered = false;
          continue;
        }
        const auto wait = backoff.next();
        log::warn("claim failed; retrying", {{"error", claimed.error().message}, {"retry_in_ms", wait.count()}});
        // A job leased to us that we cannot read goes back to the queue now, with the
        // reason, rather than when its lease runs out.
        if (unreadable)
          end_attempt(m_api, *unreadable, false,
                      "the runner could not read the job it claimed: " + claimed.error().message, true);
        pause(wait);
        continue;
      }
      backoff.reset();
      if (!*claimed) continue;
      run_job(**claimed);
      if (m_config.max_jobs > 0 && ++jobs_done >= m_config.max_jobs) break;
    } catch (...) {
      const auto wait = backoff.next();
      log::error("runner loop failed unexpectedly; going on",
                 {{"error", what_of(std::current_exception())}, {"retry_in_ms", wait.count()}});
      pause(wait);
    }
  }
  if (registered) {
    if (auto st = m_api.deregister(); !st.ok())
      log::warn("deregister failed", {{"error", st.error().message}});
    else
      log::info("deregistered");
  }
  return 0;
}

}  // namespace kport::runner
