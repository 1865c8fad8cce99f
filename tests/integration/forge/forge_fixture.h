// A coordinator that reports to a FakeForge: a push webhook's pipeline, run through the
// real runner API, reported as GitHub check runs or Gitea/GitLab commit statuses, and
// told to the fake's webhook receiver.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fake_forge.h"
#include "hook_fixture.h"
#include "test_pki.h"

namespace kport::testing {

inline const std::string k_forge_token = "forge-token-never-shown";
inline const std::string k_notify_secret = "notify-secret-for-tests";
inline const std::string k_public_url = "https://kport.example";

class ForgeTest : public HookTest {
 protected:
  // tls: the fake forge (and webhook receiver) speaks HTTPS with a test CA the
  // coordinator is told to trust (--forge-ca-file).
  explicit ForgeTest(bool tls = false)
      : pki(tls ? std::make_unique<TestPki>(dir.path() / "pki") : nullptr),
        forge(pki ? pki->cert() : "", pki ? pki->key() : "") {
    if (pki) {
      extra_args.push_back("--forge-ca-file");
      extra_args.push_back(pki->ca());
    }
    std::ofstream(dir.path() / "forge-token") << k_forge_token << "\n";
    std::filesystem::permissions(dir.path() / "forge-token",
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::ofstream(dir.path() / "notify-secret") << k_notify_secret << "\n";
    for (std::string a : {"--delivery-poll-ms", "50", "--delivery-retry-base-ms", "100", "--delivery-retry-max-ms",
                          "400", "--delivery-max-attempts", "3", "--delivery-timeout-ms", "1000", "--public-url"})
      extra_args.push_back(a);
    extra_args.push_back(k_public_url);
    extra_args.push_back("--notify-urls");
    extra_args.push_back(forge.url("/hooks/kport"));
    extra_args.push_back("--notify-secret-file");
    extra_args.push_back((dir.path() / "notify-secret").string());
  }

  void SetUp() override {
    HookTest::SetUp();
    add_target("sm_90a", "9.0");
    ASSERT_EQ(post("/api/v1/repositories",
                   boost::json::object{{"name", "org/kernels"}, {"url", "/srv/git/kernels.git"}}, k_admin)
                  .status,
              201);
  }

  JsonReply connect(const std::string& kind, const std::string& mode, const std::string& project = "org/kernels") {
    return put("/api/v1/repositories/org%2Fkernels/forge",
               boost::json::object{{"kind", kind},
                                   {"api_url", forge.url(kind == "github"  ? ""
                                                         : kind == "gitea" ? "/api/v1"
                                                                           : "/api/v4")},
                                   {"project", project},
                                   {"token_file", (dir.path() / "forge-token").string()},
                                   {"mode", mode}},
               k_admin);
  }

  // A GitHub App's private key file (made on first use, mode 0600, beside its public
  // key `<name>.pub.pem`): "app" is the one the fake forge is told of, any other a key the
  // forge does not know.
  std::string app_key(const std::string& name = "app") {
    const auto key = dir.path() / "app" / (name + ".pem");
    if (!std::filesystem::exists(key)) {
      const std::string made = make_rsa_key(dir.path() / "app", name);
      EXPECT_EQ(made, "");
    }
    return key.string();
  }
  std::string app_public_key(const std::string& name = "app") {
    app_key(name);
    return (dir.path() / "app" / (name + ".pub.pem")).string();
  }
  // The GitHub connection as app `app_id`'s installation `installation_id`, signing with
  // `key_file`; `more` adds (or overrides) fields.
  JsonReply connect_app(std::int64_t app_id, std::int64_t installation_id, const std::string& key_file,
                        boost::json::object more = {}) {
    boost::json::object body{{"kind", "github"},
                             {"api_url", forge.url()},
                             {"project", "org/kernels"},
                             {"app_id", app_id},
                             {"installation_id", installation_id},
                             {"private_key_file", key_file}};
    for (auto& [k, v] : more) body[k] = v;
    return put("/api/v1/repositories/org%2Fkernels/forge", body, k_admin);
  }

  // Pushes `commit` to main; returns the page its pipeline is reported with (details_url,
  // target_url), empty when no pipeline came.
  std::string push(const std::string& commit, const std::string& parent = "") {
    auto r = github(push_body("org/kernels", "refs/heads/main", parent.empty() ? std::string(40, '0') : parent, commit,
                              false, parent),
                    "delivery-" + commit);
    EXPECT_EQ(r.status, 201) << r.raw;
    if (r.status != 201 || !r.body.at("pipeline").is_object()) return "";
    return k_public_url + "/#/pipeline/" + std::to_string(r.body.at("pipeline").at("id").as_int64());
  }

  // Claims the next job with `token`; returns {id, attempt}.
  std::pair<std::string, std::int64_t> take(const std::string& token) {
    auto job = claim(token);
    EXPECT_TRUE(job.is_object()) << "nothing to claim";
    if (!job.is_object()) return {"", 0};
    return {std::to_string(job.at("id").to_number<std::int64_t>()), job.at("attempt").to_number<std::int64_t>()};
  }
  void finish(const std::pair<std::string, std::int64_t>& job, const std::string& token, const std::string& key,
              boost::json::array rows) {
    const std::string base = "/api/v1/jobs/" + job.first;
    auto up = post(base + (key == "records" ? "/builds" : "/results"),
                   boost::json::object{{"attempt", job.second}, {key, std::move(rows)}}, token);
    ASSERT_EQ(up.status, 200) << up.raw;
    auto done = post(base + "/complete", boost::json::object{{"attempt", job.second}, {"status", "succeeded"}}, token);
    ASSERT_EQ(done.status, 200) << done.raw;
  }
  void fail(const std::pair<std::string, std::int64_t>& job, const std::string& token) {
    auto done =
        post("/api/v1/jobs/" + job.first + "/complete",
             boost::json::object{{"attempt", job.second}, {"status", "failed"}, {"reason", "cannot check out commit"}},
             token);
    ASSERT_EQ(done.status, 200) << done.raw;
  }

  static boost::json::array ok_build() {
    return {boost::json::object{{"family", "gemm"},
                                {"variant", "simt"},
                                {"status", "ok"},
                                {"registers", 96},
                                {"shared_mem_bytes", 4096},
                                {"spill_stores_bytes", 0},
                                {"spill_loads_bytes", 0}}};
  }
  static boost::json::array passing_result(double median_us = 100.0) {
    return {boost::json::object{{"family", "gemm"},
                                {"variant", "simt"},
                                {"instance", "gemm.simt.default"},
                                {"dtype", "bf16"},
                                {"shape", "m=4096,n=4096,k=4096"},
                                {"toolkit", "13.0"},
                                {"gpu_model", "NVIDIA H200"},
                                {"gpu_uuid", "GPU-1"},
                                {"arch", "9.0"},
                                {"driver", "580.1"},
                                {"status", "passed"},
                                {"max_rel_err", 1e-3},
                                {"tolerance", 1e-2},
                                {"median_us", median_us},
                                {"stddev_us", 0.5},
                                {"samples", 100}}};
  }

  // A re-measure's result as the GPU runner uploads it when it timed the baseline's
  // harness beside this one, four rounds each (env.timing.paired): what confirms a slowdown.
  static boost::json::array paired_result(double median_us, double baseline_us) {
    auto r = passing_result(median_us);
    boost::json::array rounds, base;
    for (int i = 0; i < 4; ++i) {
      rounds.push_back(boost::json::object{{"median_ms", median_us / 1000}});
      base.push_back(baseline_us / 1000);
    }
    r[0].as_object()["env"] = boost::json::object{
        {"timing", boost::json::object{{"median_ms", median_us / 1000},
                                       {"rounds", std::move(rounds)},
                                       {"paired", boost::json::object{{"order", "interleaved"},
                                                                      {"rounds", 4},
                                                                      {"median_ms", baseline_us / 1000},
                                                                      {"stddev_ms", 0.0005},
                                                                      {"samples", 100},
                                                                      {"unstable", false},
                                                                      {"round_medians_ms", std::move(base)}}}}}};
    return r;
  }

  // The forge requests whose path contains `part`.
  std::vector<ForgeRequest> to(const std::string& part) const {
    std::vector<ForgeRequest> out;
    for (auto& r : forge.requests())
      if (r.target.find(part) != std::string::npos) out.push_back(r);
    return out;
  }
  // Waits until `n` requests to paths containing `part` came.
  std::vector<ForgeRequest> wait_to(const std::string& part, std::size_t n,
                                    std::chrono::milliseconds timeout = std::chrono::milliseconds(20'000)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    for (std::size_t seen = 0;;) {
      auto got = to(part);
      if (got.size() >= n || std::chrono::steady_clock::now() >= end) return got;
      seen = forge.requests().size();
      forge.wait_for(seen + 1, std::chrono::milliseconds(200));
    }
  }
  // Waits until GET /api/v1/deliveries?<query> satisfies `done`.
  boost::json::array wait_deliveries(const std::string& query,
                                     const std::function<bool(const boost::json::array&)>& done,
                                     std::chrono::milliseconds timeout = std::chrono::milliseconds(20'000)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto r = get("/api/v1/deliveries?" + query);
      EXPECT_EQ(r.status, 200) << r.raw;
      auto items = r.status == 200 ? r.body.at("items").as_array() : boost::json::array{};
      if (done(items) || std::chrono::steady_clock::now() >= end) return items;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling an HTTP API: no event to wait on
    }
  }
  std::string metrics() { return call_raw(client, "GET", url("/metrics"), "").raw; }
  // /metrics once it contains `text` (the sender refreshes its gauges after the round
  // that recorded an attempt, so the API can show a state a moment before /metrics
  // does), or as it reads after 5 s.
  std::string metrics_with(const std::string& text) {
    std::string m;
    for (int i = 0; i < 100; ++i) {
      m = metrics();
      if (m.find(text) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return m;
  }

  std::unique_ptr<TestPki> pki;  // before the forge, which serves its certificate
  FakeForge forge;               // constructed before the fixture's body runs: its URL goes into the flags
  std::string sha = std::string(39, 'c') + "1";
};

}  // namespace kport::testing
