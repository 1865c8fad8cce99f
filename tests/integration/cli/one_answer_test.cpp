// One rule, one answer: for the same seeded database, the verdict of a commit is the same
// through GET /api/v1/commits/{sha}/verdict, the real `kport status` binary and the
// dashboard's commit page, and a target's bring-up stages are the same through
// /api/v1/targets/{t}/bringup, the real `kport bringup` binary, the dashboard's target
// page and the overview's counts. Seeded through the API the way runners fill it.
#include <map>

#include "coordinator_fixture.h"
#include "kport/cli/cli.h"

namespace kport::testing {
namespace json = boost::json;

namespace {

const std::string k_parent(40, 'c');
const std::string k_child = std::string(39, 'd') + "1";

// The kernels tree's variants with the features they declare.
const std::vector<std::pair<std::string, json::array>> k_variants = {
    {"simt", {"simt"}},
    {"mma_sync", {"mma_sync", "cp_async"}},
    {"wgmma_tma", {"wgmma", "tma", "mbarrier", "setmaxnreg"}},
    {"tcgen05", {"tcgen05", "tmem", "tma", "mbarrier"}},
};

json::object features_of(std::initializer_list<const char*> names) {
  json::object o{{"max_dynamic_smem_per_block", 232448}};
  for (const char* n : names) o[n] = true;
  return o;
}

json::object record(const std::string& variant, const std::string& status, std::int64_t spills = 0) {
  json::object r{{"target", "sm_90a"},
                 {"family", "gemm"},
                 {"variant", variant},
                 {"status", status},
                 {"message", status == "compile_error" ? "error: identifier \"__cvta_generic_to_shared\" is undefined"
                             : status == "not_applicable" ? "missing features: tcgen05, tmem"
                                                          : ""}};
  if (status == "ok") {
    r["registers"] = 128;
    r["spill_stores_bytes"] = spills;
    r["spill_loads_bytes"] = 0;
    r["shared_mem_bytes"] = 65536;
  }
  return r;
}

json::object result(const std::string& variant, const std::string& status, double median_us, bool unstable = false) {
  json::object r{{"target", "sm_90a"},
                 {"family", "gemm"},
                 {"variant", variant},
                 {"instance", "gemm." + variant + ".a"},
                 {"dtype", "bf16"},
                 {"shape", "m=1024,n=1024,k=1024"},
                 {"toolkit", "13.0"},
                 {"gpu_model", "NVIDIA H200"},
                 {"gpu_uuid", "GPU-1"},
                 {"arch", "9.0"},
                 {"driver", "580.1"},
                 {"status", status},
                 {"normwise_rel_err", status == "passed" ? 1e-3 : 0.4},
                 {"tolerance", 1e-2},
                 {"nan_inf_count", 0},
                 {"seed", 7},
                 {"unstable", unstable}};
  if (status != "passed") r["message"] = "max_rel_err 0.4 > tolerance 0.01";
  if (status == "passed") {
    r["median_us"] = median_us;
    r["stddev_us"] = median_us * 0.002;
    r["samples"] = 100;
    r["baseline"] = "cublas";
    r["baseline_median_us"] = 200.0;
    r["ratio"] = 200.0 / median_us;
  }
  return r;
}

class OneAnswerTest : public CoordinatorTest {
 protected:
  void SetUp() override {
    CoordinatorTest::SetUp();
    auto t90 =
        put("/api/v1/targets/sm_90a",
            json::object{
                {"arch", "9.0"},
                {"toolkit", "13.0"},
                {"features", features_of({"simt", "mma_sync", "cp_async", "wgmma", "tma", "mbarrier", "setmaxnreg"})}},
            k_admin);
    ASSERT_TRUE(t90.status == 201 || t90.status == 200) << t90.raw;
    auto t100 = put("/api/v1/targets/sm_100a",
                    json::object{{"arch", "10.0"},
                                 {"toolkit", "13.0"},
                                 {"features", features_of({"simt", "mma_sync", "cp_async", "tcgen05", "tmem", "tma",
                                                           "mbarrier", "setmaxnreg"})}},
                    k_admin);
    ASSERT_TRUE(t100.status == 201 || t100.status == 200) << t100.raw;
    // As an sm_90a build runner publishes its harness: instances of what it built, and every
    // variant with its features, tcgen05 too (listed as not applicable, no instances).
    json::array instances, variants;
    for (const auto& [variant, features] : k_variants) {
      variants.push_back(json::object{{"family", "gemm"}, {"variant", variant}, {"features", features}});
      if (variant != "tcgen05")
        instances.push_back(json::object{
            {"name", "gemm." + variant + ".a"}, {"family", "gemm"}, {"variant", variant}, {"features", features}});
    }
    auto published = put("/api/v1/kernels", json::object{{"instances", instances}, {"variants", variants}}, k_admin);
    ASSERT_EQ(published.status, 200) << published.raw;
    EXPECT_EQ(published.body.at("variants").as_int64(), 4);
    auto bad =
        put("/api/v1/kernels",
            json::object{
                {"variants", json::array{json::object{{"family", "gemm"}, {"variant", "x"}, {"features", "tcgen05"}}}}},
            k_admin);
    EXPECT_EQ(bad.status, 400) << bad.raw;
    EXPECT_NE(bad.raw.find("variants[0].features must be an array"), std::string::npos) << bad.raw;
    EXPECT_EQ(put("/api/v1/kernels", json::object{}, k_admin).status, 400);
    ASSERT_EQ(
        post("/api/v1/repositories", json::object{{"name", "kernels"}, {"url", "/tmp/kernels.git"}}, k_admin).status,
        201);
    ASSERT_EQ(
        post("/api/v1/commits",
             json::object{
                 {"sha", k_parent}, {"repo", "kernels"}, {"message", "gemm variants"}, {"time_ms", 1764400000000}},
             k_admin)
            .status,
        201);
    ASSERT_EQ(post("/api/v1/commits",
                   json::object{{"sha", k_child},
                                {"repo", "kernels"},
                                {"parent", k_parent},
                                {"message", "retile"},
                                {"time_ms", 1764403600000}},
                   k_admin)
                  .status,
              201);
    m_builder = register_runner("builder-1", "build");
    m_gpu = register_runner("gpu-1", "gpu");
    // The parent: everything that applies builds and passes.
    run(k_parent,
        {record("simt", "ok"), record("mma_sync", "ok"), record("wgmma_tma", "ok"),
         record("tcgen05", "not_applicable")},
        {result("simt", "passed", 900), result("mma_sync", "passed", 300), result("wgmma_tma", "passed", 100)});
    // The child: simt no longer compiles (the build job still succeeds for the others),
    // mma_sync fails numerics, wgmma_tma is 40% slower on a figure whose rounds disagreed.
    run(k_child,
        {record("simt", "compile_error"), record("mma_sync", "ok"), record("wgmma_tma", "ok"),
         record("tcgen05", "not_applicable")},
        {result("mma_sync", "failed", 0), result("wgmma_tma", "passed", 140, true)});
  }

  // One push pipeline on sm_90a: the build job with its records, then its check job.
  void run(const std::string& sha, json::array records, json::array results) {
    auto p =
        post("/api/v1/pipelines",
             json::object{
                 {"commit", sha}, {"repo", "kernels"}, {"ref", "refs/heads/main"}, {"targets", json::array{"sm_90a"}}},
             k_admin);
    ASSERT_EQ(p.status, 201) << p.raw;
    auto build = claim(m_builder);
    ASSERT_TRUE(build.is_object());
    const std::string b = std::to_string(build.at("id").as_int64());
    for (auto& r : records) r.as_object()["commit"] = sha;
    ASSERT_EQ(
        post("/api/v1/jobs/" + b + "/builds", json::object{{"attempt", 1}, {"records", records}}, m_builder).status,
        200);
    ASSERT_EQ(post("/api/v1/jobs/" + b + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, m_builder)
                  .status,
              200);
    auto check = claim(m_gpu);
    ASSERT_TRUE(check.is_object());
    const std::string c = std::to_string(check.at("id").as_int64());
    for (auto& r : results) r.as_object()["commit"] = sha;
    ASSERT_EQ(post("/api/v1/jobs/" + c + "/results", json::object{{"attempt", 1}, {"results", results}}, m_gpu).status,
              200);
    ASSERT_EQ(post("/api/v1/jobs/" + c + "/complete", json::object{{"attempt", 1}}, m_gpu).status, 200);
  }

  // The real kport binary with --json; its exit code and parsed stdout.
  json::value cli(std::vector<std::string> args, int& rc) {
    std::vector<std::string> a = {"--server", url(""), "--token", k_admin};
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("--json");
    std::string out;
    rc = run_to_exit(KPORT_CLI_BIN, a, out);
    boost::system::error_code ec;
    auto v = json::parse(out, ec);
    EXPECT_FALSE(ec) << out;
    return ec ? json::value(nullptr) : v;
  }

  static std::map<std::string, std::string> stages(const json::value& answer) {
    std::map<std::string, std::string> out;
    for (const auto& v : answer.at("variants").as_array())
      out[std::string(v.at("family").as_string()) + "." + std::string(v.at("variant").as_string())] =
          v.at("stage").as_string();
    return out;
  }

  std::string m_builder, m_gpu;
};

TEST_F(OneAnswerTest, TheVerdictIsTheSameThroughTheApiTheCliAndTheCommitPage) {
  auto api = get("/api/v1/commits/" + k_child + "/verdict");
  ASSERT_EQ(api.status, 200) << api.raw;
  EXPECT_EQ(api.body.at("status").as_string(), "fail");
  EXPECT_EQ(api.body.at("baseline").as_string(), k_parent);
  std::map<std::string, std::string> kinds;  // variant -> reason kind
  for (const auto& r : api.body.at("reasons").as_array())
    kinds[std::string(r.at("variant").as_string())] = r.at("kind").as_string();
  EXPECT_EQ(kinds,
            (std::map<std::string, std::string>{{"gemm.simt", "build_failure"}, {"gemm.mma_sync", "numerics_failure"}}))
      << api.raw;
  ASSERT_EQ(api.body.at("notes").as_array().size(), 1u) << api.raw;
  EXPECT_NE(std::string(api.body.at("notes").as_array()[0].as_string()).find("unstable"), std::string::npos);

  int rc = -1;
  auto status = cli({"status", k_child}, rc);
  EXPECT_EQ(rc, cli::k_exit_failed);
  EXPECT_EQ(status, api.body) << "kport status prints the API's verdict";

  auto page = get("/api/v1/dashboard/commits/" + k_child);
  ASSERT_EQ(page.status, 200) << page.raw;
  EXPECT_EQ(page.body.at("verdict"), api.body) << "the commit page shows the same verdict";
  EXPECT_EQ(page.body.at("baseline").as_string(), k_parent) << "its diff is against the verdict's baseline";
  const auto& totals = page.body.at("totals").as_object();
  EXPECT_EQ(totals.at("new_failure").as_int64(), 1) << "the verdict's one numerics failure";
  EXPECT_EQ(totals.at("regressed").as_int64(), 0) << "an unstable figure is no regression on the page either";
  EXPECT_EQ(totals.at("unstable").as_int64(), 1);
  EXPECT_EQ(page.body.at("rule"), api.body.at("rule")) << "one policy";
}

TEST_F(OneAnswerTest, BringupStagesAreTheSameThroughTheApiTheCliTheTargetPageAndTheOverview) {
  auto overview = get("/api/v1/dashboard/overview");
  ASSERT_EQ(overview.status, 200) << overview.raw;
  std::map<std::string, json::value> overview_progress;
  for (const auto& t : overview.body.at("targets").as_array())
    overview_progress[std::string(t.at("name").as_string())] = t.at("progress");

  for (const std::string target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    auto api = get("/api/v1/targets/" + target + "/bringup");
    ASSERT_EQ(api.status, 200) << api.raw;
    int rc = -1;
    auto cli_answer = cli({"bringup", target}, rc);
    EXPECT_EQ(rc, 0);
    auto page = get("/api/v1/dashboard/targets/" + target);
    ASSERT_EQ(page.status, 200) << page.raw;
    EXPECT_EQ(stages(cli_answer), stages(api.body));
    EXPECT_EQ(stages(page.body), stages(api.body));
    EXPECT_EQ(cli_answer.at("progress"), api.body.at("progress"));
    EXPECT_EQ(page.body.at("progress"), api.body.at("progress"));
    EXPECT_EQ(overview_progress.at(target), api.body.at("progress"));
    EXPECT_EQ(page.body.at("commit"), api.body.at("commit"));
  }

  // sm_90a at its latest built commit: what the child did, not the best it ever did.
  auto s90 = stages(get("/api/v1/targets/sm_90a/bringup").body);
  EXPECT_EQ(s90.at("gemm.simt"), "build_failed");
  EXPECT_EQ(s90.at("gemm.mma_sync"), "numerics_failed") << "passed on the parent, fails now";
  EXPECT_EQ(s90.at("gemm.tcgen05"), "not_applicable");
  EXPECT_EQ(get("/api/v1/targets/sm_90a/bringup").body.at("commit").as_string(), k_child);
  // Asked for the parent, the same rule answers for the parent.
  auto then = stages(get("/api/v1/targets/sm_90a/bringup?commit=" + k_parent).body);
  EXPECT_EQ(then.at("gemm.mma_sync") == "measured" || then.at("gemm.mma_sync") == "selected_best", true)
      << then.at("gemm.mma_sync");
  EXPECT_EQ(get("/api/v1/targets/sm_90a/bringup?commit=0123456789abcdef").status, 404);

  // sm_100a was never built: the planner's view from its catalog features.
  auto b100 = get("/api/v1/targets/sm_100a/bringup").body;
  EXPECT_TRUE(b100.at("commit").is_null());
  auto s100 = stages(b100);
  EXPECT_EQ(s100.at("gemm.tcgen05"), "pending") << "applicable: sm_100a has tcgen05 and tmem";
  EXPECT_EQ(s100.at("gemm.wgmma_tma"), "not_applicable");
  EXPECT_EQ(s100.at("gemm.simt"), "pending");
  EXPECT_EQ(b100.at("progress").at("applicable").as_int64(), 3);
  EXPECT_EQ(b100.at("progress").at("builds").as_int64(), 0);
}

}  // namespace
}  // namespace kport::testing
