// Queue throughput against a running coordinator: enqueue P pipelines (one build job
// each; each build spawns one check job), then R build runners and R gpu runners, one
// thread each, loop claim -> upload one result -> complete until the queue is empty.
// Prints jobs/s claimed and completed, and claim latency percentiles.
//
//   kport-bench-queue --server http://127.0.0.1:8080 --admin-token T --registration-token R
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include <boost/json.hpp>

#include "kport/common/options.h"
#include "kport/http/client.h"

using namespace kport;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

Result<json::value> call(http::Client& c, const std::string& method, const std::string& url, const std::string& token,
                         const json::value* body = nullptr) {
  http::HeaderList h{{"Authorization", "Bearer " + token}};
  auto r = c.fetch(method, url, body ? json::serialize(*body) : std::string(), h);
  if (!r.ok()) return std::move(r).error();
  if (r->status >= 300)
    return make_error(Errc::internal, method + " " + url + " -> " + std::to_string(r->status) + " " + r->body);
  return json::parse(r->body);
}

}  // namespace

int main(int argc, char** argv) {
  Options o("kport-bench-queue", "Claim -> result -> complete throughput of a running coordinator.");
  o.add("server", "", "http://127.0.0.1:8080", "coordinator URL")
      .add("admin-token", "KPORT_ADMIN_TOKEN", "", "admin token")
      .add("registration-token", "KPORT_REGISTRATION_TOKEN", "", "registration token")
      .add("pipelines", "", "2000", "pipelines to enqueue (two jobs each)")
      .add("runners", "", "4", "runners per role");
  if (auto st = o.parse(argc, argv); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.error().message.c_str());
    return 2;
  }
  if (o.help_requested()) {
    std::fputs(o.help_text().c_str(), stdout);
    return 0;
  }
  const std::string base = o.get("server") + "/api/v1";
  const std::string admin = o.get("admin-token"), reg = o.get("registration-token");
  auto pipelines = o.integer("pipelines", 1, 1'000'000);
  auto runners = o.integer("runners", 1, 256);
  if (!pipelines.ok() || !runners.ok()) {
    std::fprintf(stderr, "bad --pipelines or --runners\n");
    return 2;
  }

  http::Client c;
  json::value target = json::object{{"arch", "9.0"}};
  json::value repo = json::object{{"name", "bench"}, {"url", "/srv/bench.git"}};
  if (auto r = call(c, "PUT", base + "/targets/sm_90a", admin, &target); !r.ok()) {
    std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return 1;
  }
  (void)call(c, "POST", base + "/repositories", admin, &repo);
  auto t_enqueue = Clock::now();
  for (std::int64_t i = 0; i < *pipelines; ++i) {
    char sha[41];
    std::snprintf(sha, sizeof sha, "%040llx",
                  static_cast<unsigned long long>(
                      0xbe0000000ULL + static_cast<unsigned long long>(i) +
                      static_cast<unsigned long long>(Clock::now().time_since_epoch().count() % 1000000) * 1000000ULL));
    json::value commit = json::object{{"sha", sha}, {"repo", "bench"}};
    json::value p = json::object{{"commit", sha}, {"repo", "bench"}, {"targets", json::array{"sm_90a"}}};
    (void)call(c, "POST", base + "/commits", admin, &commit);
    if (auto r = call(c, "POST", base + "/pipelines", admin, &p); !r.ok()) {
      std::fprintf(stderr, "%s\n", r.error().message.c_str());
      return 1;
    }
  }
  double enqueue_s = std::chrono::duration<double>(Clock::now() - t_enqueue).count();

  std::atomic<std::int64_t> completed{0};
  std::mutex mu;
  std::vector<double> claim_ms;
  auto worker = [&](std::string role, int idx) {
    http::Client hc;
    json::value regbody =
        json::object{{"name", role + std::to_string(idx)},
                     {"role", role},
                     {"capabilities", {{"arch", "9.0"}, {"gpu_model", "NVIDIA H200"}, {"targets", {"sm_90a"}}}}};
    auto r = call(hc, "POST", base + "/runners/register", reg, &regbody);
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.error().message.c_str());
      return;
    }
    std::string token(r->at("token").as_string());
    std::vector<double> local;
    int idle = 0;
    while (idle < 3) {
      auto t = Clock::now();
      auto claim = call(hc, "POST", base + "/runners/claim?wait=1", token);
      local.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
      if (!claim.ok()) {
        std::fprintf(stderr, "%s\n", claim.error().message.c_str());
        break;
      }
      const auto& job = claim->at("job");
      if (job.is_null()) {
        ++idle;
        local.pop_back();
        continue;
      }
      idle = 0;
      std::string id = std::to_string(job.at("id").as_int64());
      json::value results = json::object{{"attempt", job.at("attempt")},
                                         {"results", json::array{json::object{{"target", "sm_90a"},
                                                                              {"family", "gemm"},
                                                                              {"variant", "simt"},
                                                                              {"instance", "gemm.simt.a"},
                                                                              {"dtype", "bf16"},
                                                                              {"shape", "m=256,n=256,k=256"},
                                                                              {"gpu_model", "NVIDIA H200"},
                                                                              {"arch", "9.0"},
                                                                              {"status", "passed"},
                                                                              {"median_us", 10.0},
                                                                              {"stddev_us", 0.1},
                                                                              {"samples", 10}}}}};
      json::value done = json::object{{"attempt", job.at("attempt")}};
      if (role == "gpu") (void)call(hc, "POST", base + "/jobs/" + id + "/results", token, &results);
      if (auto d = call(hc, "POST", base + "/jobs/" + id + "/complete", token, &done); d.ok()) ++completed;
    }
    std::lock_guard lock(mu);
    claim_ms.insert(claim_ms.end(), local.begin(), local.end());
  };
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < *runners; ++i) {
    threads.emplace_back(worker, "build", i);
    threads.emplace_back(worker, "gpu", i);
  }
  for (auto& t : threads) t.join();
  // The last 3 idle polls of each runner (about 1 s each at the end) are not work time.
  double secs = std::chrono::duration<double>(Clock::now() - t0).count() - 3.0;
  std::sort(claim_ms.begin(), claim_ms.end());
  auto pct = [&](double p) {
    return claim_ms.empty() ? 0.0 : claim_ms[static_cast<std::size_t>(p * static_cast<double>(claim_ms.size() - 1))];
  };
  std::printf("enqueued %lld pipelines in %.2f s (%.0f/s)\n", static_cast<long long>(*pipelines), enqueue_s,
              static_cast<double>(*pipelines) / enqueue_s);
  std::printf("completed %lld jobs in %.2f s: %.0f jobs/s claimed and completed (%lld runners per role)\n",
              static_cast<long long>(completed.load()), secs, static_cast<double>(completed.load()) / secs,
              static_cast<long long>(*runners));
  std::printf("claim latency ms: p50 %.2f p99 %.2f max %.2f\n", pct(0.5), pct(0.99),
              claim_ms.empty() ? 0.0 : claim_ms.back());
  return completed.load() == 2 * *pipelines ? 0 : 1;
}
