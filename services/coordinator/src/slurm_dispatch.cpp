#include "slurm_dispatch.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kport/common/clock.h"
#include "kport/common/log.h"
#include "kport/common/process.h"

namespace kport::coordinator {
namespace json = boost::json;

namespace {

// squeue and sbatch through the Env, with the configured wall-clock limit (a hung sbatch
// is killed, not waited for) and the runner's settings in its environment.
Result<ProcessOutput> run_command(Env& env, std::chrono::milliseconds timeout, const std::vector<std::string>& argv,
                                  const std::vector<std::string>& extra_env) {
  kport::ProcessOptions po;
  po.timeout = timeout;
  po.env = extra_env;
  po.output_limit = 1u << 20;
  auto r = env.run_process(argv, po);
  if (!r.ok()) return std::move(r).error();
  if (r->timed_out)
    return make_error(Errc::unavailable, argv[0] + " did not answer within " + std::to_string(timeout.count()) + " ms");
  return r;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  if (auto nl = s.rfind('\n'); nl != std::string::npos && s.size() > 400) s = s.substr(nl + 1);
  return s.size() > 400 ? s.substr(s.size() - 400) : s;
}

const std::string k_comment_prefix = "kport:";

}  // namespace

SlurmDispatcher::SlurmDispatcher(SlurmConfig config, db::Store& store, Env& env)
    : m_config(std::move(config)), m_store(store), m_env(env) {
  std::lock_guard lock(m_mu);
  publish();
}

SlurmDispatcher::~SlurmDispatcher() { stop(); }

void SlurmDispatcher::start() {
  m_thread = std::thread([this] {
    std::unique_lock lock(m_stop_mu);
    do {
      lock.unlock();
      tick(m_env.now_unix_ms());
      lock.lock();
    } while (!m_stop_cv.wait_for(lock, std::chrono::milliseconds(m_config.interval_ms), [this] { return m_stopping; }));
  });
}

void SlurmDispatcher::stop() {
  {
    std::lock_guard lock(m_stop_mu);
    m_stopping = true;
  }
  m_stop_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

// Reads the runner jobs this coordinator has in Slurm. A job that left since the last
// read counts as a failure of its key when its runner never registered.
bool SlurmDispatcher::refresh_jobs(std::int64_t now_ms) {
  auto r = run_command(m_env, timeout(),
                       {m_config.squeue, "--noheader", "--me", "--name=" + m_config.job_name, "--format=%i|%T|%k"}, {});
  if (!r.ok() || r->exit_code != 0) {
    m_last_error = "squeue failed: " + (r.ok() ? trimmed(r->output) : r.error().message);
    log::warn("slurm dispatch: cannot read the queue; submitting nothing this round", {{"error", m_last_error}});
    return false;
  }
  std::map<std::string, Tracked> now;
  std::istringstream lines(r->output);
  for (std::string line; std::getline(lines, line);) {
    auto a = line.find('|'), b = line.find('|', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string comment = trimmed(line.substr(b + 1));
    if (comment.rfind(k_comment_prefix, 0) != 0) continue;  // same name, not ours
    now[line.substr(0, a)] = Tracked{comment.substr(k_comment_prefix.size()), line.substr(a + 1, b - a - 1)};
  }
  std::vector<std::pair<std::string, Tracked>> gone;
  for (const auto& [id, t] : m_jobs)
    if (!now.count(id)) gone.emplace_back(id, t);
  if (!gone.empty()) {
    auto runners = m_store.list_runners(true);
    for (const auto& [id, t] : gone) {
      bool registered = false;
      if (runners.ok())
        for (const auto& run : *runners)
          if (run.name.rfind("slurm-" + id + "-", 0) == 0) registered = true;
      log::info("slurm dispatch: runner job left the queue",
                {{"job", id}, {"key", t.key}, {"runner_registered", registered ? "yes" : "no"}});
      if (!registered && runners.ok()) fail(t.key, now_ms, "runner job " + id + " ended before its runner registered");
    }
  }
  m_jobs = std::move(now);
  return true;
}

Result<std::map<std::string, int>> SlurmDispatcher::demand() {
  std::map<std::string, int> want;
  const bool gpu = std::count(m_config.roles.begin(), m_config.roles.end(), "gpu") > 0;
  const bool build = std::count(m_config.roles.begin(), m_config.roles.end(), "build") > 0;
  if (gpu) {
    db::JobFilter f;
    f.status = db::JobStatus::awaiting_runner;
    f.limit = db::k_max_page_limit;
    auto page = m_store.list_jobs(f);
    if (!page.ok()) return std::move(page).error();
    for (const auto& j : page->items)
      if (j.arch) ++want["gpu:" + *j.arch];
  }
  if (build) {
    db::JobFilter f;
    f.status = db::JobStatus::queued;
    f.kind = db::JobKind::build;
    f.limit = db::k_max_page_limit;
    auto page = m_store.list_jobs(f);
    if (!page.ok()) return std::move(page).error();
    auto runners = m_store.list_runners(false);
    if (!runners.ok()) return std::move(runners).error();
    std::set<std::string> covered;
    for (const auto& r : *runners)
      if (r.online && r.role == db::RunnerRole::build) covered.insert(r.caps.targets.begin(), r.caps.targets.end());
    for (const auto& j : page->items)
      if (!covered.count(j.target)) ++want["build"];
  }
  // A key whose runner came up is healthy again.
  for (auto& [key, b] : m_backoff)
    if (!want.count(key)) b = Backoff{};
  return want;
}

void SlurmDispatcher::fail(const std::string& key, std::int64_t now_ms, const std::string& why) {
  auto& b = m_backoff[key];
  b.failures = std::min(b.failures + 1, 6);
  b.until_ms = now_ms + m_config.backoff_ms * (std::int64_t{1} << (b.failures - 1));
  m_last_error = why;
  log::warn("slurm dispatch: backing off",
            {{"key", key}, {"reason", why}, {"failures", b.failures}, {"retry_in_ms", b.until_ms - now_ms}});
}

bool SlurmDispatcher::submit(const std::string& key, std::int64_t now_ms) {
  const bool gpu = key.rfind("gpu:", 0) == 0;
  std::vector<std::string> argv = {m_config.sbatch,
                                   "--parsable",
                                   "--partition=" + m_config.partition,
                                   "--job-name=" + m_config.job_name,
                                   "--comment=" + k_comment_prefix + key,
                                   "--output=" + m_config.log_dir + "/kport-runner-%j.out"};
  if (!gpu) argv.push_back("--gres=none");  // the script asks for a GPU; a build runner needs none
  if (gpu && !m_config.gpu_constraint.empty()) {
    std::string arch = key.substr(4), digits;
    for (char ch : arch)
      if (ch != '.') digits += ch;
    std::string c = m_config.gpu_constraint;
    if (auto p = c.find("{arch}"); p != std::string::npos) c.replace(p, 6, digits);
    argv.push_back("--constraint=" + c);
  }
  argv.insert(argv.end(), m_config.extra_args.begin(), m_config.extra_args.end());
  argv.push_back(m_config.script);
  std::vector<std::string> env = {"KPORT_SERVER=" + m_config.server_url,
                                  "KPORT_REGISTRATION_TOKEN_FILE=" + m_config.token_file,
                                  std::string("KPORT_RUNNER_ROLE=") + (gpu ? "gpu" : "build")};
  if (m_config.runner_max_jobs > 0) env.push_back("KPORT_MAX_JOBS=" + std::to_string(m_config.runner_max_jobs));
  auto r = run_command(m_env, timeout(), argv, env);
  if (!r.ok() || r->exit_code != 0) {
    fail(key, now_ms, "sbatch failed: " + (r.ok() ? trimmed(r->output) : r.error().message));
    return false;
  }
  // --parsable prints "<id>" or "<id>;<cluster>" (after any warnings).
  std::string out = trimmed(r->output);
  if (auto nl = out.rfind('\n'); nl != std::string::npos) out = out.substr(nl + 1);
  std::string id = out.substr(0, out.find(';'));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    fail(key, now_ms, "sbatch answered no job id: " + trimmed(r->output));
    return false;
  }
  m_jobs[id] = Tracked{key, "SUBMITTED"};
  log::info("slurm dispatch: submitted runner job", {{"job", id}, {"key", key}, {"partition", m_config.partition}});
  return true;
}

int SlurmDispatcher::tick(std::int64_t now_ms) {
  std::lock_guard lock(m_mu);
  if (!refresh_jobs(now_ms)) {
    publish();
    return 0;
  }
  auto want = demand();
  if (!want.ok()) {
    m_last_error = "cannot read the queue: " + want.error().message;
    publish();
    return 0;
  }
  std::map<std::string, int> have;
  for (const auto& [id, t] : m_jobs) ++have[t.key];
  int total = static_cast<int>(m_jobs.size()), submitted = 0;
  for (const auto& [key, n] : *want) {
    for (int i = have[key]; i < n && total < m_config.max_jobs; ++i) {
      if (m_backoff[key].until_ms > now_ms) break;
      if (!submit(key, now_ms)) break;
      ++total;
      ++submitted;
    }
  }
  publish();
  return submitted;
}

// Called with m_mu held. The copy lets snapshot() answer (on an HTTP I/O thread)
// without waiting for a round that may be blocked in sbatch.
void SlurmDispatcher::publish() {
  json::array jobs;
  for (const auto& [id, t] : m_jobs) jobs.push_back(json::object{{"id", id}, {"key", t.key}, {"state", t.state}});
  json::object backoff;
  for (const auto& [key, b] : m_backoff)
    if (b.failures > 0) backoff[key] = json::object{{"failures", b.failures}, {"until_ms", b.until_ms}};
  json::value v = json::object{{"partition", m_config.partition},
                               {"max_jobs", m_config.max_jobs},
                               {"jobs", std::move(jobs)},
                               {"backoff", std::move(backoff)},
                               {"last_error", m_last_error}};
  std::lock_guard lock(m_snapshot_mu);
  m_snapshot = std::move(v);
}

json::value SlurmDispatcher::snapshot() const {
  std::lock_guard lock(m_snapshot_mu);
  return m_snapshot;
}

void declare_slurm_options(Options& o) {
  o.add("slurm-partition", "KPORT_SLURM_PARTITION", "",
        "submit runner jobs to this Slurm partition when work waits (empty: off)")
      .add("slurm-script", "KPORT_SLURM_SCRIPT", "/usr/local/share/kport/kport-runner.sbatch",
           "the runner's sbatch script")
      .add("slurm-server", "KPORT_SLURM_SERVER", "",
           "coordinator URL the runner jobs call (default: the listen address)")
      .add("slurm-token-file", "KPORT_SLURM_TOKEN_FILE", "",
           "registration token file the runner jobs read (default: registration-token beside the database)")
      .add("slurm-roles", "KPORT_SLURM_ROLES", "gpu", "comma-separated runner roles to dispatch: gpu, build")
      .add("slurm-max-jobs", "KPORT_SLURM_MAX_JOBS", "4", "runner jobs pending or running at once")
      .add("slurm-runner-max-jobs", "KPORT_SLURM_RUNNER_MAX_JOBS", "0",
           "a dispatched runner leaves after this many jobs (0: never)")
      .add("slurm-interval-ms", "KPORT_SLURM_INTERVAL_MS", "10000", "how often demand and squeue are read")
      .add("slurm-backoff-ms", "KPORT_SLURM_BACKOFF_MS", "30000",
           "first wait after a failed submission (doubles, up to 32x)")
      .add("slurm-gpu-constraint", "KPORT_SLURM_GPU_CONSTRAINT", "", "sbatch --constraint per arch, {arch} -> e.g. 90")
      .add("slurm-args", "KPORT_SLURM_ARGS", "", "more sbatch arguments, space-separated, e.g. --account=ml")
      .add("slurm-log-dir", "KPORT_SLURM_LOG_DIR", "", "runner job output (default: slurm/ beside the database)")
      .add("slurm-sbatch", "KPORT_SLURM_SBATCH", "sbatch", "the sbatch program")
      .add("slurm-squeue", "KPORT_SLURM_SQUEUE", "squeue", "the squeue program");
}

Status read_slurm_options(const Options& o, SlurmConfig& c) {
  c.partition = o.get("slurm-partition");
  c.script = o.get("slurm-script");
  c.server_url = o.get("slurm-server");
  c.token_file = o.get("slurm-token-file");
  c.gpu_constraint = o.get("slurm-gpu-constraint");
  c.log_dir = o.get("slurm-log-dir");
  c.sbatch = o.get("slurm-sbatch");
  c.squeue = o.get("slurm-squeue");
  c.roles.clear();
  std::istringstream roles(o.get("slurm-roles"));
  for (std::string r; std::getline(roles, r, ',');) {
    if (r != "gpu" && r != "build")
      return make_error(Errc::invalid_argument, "--slurm-roles: '" + r + "' is not gpu or build");
    c.roles.push_back(r);
  }
  std::istringstream args(o.get("slurm-args"));
  c.extra_args.clear();
  for (std::string a; args >> a;) c.extra_args.push_back(a);
  auto max_jobs = o.integer("slurm-max-jobs", 1, 10'000);
  auto runner_max = o.integer("slurm-runner-max-jobs", 0, 1'000'000);
  auto interval = o.integer("slurm-interval-ms", 100, 3'600'000);
  auto backoff = o.integer("slurm-backoff-ms", 100, 86'400'000);
  for (auto* r : {&max_jobs, &runner_max, &interval, &backoff})
    if (!r->ok()) return r->error();
  c.max_jobs = static_cast<int>(*max_jobs);
  c.runner_max_jobs = static_cast<int>(*runner_max);
  c.interval_ms = *interval;
  c.backoff_ms = *backoff;
  if (!c.partition.empty() && c.roles.empty()) return make_error(Errc::invalid_argument, "--slurm-roles names no role");
  return {};
}

Status prepare_slurm_config(SlurmConfig& c, const Config& config, std::uint16_t port) {
  namespace fs = std::filesystem;
  fs::path db(config.db_path);
  fs::path dir = db.has_parent_path() ? db.parent_path() : fs::path(".");
  if (c.server_url.empty()) {
    std::string host = config.host;
    if (host.empty() || host == "0.0.0.0" || host == "::") {
      char name[256] = {};
      ::gethostname(name, sizeof name - 1);
      host = name;
    } else if (host.find(':') != std::string::npos) {
      host = "[" + host + "]";
    }
    c.server_url = (config.tls_cert.empty() ? "http://" : "https://") + host + ":" + std::to_string(port);
  }
  std::error_code ec;
  if (c.token_file.empty()) {
    // The generated token already lives there; a token given in the configuration is
    // written there (0600) so runner jobs can read it without it showing in squeue.
    c.token_file = fs::absolute(dir / "registration-token", ec).string();
    std::string current;
    if (std::ifstream in(c.token_file); in) std::getline(in, current);
    if (current != config.registration_token) {
      std::ofstream(c.token_file, std::ios::trunc) << config.registration_token << "\n";
      fs::permissions(c.token_file, fs::perms::owner_read | fs::perms::owner_write, ec);
    }
  }
  if (c.log_dir.empty()) c.log_dir = fs::absolute(dir / "slurm", ec).string();
  fs::create_directories(c.log_dir, ec);
  if (ec)
    return make_error(Errc::unavailable, "cannot create the Slurm log directory " + c.log_dir + ": " + ec.message());
  if (!fs::exists(c.script))
    return make_error(Errc::invalid_argument, "--slurm-script: " + c.script + " does not exist");
  return {};
}

}  // namespace kport::coordinator
