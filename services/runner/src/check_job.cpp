#include "kport/runner/check_job.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <optional>
#include <set>
#include <sstream>

#include "harness_exec.h"
#include "publish.h"
#include "kport/api/job_payload.h"
#include "kport/api/result_upload.h"
#include "kport/common/crypto.h"
#include "kport/common/json_fields.h"
#include "kport/common/log.h"
#include "kport/common/process.h"
#include "kport/porting/manifest.h"
#include "kport/runner/answers.h"

namespace kport::runner {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

JobOutcome failed(std::string reason, bool retry = false) { return JobOutcome{false, std::move(reason), retry}; }

using json_fields::num;
using json_fields::obj;
using json_fields::str;

// The artifact named by an ok build record of `query`; nullopt when none names one. A
// lookup that fails or cannot be read is an Error: building locally because a proxy
// answered with a page would be wrong.
Result<std::optional<BuildHarness>> harness_artifact(CoordinatorApi& api, const std::string& query) {
  const std::string path = "/api/v1/builds?" + query + "&status=ok&limit=200";
  auto page = api.get_text(path);
  if (!page.ok()) return std::move(page).error();
  auto artifacts = parse_build_harnesses(*page);
  if (!artifacts.ok()) return make_error(artifacts.error().code, "GET " + path + ": " + artifacts.error().message);
  if (artifacts->empty()) return std::optional<BuildHarness>{};
  return std::optional<BuildHarness>(std::move(artifacts->front()));
}

// The library's environment for its harness processes on this runner, NAME=value: the
// placeholders read {target} and {arch} of the job, and {build_dir} and {source_dir} the
// folder the harness lies in (a GPU runner has no checkout). invalid_argument naming the
// variable when a value does not expand.
Result<std::vector<std::string>> library_env(const std::map<std::string, std::string>& env,
                                             const std::filesystem::path& harness, const std::string& target) {
  const std::string folder = harness.parent_path().string();
  const porting::Placeholders values{target, porting::cuda_arch_of(target), folder, folder};
  std::vector<std::string> out;
  for (const auto& [name, value] : env) {
    auto v = porting::expand(value, values);
    if (!v.ok())
      return make_error(Errc::invalid_argument,
                        "the library's env." + name + " (kport.json) does not expand: " + v.error().message);
    out.push_back(name + "=" + *v);
  }
  return out;
}

json::array string_array(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

// One result of POST /api/v1/jobs/{id}/results from a case outcome: the figures through
// api::fill_from_check/fill_from_bench, the entries' own objects kept in env. The seed goes
// up as the unsigned 64-bit number the harness used; env.reproduce holds what it takes to
// run the case again: the harness (by sha256) and the exact arguments.
api::ResultUpload result_upload(const CaseOutcome& o, const GpuInfo& gpu, const std::string& commit,
                                const std::string& toolkit, const json::object& env_base) {
  api::ResultUpload r;
  r.family = o.c.family;
  r.variant = o.c.variant;
  r.instance = o.c.instance;
  r.dtype = o.c.dtype;
  r.shape = o.c.shape;
  r.status = api::parse_case_status(o.status).value_or(api::CaseStatus::crashed);
  r.message = o.message;
  r.gpu_model = gpu.name;
  r.gpu_uuid = gpu.uuid;
  r.arch = gpu.arch;
  r.driver = gpu.driver;
  r.toolkit = toolkit;
  r.commit = commit;
  r.seed = o.seed;
  api::fill_from_check(r, o.check);
  json::object env = env_base;
  if (!o.check.reference.empty()) env["reference"] = o.check.reference;
  if (const auto* t = obj(o.check.raw, "tolerance")) env["tolerance"] = *t;
  if (!o.bench.empty()) {
    // The runner's own figure (combined rounds or a screen) in the harness's entry form.
    if (auto b = api::parse_harness_entry(o.bench, "bench"); b.ok()) {
      api::fill_from_bench(r, *b);
      for (const char* k : {"timing", "clock_before", "clock_after"})
        if (const auto* v = obj(b->raw, k)) env[k] = *v;
    } else {
      r.message += (r.message.empty() ? "" : "; ") + ("its timing could not be read: " + b.error().message);
    }
  }
  json::object repro;  // env_base's harness and target, plus this case's arguments
  if (auto* base = env.if_contains("reproduce"); base && base->is_object()) repro = std::move(base->as_object());
  if (!o.check_args.empty()) repro["check"] = string_array(o.check_args);
  if (!o.bench_args.empty() && !o.bench.empty()) repro["bench"] = string_array(o.bench_args);
  if (o.bench_seed) repro["bench_seed"] = *o.bench_seed;
  env["reproduce"] = std::move(repro);
  r.env = std::move(env);
  return r;
}

// The results of a batch of `size` a refusal names ("field 'results[3].shape': ..."),
// ascending; empty when it is no refusal of single results (the batch as a whole, the
// lease, the network), which fails the upload.
std::vector<std::size_t> refused_results(const Error& e, std::size_t size) {
  std::set<std::size_t> out;
  if (e.code != Errc::invalid_argument) return {};
  static constexpr std::string_view k_mark = "field 'results[";
  for (auto at = e.message.find(k_mark); at != std::string::npos; at = e.message.find(k_mark, at + 1)) {
    std::size_t i = 0, p = at + k_mark.size();
    bool digits = false;
    while (p < e.message.size() && e.message[p] >= '0' && e.message[p] <= '9' && i < size) {
      i = i * 10 + static_cast<std::size_t>(e.message[p++] - '0');
      digits = true;
    }
    if (!digits || p >= e.message.size() || e.message[p] != ']' || i >= size) return {};
    out.insert(i);
  }
  return {out.begin(), out.end()};
}

}  // namespace

std::vector<std::string> CheckHandler::gpu_env() const {
  return {"CUDA_VISIBLE_DEVICES=" + m_s.gpu.uuid, "CUDA_DEVICE_ORDER=PCI_BUS_ID"};
}

Status CheckHandler::prepare() {
  std::error_code ec;
  fs::create_directories(m_s.workdir / "harness", ec);
  if (ec)
    return make_error(Errc::internal, "cannot create " + (m_s.workdir / "harness").string() + ": " + ec.message());
  if (m_s.gpu.arch.empty() || m_s.gpu.uuid.empty())
    return make_error(Errc::invalid_argument, "the GPU has no arch or uuid");
  return {};
}

Result<api::RunnerRegistration> CheckHandler::registration(const std::string& name) {
  // A worker registers (and so claims) only once its GPU is its own on this host: another
  // runner process given the same GPU keeps it until it ends, and this one waits.
  if (!m_lock.held() && !m_s.lock_dir.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    auto lock = GpuLock::try_take(m_s.lock_dir, m_s.gpu.uuid,
                                  "pid " + std::to_string(::getpid()) + ", runner " + name + ", host " + host);
    if (!lock.ok()) return lock.error();
    m_lock = std::move(*lock);
  }
  api::RunnerRegistration r;
  r.name = name;
  r.role = api::RunnerRole::gpu;
  r.capabilities.gpu_model = m_s.gpu.name;
  r.capabilities.gpu_uuid = m_s.gpu.uuid;
  r.capabilities.arch = m_s.gpu.arch;
  r.capabilities.driver = m_s.gpu.driver;
  r.capabilities.extra = json::object{{"index", m_s.gpu.index},
                                      {"sm_count", m_s.gpu.sm_count},
                                      {"memory_mib", m_s.gpu.memory_mib},
                                      {"pci_bus_id", m_s.gpu.pci_bus_id}};
  return r;
}

Status CheckHandler::ready() {
  if (!m_unhealthy_harness) return {};
  HarnessOptions o;
  o.harness = *m_unhealthy_harness;
  o.env = gpu_env();
  o.env.insert(o.env.end(), m_unhealthy_env.begin(), m_unhealthy_env.end());
  o.machine = m_s.env;
  Harness h(o, [](const std::string&) {});
  if (auto d = h.device(); !d.ok())
    return make_error(Errc::unavailable, m_unhealthy_reason + "; still: " + d.error().message);
  log::info("GPU answers again; taking work", {{"gpu", m_s.gpu.uuid}});
  m_unhealthy_harness.reset();
  return {};
}

Result<CheckHandler::HarnessFile> CheckHandler::cached_harness(CoordinatorApi& api, const std::string& sha,
                                                               const std::string& target, const LogFn& log) {
  fs::path path = m_s.workdir / "harness" / sha / ("kport-harness-" + target);
  if (fs::exists(path)) {
    log("harness " + sha.substr(0, 12) + " from the local cache");
    return HarnessFile{path, sha};
  }
  auto bytes = api.get_artifact(sha);
  if (!bytes.ok()) return bytes.error();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  fs::path tmp = path;
  tmp += ".part";
  {
    // No harness process another worker of this runner starts meanwhile may carry the
    // descriptor: the file would be "busy" (ETXTBSY) until that child's execve.
    const NoForkWhileWriting no_fork;
    if (auto st = (m_s.env ? *m_s.env : Env::system()).write_file(tmp, *bytes); !st.ok()) return st.error();
  }
  ::chmod(tmp.c_str(), 0755);
  fs::rename(tmp, path, ec);
  if (ec) return make_error(Errc::internal, "cannot place " + path.string() + ": " + ec.message());
  log("harness " + sha.substr(0, 12) + " downloaded (" + std::to_string(bytes->size()) + " bytes, sha256 verified)");
  return HarnessFile{path, sha};
}

Result<CheckHandler::HarnessFile> CheckHandler::harness_for(CoordinatorApi& api, const ClaimedJob& job,
                                                            const std::atomic<bool>& cancel, const LogFn& log) {
  // The build this check depends on names the artifact; a check with no build (queued
  // directly) takes any ok build of its commit and target.
  std::optional<BuildHarness> found;
  if (job.depends_on) {
    auto by_job = harness_artifact(api, "job=" + std::to_string(*job.depends_on));
    if (!by_job.ok()) return std::move(by_job).error();
    found = std::move(*by_job);
  }
  if (!found) {
    auto by_commit = harness_artifact(api, "commit=" + job.commit + "&target=" + job.target);
    if (!by_commit.ok()) return std::move(by_commit).error();
    found = std::move(*by_commit);
  }
  if (found) {
    auto file = cached_harness(api, found->sha256, job.target, log);
    if (file.ok()) file->env = std::move(found->env);
    return file;
  }
  log("no harness artifact for " + job.commit.substr(0, 12) + " " + job.target + "; building it here");
  if (!m_toolkit_probed) {
    auto listing = porting::make_nvcc_probe(m_s.nvcc_probe)->probe();
    if (!listing.ok())
      return make_error(Errc::unprocessable,
                        "no harness artifact and no toolkit to build one: " + listing.error().message);
    m_s.build.toolkit = *listing;
    m_toolkit_probed = true;
  }
  auto built = checkout_and_build(api, job, m_s.build, cancel, log);
  if (!built.ok()) return built.error();
  if (built->report.harness.empty())
    return make_error(Errc::unprocessable,
                      "the local build of " + job.target + " linked no harness: " + built->report.harness_error);
  // Uploaded, so the results' repro commands can name a harness anyone can download.
  std::ifstream in(built->report.harness, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string sha = crypto::sha256_hex(bytes.str());
  if (auto st = api.put_artifact(job.id, job.attempt, sha, "kport-harness-" + job.target, "harness", bytes.str());
      !st.ok())
    log("could not upload the locally built harness (" + st.error().message + "); its results name sha256 " +
        sha.substr(0, 12) + ", which the coordinator cannot serve");
  else
    log("uploaded the locally built harness, sha256 " + sha.substr(0, 12));
  return HarnessFile{built->report.harness, sha, manifest_env(built->kernels_dir)};
}

JobOutcome CheckHandler::run(CoordinatorApi& api, const ClaimedJob& job, const std::atomic<bool>& cancel,
                             const LogFn& log) {
  if (job.kind != "check") return failed("this runner has the gpu role and cannot run a '" + job.kind + "' job");
  const auto started = std::chrono::steady_clock::now();
  log("GPU " + m_s.gpu.name + " " + m_s.gpu.uuid + " (arch " + m_s.gpu.arch + ", driver " + m_s.gpu.driver +
      "); commit " + job.commit + ", target " + job.target);
  auto harness_path = harness_for(api, job, cancel, log);
  if (!harness_path.ok())
    return failed("no harness to run: " + harness_path.error().message, harness_path.error().code == Errc::unavailable);

  HarnessOptions ho;
  ho.harness = harness_path->path;
  // The runner's GPU pinning first: the first of two entries of a name is the one a
  // process reads, so a library's env cannot move its harness to another GPU.
  ho.env = gpu_env();
  std::vector<std::string> library_vars;
  if (!harness_path->env.empty()) {
    auto extra = library_env(harness_path->env, harness_path->path, job.target);
    if (!extra.ok()) return failed(extra.error().message);
    library_vars = std::move(*extra);
    std::string names;
    for (const auto& e : library_vars) names += (names.empty() ? "" : ", ") + e.substr(0, e.find('='));
    log("the library's environment for its harness (kport.json env): " + names);
    ho.env.insert(ho.env.end(), library_vars.begin(), library_vars.end());
  }
  ho.kernel_timeout_s = m_s.kernel_timeout_s;
  ho.process_timeout = m_s.process_timeout;
  ho.sampling = m_s.sampling;
  ho.bench = m_s.bench;
  ho.seed = m_s.seed;
  ho.cancel = &cancel;
  ho.machine = m_s.env;
  auto payload = api::parse_job_payload(job.payload);
  if (!payload.ok()) return failed("the job's payload cannot be read: " + payload.error().message);
  if (payload->bench) ho.bench = *payload->bench;
  if (payload->paired && ho.bench) {
    // A re-measure times the baseline's harness too, its rounds interleaved with this
    // one's on this GPU: what moves between the two is the code, not the machine's day.
    // Without it the re-measure still times this commit alone, as before pairing.
    auto paired = cached_harness(api, payload->paired->harness_sha256, job.target, log);
    if (!paired.ok()) {
      log("cannot fetch the baseline's harness " + payload->paired->harness_sha256.substr(0, 12) +
          " to time against (" + paired.error().message + "); timing this commit alone");
    } else {
      ho.paired_harness = paired->path;
      ho.paired_commit = payload->paired->commit;
      ho.paired_sha256 = paired->sha256;
      log("timing interleaved with the baseline " + payload->paired->commit.substr(0, 12) + "'s harness, A/B/A/B");
    }
  }
  Harness harness(ho, log);

  auto device = harness.device();
  if (!device.ok()) {
    m_unhealthy_harness = harness_path->path;
    m_unhealthy_env = library_vars;
    m_unhealthy_reason = "GPU " + m_s.gpu.uuid + " failed its health check";
    return failed("GPU " + m_s.gpu.uuid + " is not usable: " + device.error().message, true);
  }
  std::string seen_cc = str(*device, "compute_capability");
  if (!seen_cc.empty() && seen_cc != m_s.gpu.arch)
    return failed("the harness sees compute capability " + seen_cc + " but this runner registered arch " + m_s.gpu.arch,
                  true);
  std::string toolkit = str(*device, "runtime_version");
  auto listing = harness.list();
  if (!listing.ok()) return failed("the harness cannot list its instances: " + listing.error().message);

  // Which instances: every one built into the harness, or the payload's choice
  // ("instances": names, "filter": a substring), as revalidation pipelines ask, and of a
  // shard of a check split over several GPUs only its families ("families", or every
  // family but "families_except"). Which cases: each instance's grids, or exactly the
  // payload's "cases" ({family, dtype, shape}) for every instance of that family, as a
  // request to measure a shape asks.
  const std::vector<std::string>& wanted = payload->instances;
  const std::string& filter = payload->filter;
  auto named = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  std::optional<std::vector<HarnessCase>> asked;  // family, dtype and shape set; no instance
  if (payload->cases) {
    asked.emplace();
    for (const auto& c : *payload->cases) asked->push_back(HarnessCase{"", c.family, "", c.dtype, c.shape});
  }
  struct Named {
    std::string name, family, variant;
  };
  std::vector<Named> instances;
  if (const auto* vs = listing->if_contains("variants"); vs && vs->is_array())
    for (const auto& v : vs->as_array()) {
      const auto* list = v.is_object() ? v.as_object().if_contains("instances") : nullptr;
      if (!list || !list->is_array()) continue;
      for (const auto& i : list->as_array()) {
        if (!i.is_object()) continue;
        auto name = str(i.as_object(), "name");
        if (name.empty() || (!filter.empty() && name.find(filter) == std::string::npos)) continue;
        if (!wanted.empty() && !named(wanted, name)) continue;
        Named n{name, str(i.as_object(), "family"), str(i.as_object(), "variant")};
        if (!payload->families.empty() && !named(payload->families, n.family)) continue;
        if (named(payload->families_except, n.family)) continue;
        if (asked &&
            std::none_of(asked->begin(), asked->end(), [&](const HarnessCase& c) { return c.family == n.family; }))
          continue;
        instances.push_back(std::move(n));
      }
    }
  const bool narrowed =
      !filter.empty() || !wanted.empty() || asked || !payload->families.empty() || !payload->families_except.empty();
  const std::string shard = payload->shard ? "shard " + std::to_string(payload->shard->index + 1) + "/" +
                                                 std::to_string(payload->shard->count)
                                           : "";
  if (instances.empty()) {
    // The rest of a split check may find every family taken by the other shards.
    if (payload->shard && payload->families.empty()) {
      const std::string none = shard + ": every family of the harness is another shard's; nothing to check";
      log(none);
      return JobOutcome{true, none, false};
    }
    return failed("the harness for " + job.target + " holds no instance to check" +
                  (narrowed ? " among those asked for" : ""));
  }
  if (payload->shard) {
    std::set<std::string> families;
    for (const auto& n : instances) families.insert(n.family);
    std::string list;
    for (const auto& f : families) list += (list.empty() ? "" : ", ") + f;
    log(shard + " of this arch's check, split over its GPUs by family: " + list);
  }
  log(std::to_string(instances.size()) + " instance(s) to check and time");

  json::object env_base{
      {"harness", harness_path->path.filename().string()},
      {"harness_sha256", harness_path->sha256},
      {"reproduce", json::object{{"harness", harness_path->path.filename().string()},
                                 {"harness_sha256", harness_path->sha256},
                                 {"target", job.target}}},
      {"gpu", m_s.gpu.to_json()},
      {"telemetry_before", read_telemetry(m_s.nvidia_smi, m_s.gpu.uuid, m_s.env ? *m_s.env : Env::system())},
      {"kernel_timeout_s", m_s.kernel_timeout_s}};
  if (const auto* ck = obj(*device, "clock")) env_base["clock_at_start"] = *ck;
  if (!library_vars.empty()) {
    // A repro command runs the harness with the library's env, as this runner did.
    json::object vars;
    for (const auto& e : library_vars) vars[e.substr(0, e.find('='))] = e.substr(e.find('=') + 1);
    env_base["reproduce"].as_object()["env"] = std::move(vars);
  }
  std::map<std::string, int> counts;
  std::vector<std::string> problems, refused;
  // Uploads in batches, so no request body grows with the grid. The coordinator stores a
  // batch whole or refuses it naming each result it will not take (a shape its family
  // does not have): those are left out and the rest sent again, so one wrong case costs
  // only its own figure; the job then fails naming them.
  auto upload = [&](const std::vector<const CaseOutcome*>& which,
                    const std::string& what) -> std::optional<JobOutcome> {
    for (std::size_t i = 0; i < which.size(); i += 100) {
      std::vector<api::ResultUpload> docs;
      for (std::size_t j = i; j < std::min(which.size(), i + 100); ++j)
        docs.push_back(result_upload(*which[j], m_s.gpu, job.commit, toolkit, env_base));
      while (!docs.empty()) {
        auto st = api.post_results(job.id, job.attempt, docs);
        if (st.ok()) break;
        const std::vector<std::size_t> bad = refused_results(st.error(), docs.size());
        if (bad.empty()) return failed(what + ", but the upload failed: " + st.error().message, true);
        log("the coordinator refused " + std::to_string(bad.size()) + " result(s); sending the other " +
            std::to_string(docs.size() - bad.size()) + " again: " + st.error().message);
        for (auto k = bad.rbegin(); k != bad.rend(); ++k) {
          const auto& d = docs[*k];
          refused.push_back(d.instance + " " + d.dtype + " " + d.shape);
          docs.erase(docs.begin() + static_cast<std::ptrdiff_t>(*k));
        }
      }
    }
    return std::nullopt;
  };
  auto gave_up = [&](const Error& e, const std::string& during) {
    if (cancel) return failed("cancelled on request while " + during);
    // A report of a version this runner does not read says nothing about the GPU: the job
    // fails for good (another attempt gets the same harness), the GPU keeps working.
    if (e.code == Errc::unprocessable) return failed(e.message);
    m_unhealthy_harness = harness_path->path;
    m_unhealthy_env = library_vars;
    m_unhealthy_reason = e.message;
    return failed(e.message, true);
  };
  // Check every instance, check_parallel at a time; what did not pass is final and goes
  // up as soon as its instance is checked.
  std::vector<CaseOutcome> outcomes;
  std::set<std::string> to_time, uploaded;
  std::mutex mu;  // the job log, the API client and what the workers collect
  const LogFn locked_log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    log(line);
  };
  std::optional<JobOutcome> stopped;
  double check_secs = 0;
  std::atomic<std::size_t> next{0};
  auto check_worker = [&] {
    Harness mine(ho, locked_log);
    for (std::size_t i; (i = next++) < instances.size();) {
      const auto& inst = instances[i];
      {
        std::lock_guard<std::mutex> lock(mu);
        if (stopped) return;
        if (cancel) {
          stopped = failed("cancelled on request while checking " + inst.name);
          return;
        }
      }
      auto t0 = std::chrono::steady_clock::now();
      std::vector<HarnessCase> cases, timed;
      if (asked) {
        for (const auto& c : *asked)
          if (c.family == inst.family)
            cases.push_back(HarnessCase{inst.name, inst.family, inst.variant, c.dtype, c.shape});
        timed = cases;
      } else {
        auto planned = mine.plan("check", inst.name);
        if (!planned.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (!stopped) stopped = failed("cannot plan the check of " + inst.name + ": " + planned.error().message);
          return;
        }
        cases = std::move(*planned);
        if (ho.bench) {
          auto grid = mine.plan("bench", inst.name);
          if (grid.ok())
            timed = std::move(*grid);
          else
            locked_log("cannot plan bench for " + inst.name + ": " + grid.error().message);
        }
      }
      const double before = mine.check_seconds();
      auto checked = mine.check(cases);
      std::lock_guard<std::mutex> lock(mu);
      check_secs += mine.check_seconds() - before;
      if (!checked.ok()) {
        if (!stopped) stopped = gave_up(checked.error(), "checking " + inst.name);
        return;
      }
      std::vector<const CaseOutcome*> final_now;
      int passed = 0;
      for (const auto& o : *checked) {
        if (o.status == "passed")
          ++passed;
        else
          final_now.push_back(&o), uploaded.insert(o.c.key());
      }
      if (auto f = upload(final_now, "checked " + inst.name)) {
        if (!stopped) stopped = *f;
        return;
      }
      for (const auto& c : timed) to_time.insert(c.key());
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      log(inst.name + ": " + std::to_string(checked->size()) + " case(s) checked, " + std::to_string(passed) +
          " passed, " + std::to_string(static_cast<int>(secs)) + " s");
      for (auto& o : *checked) outcomes.push_back(std::move(o));
    }
  };
  {
    std::vector<std::thread> workers;
    const int n = std::max(1, std::min<int>(m_s.check_parallel, static_cast<int>(instances.size())));
    for (int w = 0; w < n; ++w) workers.emplace_back(check_worker);
    for (auto& t : workers) t.join();
  }
  if (stopped) return *stopped;
  // Time what passed: screened where instances compete, precise where it may decide an answer.
  if (ho.bench) {
    auto t0 = std::chrono::steady_clock::now();
    if (auto st = harness.time(outcomes, to_time); !st.ok()) return gave_up(st.error(), "timing");
    int timed = 0, unstable = 0;
    for (const auto& o : outcomes) {
      timed += !o.bench.empty();
      unstable += o.bench.contains("unstable");
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log("timed " + std::to_string(timed) + " case(s): " + std::to_string(harness.screened_cases()) + " screened, " +
        std::to_string(harness.precise_cases()) + " measured precisely" +
        (unstable ? " (" + std::to_string(unstable) + " unstable: rounds disagree)" : "") + ", " +
        std::to_string(static_cast<int>(secs)) + " s");
  }
  std::vector<const CaseOutcome*> rest;
  for (const auto& o : outcomes) {
    ++counts[o.status];
    if (o.status != "passed" && o.status != "unsupported" && problems.size() < 12)
      problems.push_back(o.c.instance + " " + o.c.dtype + " " + o.c.shape + ": " + o.status +
                         (o.message.empty() ? "" : " (" + o.message + ")"));
    // Every case that passed its check, including one that then faulted while timed.
    if (!uploaded.count(o.c.key())) rest.push_back(&o);
  }
  if (auto f = upload(rest, "checked and timed " + std::to_string(instances.size()) + " instance(s)")) return *f;
  log("telemetry after: " +
      json::serialize(read_telemetry(m_s.nvidia_smi, m_s.gpu.uuid, m_s.env ? *m_s.env : Env::system())));
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  char timing[320];
  const double measuring = harness.screen_seconds() + harness.bench_seconds();
  std::snprintf(
      timing, sizeof timing,
      "time: wall %.1f s, check processes %.1f s, screen processes %.1f s, bench processes %.1f s (%.0f%% measuring)",
      wall, check_secs, harness.screen_seconds(), harness.bench_seconds(), wall > 0 ? 100.0 * measuring / wall : 0.0);
  log(timing);
  std::string summary;
  for (const auto& [status, n] : counts) summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  if (!refused.empty()) {
    std::string reason = std::to_string(refused.size()) +
                         " result(s) refused by the coordinator, their shapes not of their family (the job's log "
                         "has its answer; the other results are stored): ";
    for (std::size_t i = 0; i < refused.size() && i < 12; ++i) reason += (i ? "; " : "") + refused[i];
    return failed(reason);
  }
  int bad = counts["failed"] + counts["crashed"] + counts["timeout"];
  if (bad > 0) {
    std::string reason = std::to_string(bad) + " case(s) did not pass on " + m_s.gpu.name + " (" + summary + "): ";
    for (std::size_t i = 0; i < problems.size(); ++i) reason += (i ? "; " : "") + problems[i];
    return failed(reason);
  }
  return JobOutcome{true, summary + " on " + m_s.gpu.name + " " + m_s.gpu.uuid, false};
}

int checks_at_once(unsigned cores, std::size_t gpus) {
  const std::size_t share = cores / std::max<std::size_t>(gpus, 1);
  return static_cast<int>(std::clamp<std::size_t>(share, 1, 64));
}

}  // namespace kport::runner
