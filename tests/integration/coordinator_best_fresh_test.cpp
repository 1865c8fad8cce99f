// /api/v1/best answered from the coordinator's in-memory evidence is never older than
// the last acknowledged upload: each upload is followed at once by a question about the
// shape it measured, asked after the same question had been answered (and its key's
// evidence held in memory) without it.
#include "coordinator_fixture.h"

namespace kport::testing {
namespace json = boost::json;

class BestFreshTest : public CoordinatorTest {};

TEST_F(BestFreshTest, AnUploadIsAnsweredByTheVeryNextQuestion) {
  add_target();
  auto builder = register_runner("builder-1", "build");
  auto gpu = register_runner("gpu-1", "gpu");
  start_pipeline(commit_sha(1));
  auto build = claim(builder);
  ASSERT_TRUE(build.is_object());
  const auto bid = std::to_string(build.at("id").as_int64());
  json::array records{
      json::object{{"target", "sm_90a"}, {"family", "gemm"}, {"variant", "wgmma_tma"}, {"status", "ok"}}};
  ASSERT_EQ(post("/api/v1/jobs/" + bid + "/builds", json::object{{"attempt", 1}, {"records", records}}, builder).status,
            200);
  ASSERT_EQ(
      post("/api/v1/jobs/" + bid + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, builder).status,
      200);
  auto check = claim(gpu);
  ASSERT_TRUE(check.is_object());
  const auto cid = std::to_string(check.at("id").as_int64());

  auto upload = [&](const std::string& shape, double median_us) {
    json::object r{
        {"target", "sm_90a"},  {"family", "gemm"},       {"variant", "wgmma_tma"}, {"instance", "gemm.wgmma_tma.a"},
        {"dtype", "bf16"},     {"shape", shape},         {"toolkit", "13.0"},      {"gpu_model", "NVIDIA H200"},
        {"gpu_uuid", "GPU-1"}, {"arch", "9.0"},          {"driver", "580.1"},      {"status", "passed"},
        {"seed", 7},           {"median_us", median_us}, {"stddev_us", 0.1},       {"samples", 100}};
    auto up = post("/api/v1/jobs/" + cid + "/results", json::object{{"attempt", 1}, {"results", json::array{r}}}, gpu);
    ASSERT_EQ(up.status, 200) << up.raw;
  };
  auto best = [&](const std::string& shape) {
    return get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=" + shape);
  };

  upload("m=4096,n=4096,k=4096", 100);
  for (int i = 1; i <= 25; ++i) {
    const std::string shape = "m=4096,n=4096,k=" + std::to_string(4096 + 128 * i);
    auto before = best(shape);
    ASSERT_EQ(before.status, 200) << before.raw;
    ASSERT_FALSE(before.body.at("exact_shape").as_bool()) << "not measured yet: " << before.raw;
    upload(shape, 100 + i);
    auto after = best(shape);
    ASSERT_EQ(after.status, 200) << after.raw;
    ASSERT_TRUE(after.body.at("exact_shape").as_bool()) << "upload " << i << " not seen at once: " << after.raw;
    ASSERT_DOUBLE_EQ(after.body.at("ranking").as_array()[0].at("evidence").at("median_us").as_double(), 100 + i);
    // A reader with a token is answered on the worker pool from the same evidence.
    auto with_token =
        call(client, "GET", url("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=" + shape), nullptr, k_admin);
    ASSERT_EQ(with_token.raw, after.raw);
  }
  // The index says what it holds.
  auto metrics = call(client, "GET", url("/metrics"), nullptr, "");
  EXPECT_NE(metrics.raw.find("kport_best_index_keys 1\n"), std::string::npos) << metrics.raw.substr(0, 2000);
  EXPECT_NE(metrics.raw.find("kport_best_index_rows 26\n"), std::string::npos);
}

}  // namespace kport::testing
