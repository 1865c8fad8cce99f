// Calibrated verdicts and flakes through the real runner API: a series without A/A
// history is insufficient data, noise within a series' band is not flagged, a change
// beyond it is, and a case that passes and fails on one harness is quarantined, listed
// and released after clean runs.
#include <gtest/gtest.h>

#include "hook_fixture.h"

namespace kport::testing {
namespace {

using boost::json::array;
using boost::json::object;

const std::string k_shape = "m=4096,n=4096,k=4096";

object build_ok(const std::string& variant) {
  return object{{"family", "gemm"}, {"variant", variant},       {"status", "ok"},          {"message", ""},
                {"registers", 96},  {"shared_mem_bytes", 1024}, {"spill_stores_bytes", 0}, {"spill_loads_bytes", 0}};
}

// A result as the GPU runner uploads it, naming the harness binary it ran.
object result(const std::string& variant, double median_us, const std::string& harness,
              const std::string& status = "passed", std::int64_t seed = 1) {
  object r{{"family", "gemm"},
           {"variant", variant},
           {"instance", "gemm." + variant + ".default"},
           {"dtype", "bf16"},
           {"shape", k_shape},
           {"toolkit", "13.0"},
           {"gpu_model", "NVIDIA H200"},
           {"gpu_uuid", "GPU-1"},
           {"arch", "9.0"},
           {"driver", "580.1"},
           {"status", status},
           {"max_rel_err", status == "passed" ? 1e-3 : 0.5},
           {"tolerance", 1e-2},
           {"seed", seed},
           {"env", object{{"reproduce", object{{"harness_sha256", harness}, {"target", "sm_90a"}}}}}};
  if (status == "passed") {
    r["median_us"] = median_us;
    r["stddev_us"] = 0.2;
    r["samples"] = 400;
  }
  return r;
}

std::string harness(char c) { return std::string(64, c); }

// A re-measure's result as the runner uploads it when it timed the baseline's harness
// beside this one, four rounds each, A/B/A/B (env.timing.paired).
object paired(object r, double baseline_us, const std::string& baseline_harness) {
  const double us = r.at("median_us").to_number<double>();
  array rounds, base_rounds;
  for (int i = 0; i < 4; ++i) {
    rounds.push_back(object{{"median_ms", us / 1000}, {"stddev_ms", 0.0002}, {"samples", 100}});
    base_rounds.push_back(baseline_us / 1000);
  }
  r["env"].as_object()["timing"] = object{{"median_ms", us / 1000},
                                          {"rounds", std::move(rounds)},
                                          {"paired", object{{"harness_sha256", baseline_harness},
                                                            {"order", "interleaved"},
                                                            {"rounds", 4},
                                                            {"median_ms", baseline_us / 1000},
                                                            {"stddev_ms", 0.0002},
                                                            {"samples", 400},
                                                            {"unstable", false},
                                                            {"round_medians_ms", std::move(base_rounds)}}}};
  return r;
}

class NoiseVerdicts : public HookTest {
 protected:
  void SetUp() override {
    HookTest::SetUp();
    add_target("sm_90a", "9.0");
    ASSERT_EQ(
        post("/api/v1/repositories", object{{"name", "org/kernels"}, {"url", "/srv/git/kernels.git"}}, k_admin).status,
        201);
    builder = register_runner("builder", "build");
    gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  }

  void push(const std::string& sha, const std::string& parent) {
    auto r = github(
        push_body("org/kernels", "refs/heads/main", parent.empty() ? std::string(40, '0') : parent, sha, false, parent),
        "delivery-" + sha);
    ASSERT_EQ(r.status, 201) << r.raw;
  }
  // Another pipeline of a commit already pushed: the same build again, so the same harness.
  void rerun(const std::string& sha) {
    auto r = post("/api/v1/pipelines",
                  object{{"commit", sha},
                         {"repo", "org/kernels"},
                         {"ref", "refs/heads/main"},
                         {"reason", "manual"},
                         {"targets", array{"sm_90a"}}},
                  k_admin);
    ASSERT_EQ(r.status, 201) << r.raw;
  }
  void run_job(const std::string& token, const std::string& key, array records, const std::string& expect_commit) {
    auto job = claim(token);
    ASSERT_TRUE(job.is_object()) << "nothing to claim";
    EXPECT_EQ(job.at("commit").as_string(), expect_commit);
    const std::string base = "/api/v1/jobs/" + std::to_string(job.at("id").to_number<std::int64_t>());
    const std::int64_t attempt = job.at("attempt").to_number<std::int64_t>();
    auto up = post(base + (key == "records" ? "/builds" : "/results"),
                   object{{"attempt", attempt}, {key, std::move(records)}}, token);
    EXPECT_EQ(up.status, 200) << up.raw;
    auto done = post(base + "/complete", object{{"attempt", attempt}, {"status", "succeeded"}}, token);
    EXPECT_EQ(done.status, 200) << done.raw;
  }
  // Builds and checks the commit's next pipeline, uploading `results`.
  void validate(const std::string& sha, array results) {
    run_job(builder, "records", array{build_ok("mma")}, sha);
    run_job(gpu, "results", std::move(results), sha);
  }
  object verdict(const std::string& sha) {
    auto r = get("/api/v1/commits/" + sha + "/verdict");
    EXPECT_EQ(r.status, 200) << r.raw;
    return r.body.is_object() ? r.body.as_object() : object{};
  }

  std::string builder, gpu;
};

TEST_F(NoiseVerdicts, InsufficientDataThenCalibratedNoiseAndARealRegression) {
  const std::string a = commit_sha(1), b = commit_sha(2), c = commit_sha(3), d = commit_sha(4);
  push(a, "");
  validate(a, array{result("mma", 100.0, harness('a'))});
  EXPECT_EQ(verdict(a).at("status").as_string(), "pass") << "nothing to compare with";

  // B: +5 % on a series with no A/A history: measured again, then neither pass nor fail.
  push(b, a);
  validate(b, array{result("mma", 105.0, harness('b'))});
  EXPECT_EQ(verdict(b).at("status").as_string(), "pending");
  run_job(gpu, "results", array{result("mma", 105.3, harness('b'))}, b);  // the re-measure
  auto vb = verdict(b);
  EXPECT_EQ(vb.at("status").as_string(), "insufficient_data") << vb;
  EXPECT_TRUE(vb.at("reasons").as_array().empty()) << vb;
  ASSERT_EQ(vb.at("insufficient_data").as_array().size(), 1u) << vb;
  const auto& unjudged = vb.at("insufficient_data").as_array()[0].as_object();
  EXPECT_EQ(unjudged.at("instance").as_string(), "gemm.mma.default");
  EXPECT_EQ(unjudged.at("degrees").to_number<std::int64_t>(), 1) << "its re-measure is its first A/A pair";
  EXPECT_EQ(unjudged.at("needed").to_number<std::int64_t>(), 2);
  {
    std::string out;
    const int rc = run_to_exit(KPORT_CLI_BIN, {"--server", url(""), "--token", k_admin, "status", b}, out);
    EXPECT_EQ(rc, 5) << "kport status: insufficient data is neither pass (0) nor fail (1)\n" << out;
    EXPECT_NE(out.find("insufficient data: gemm.mma.default bf16 " + k_shape), std::string::npos) << out;
  }

  // Repeated pipelines of A give the series its history: the same harness, four more times.
  for (double m : {100.3, 99.8, 100.2, 99.9}) {
    rerun(a);
    validate(a, array{result("mma", m, harness('a'))});
  }
  auto series = get("/api/v1/series?gpu=NVIDIA%20H200&instance=gemm.mma.default&dtype=bf16&shape=" + k_shape);
  ASSERT_EQ(series.status, 200) << series.raw;
  ASSERT_EQ(series.body.at("items").as_array().size(), 1u) << series.raw;
  const auto& s = series.body.at("items").as_array()[0].as_object();
  EXPECT_EQ(s.at("status").as_string(), "calibrated") << series.raw;
  EXPECT_EQ(s.at("degrees").to_number<std::int64_t>(), 5);
  const double mde = s.at("mde").to_number<double>();
  EXPECT_GT(mde, 0.005);
  EXPECT_LT(mde, 0.03) << "a quiet series detects less than the old fixed 3 %";
  EXPECT_EQ(get("/api/v1/series").status, 400) << "a GPU model is required";
  EXPECT_EQ(get("/api/v1/series").body.at("error").at("code").as_string(), "invalid_argument");

  // C: +0.6 %, inside the band: noise, no re-measure.
  push(c, a);
  validate(c, array{result("mma", 100.6, harness('c'))});
  auto vc = verdict(c);
  EXPECT_EQ(vc.at("status").as_string(), "pass") << vc;
  EXPECT_TRUE(claim(gpu).is_null()) << "noise asks for no re-measure";

  // D: +2.5 %, below the old 3 % rule but beyond this series' band: suspected, and flagged
  // once its re-measure timed A's harness beside it and still saw it.
  push(d, a);
  validate(d, array{result("mma", 102.5, harness('d'))});
  EXPECT_EQ(verdict(d).at("status").as_string(), "pending");
  run_job(gpu, "results", array{paired(result("mma", 102.6, harness('d')), 100.1, harness('a'))}, d);
  auto vd = verdict(d);
  EXPECT_EQ(vd.at("status").as_string(), "fail") << vd;
  const std::string text = boost::json::serialize(vd.at("reasons"));
  EXPECT_NE(text.find("perf_regression"), std::string::npos) << text;
  EXPECT_NE(text.find("confirmed against the baseline's harness in interleaved rounds"), std::string::npos) << text;
  EXPECT_NE(text.find(", beyond the band +"), std::string::npos) << text;
  EXPECT_NE(vd.at("rule").as_string().find("A/A"), std::string::npos);

  // E: +2.5 % again, but its re-measure could not time A's harness beside it: figures from
  // two machines cannot settle it, so it is insufficient data, neither pass nor fail.
  const std::string e = commit_sha(5);
  push(e, a);
  validate(e, array{result("mma", 102.5, harness('e'))});
  run_job(gpu, "results", array{result("mma", 102.6, harness('e'))}, e);
  auto ve = verdict(e);
  EXPECT_EQ(ve.at("status").as_string(), "insufficient_data") << ve;
  EXPECT_TRUE(ve.at("reasons").as_array().empty()) << ve;
  EXPECT_NE(boost::json::serialize(ve.at("notes")).find("not judged"), std::string::npos) << ve;
}

TEST_F(NoiseVerdicts, AFlakyCaseIsListedNotBlamedAndReleasedAfterCleanRuns) {
  const std::string a = commit_sha(1), e = commit_sha(5);
  push(a, "");
  validate(a, array{result("mma", 100.0, harness('a'))});
  // The same harness fails the case once, with seed 1234, and passes again: flaky, not broken.
  rerun(a);
  validate(a, array{result("mma", 0, harness('a'), "failed", 1234)});
  rerun(a);
  validate(a, array{result("mma", 100.1, harness('a'))});
  auto flakes = get("/api/v1/flakes");
  ASSERT_EQ(flakes.status, 200) << flakes.raw;
  ASSERT_EQ(flakes.body.at("items").as_array().size(), 1u) << flakes.raw;
  const auto& f = flakes.body.at("items").as_array()[0].as_object();
  EXPECT_EQ(f.at("state").as_string(), "flaky");
  EXPECT_EQ(f.at("instance").as_string(), "gemm.mma.default");
  EXPECT_FALSE(f.at("since").is_null());
  EXPECT_EQ(f.at("failures").to_number<std::int64_t>(), 1);
  ASSERT_EQ(f.at("failed").as_array().size(), 1u);
  EXPECT_EQ(f.at("failed").as_array()[0].at("seed").to_number<std::int64_t>(), 1234) << "replayable";
  EXPECT_EQ(flakes.body.at("release_after").to_number<std::int64_t>(), 5);

  // E fails the flaky case: listed under flaky, not a numerics failure of E.
  push(e, a);
  validate(e, array{result("mma", 0, harness('e'), "failed", 99)});
  auto ve = verdict(e);
  EXPECT_EQ(boost::json::serialize(ve.at("reasons")).find("numerics_failure"), std::string::npos) << ve;
  ASSERT_EQ(ve.at("flaky").as_array().size(), 1u) << ve;
  EXPECT_EQ(ve.at("flaky").as_array()[0].at("seed").to_number<std::int64_t>(), 99);

  // Five clean runs in a row release it.
  for (int i = 0; i < 5; ++i) {
    rerun(e);
    validate(e, array{result("mma", 100.0 + 0.1 * i, harness('e'))});
  }
  EXPECT_TRUE(get("/api/v1/flakes").body.at("items").as_array().empty());
  auto released = get("/api/v1/flakes?state=released");
  ASSERT_EQ(released.body.at("items").as_array().size(), 1u) << released.raw;
  EXPECT_EQ(released.body.at("items").as_array()[0].at("state").as_string(), "released");
  EXPECT_EQ(get("/api/v1/flakes?state=sometimes").status, 400);
}

}  // namespace
}  // namespace kport::testing
