// The holder rule against a real coordinator: only the runner holding a job's live
// lease writes into it (build records, results, log, artifacts, complete), for its current attempt,
// and a job's results carry the job's commit, target and GPU. Each test is named after a
// defect of issue 14.
#include "coordinator_fixture.h"
#include "kport/common/crypto.h"

namespace kport::testing {
namespace json = boost::json;

namespace {

json::object check_result(const std::string& instance) {
  return json::object{{"family", "gemm"},
                      {"variant", "wgmma_tma"},
                      {"instance", instance},
                      {"dtype", "bf16"},
                      {"shape", "m=4096,n=4096,k=4096"},
                      {"toolkit", "13.0"},
                      {"gpu_uuid", "GPU-1"},
                      {"driver", "580.1"},
                      {"status", "passed"},
                      {"normwise_rel_err", 1e-3},
                      {"tolerance", 1e-2},
                      {"nan_inf_count", 0},
                      {"seed", 7},
                      {"median_us", 210.0},
                      {"stddev_us", 0.5},
                      {"samples", 100},
                      {"baseline", "cublas"},
                      {"baseline_median_us", 200.0},
                      {"ratio", 0.95}};
}

std::string error_code(const JsonReply& r) {
  if (!r.body.is_object() || !r.body.as_object().contains("error")) return "";
  return std::string(r.body.at("error").at("code").as_string());
}

std::string error_message(const JsonReply& r) {
  if (!r.body.is_object() || !r.body.as_object().contains("error")) return "";
  return std::string(r.body.at("error").at("message").as_string());
}

}  // namespace

class LeaseTest : public CoordinatorTest {
 protected:
  // A build job claimed by runner A; B is a second build runner for the same targets.
  void claim_build() {
    add_target();
    m_a = register_runner("a", "build");
    m_b = register_runner("b", "build");
    start_pipeline(commit_sha());
    auto job = claim(m_a);
    ASSERT_TRUE(job.is_object());
    m_job = job.at("id").as_int64();
    m_attempt = job.at("attempt").as_int64();
  }

  // Runs the build through runner A and has GPU runner G claim the spawned check.
  void claim_check() {
    claim_build();
    ASSERT_EQ(post(job_path("/complete"), json::object{{"attempt", m_attempt}}, m_a).status, 200);
    m_gpu = register_runner("g", "gpu");
    auto check = claim(m_gpu);
    ASSERT_TRUE(check.is_object());
    m_job = check.at("id").as_int64();
    m_attempt = check.at("attempt").as_int64();
  }

  std::string job_path(const std::string& tail) const { return "/api/v1/jobs/" + std::to_string(m_job) + tail; }

  JsonReply upload_results(json::array results, const std::string& token) {
    return post(job_path("/results"), json::object{{"attempt", m_attempt}, {"results", std::move(results)}}, token);
  }

  std::string m_a, m_b, m_gpu;
  std::int64_t m_job = 0, m_attempt = 0;
};

TEST_F(LeaseTest, RunnerBsForgedCompileErrorIntoRunnerAsJobIsForbidden) {
  claim_build();
  json::object forged{
      {"family", "gemm"}, {"variant", "wgmma_tma"}, {"status", "compile_error"}, {"message", "error: forged"}};
  auto r = post(job_path("/builds"), json::object{{"attempt", m_attempt}, {"records", json::array{forged}}}, m_b);
  EXPECT_EQ(r.status, 403) << r.raw;
  EXPECT_EQ(error_code(r), "forbidden");
  EXPECT_NE(error_message(r).find("job " + std::to_string(m_job)), std::string::npos) << r.raw;
  EXPECT_NE(error_message(r).find("only the runner holding a job's live lease"), std::string::npos) << r.raw;
  auto listed = get("/api/v1/builds?job=" + std::to_string(m_job));
  ASSERT_EQ(listed.status, 200) << listed.raw;
  EXPECT_TRUE(listed.body.at("items").as_array().empty()) << "the dashboard must not show B's record";

  // B can neither log into, fail nor complete A's job; A's own record goes in.
  EXPECT_EQ(post(job_path("/log"), json::object{{"attempt", m_attempt}, {"text", "forged\n"}}, m_b).status, 403);
  auto fail =
      post(job_path("/complete"), json::object{{"attempt", m_attempt}, {"status", "failed"}, {"reason", "x"}}, m_b);
  EXPECT_EQ(fail.status, 403) << fail.raw;
  EXPECT_EQ(post(job_path("/complete"), json::object{{"attempt", m_attempt}}, m_b).status, 403);
  json::object own{{"family", "gemm"}, {"variant", "wgmma_tma"}, {"status", "ok"}};
  auto mine = post(job_path("/builds"), json::object{{"attempt", m_attempt}, {"records", json::array{own}}}, m_a);
  ASSERT_EQ(mine.status, 200) << mine.raw;
  listed = get("/api/v1/builds?job=" + std::to_string(m_job));
  ASSERT_EQ(listed.body.at("items").as_array().size(), 1u);
  EXPECT_EQ(listed.body.at("items").at(0).at("status").as_string(), "ok");
  EXPECT_EQ(listed.body.at("items").at(0).at("commit").as_string(), commit_sha()) << "taken from the job";
}

TEST_F(LeaseTest, LogForAttempt77IsAConflict) {
  claim_build();
  auto r = post(job_path("/log"), json::object{{"attempt", 77}, {"text", "from nowhere\n"}}, m_a);
  EXPECT_EQ(r.status, 409) << r.raw;
  EXPECT_EQ(error_code(r), "conflict");
  EXPECT_NE(error_message(r).find("has no attempt 77"), std::string::npos) << r.raw;
  EXPECT_EQ(post(job_path("/log"), json::object{{"attempt", m_attempt}, {"text", "nvcc ok\n"}}, m_a).status, 200);
  auto log = get(job_path("/log"));
  ASSERT_EQ(log.status, 200) << log.raw;
  EXPECT_EQ(log.raw.find("from nowhere"), std::string::npos) << log.raw;
  EXPECT_NE(log.raw.find("nvcc ok"), std::string::npos) << log.raw;
  auto unknown = post("/api/v1/jobs/424242/log", json::object{{"attempt", 1}, {"text", "x"}}, m_a);
  EXPECT_EQ(unknown.status, 404) << unknown.raw;
}

TEST_F(LeaseTest, ResultsForAnotherCommitOrTargetThanTheJobAreAConflictNamingTheField) {
  claim_check();
  const std::pair<const char*, json::value> lies[] = {{"commit", json::value(commit_sha(2))},
                                                      {"target", json::value("sm_100a")},
                                                      {"gpu_model", json::value("NVIDIA B200")}};
  for (const auto& [field, value] : lies) {
    auto r = check_result("gemm.wgmma_tma.128x256");
    r[field] = value;
    auto up = upload_results(json::array{r}, m_gpu);
    EXPECT_EQ(up.status, 409) << field << ": " << up.raw;
    EXPECT_NE(error_message(up).find(std::string("names ") + field + " '"), std::string::npos) << up.raw;
  }
  auto none = get("/api/v1/results?commit=" + commit_sha(2));
  EXPECT_TRUE(none.body.at("items").as_array().empty()) << none.raw;
  auto best = get("/api/v1/best?gpu=NVIDIA%20B200&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096");
  EXPECT_NE(best.status == 200 ? std::string(best.body.at("kind").as_string()) : "", "measured") << best.raw;

  // Left out, they come from the job and the runner's registration.
  auto stored = upload_results(json::array{check_result("gemm.wgmma_tma.128x256")}, m_gpu);
  ASSERT_EQ(stored.status, 200) << stored.raw;
  auto r = get("/api/v1/results/" + std::to_string(stored.body.at("ids").at(0).as_int64()));
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body.at("commit").as_string(), commit_sha());
  EXPECT_EQ(r.body.at("target").as_string(), "sm_90a");
  EXPECT_EQ(r.body.at("gpu_model").as_string(), "NVIDIA H200");
  EXPECT_EQ(r.body.at("arch").as_string(), "9.0");
  // Another runner cannot post into the check, even with the job's own values.
  EXPECT_EQ(upload_results(json::array{check_result("gemm.simt.64x64")}, m_b).status, 403);
}

TEST_F(LeaseTest, ResultsAfterCompleteAreAConflict) {
  claim_check();
  auto first = upload_results(json::array{check_result("gemm.wgmma_tma.128x256")}, m_gpu);
  ASSERT_EQ(first.status, 200) << first.raw;
  ASSERT_EQ(post(job_path("/complete"), json::object{{"attempt", m_attempt}}, m_gpu).status, 200);
  auto late = upload_results(json::array{check_result("gemm.mma_sync.128x128")}, m_gpu);
  EXPECT_EQ(late.status, 409) << late.raw;
  EXPECT_NE(error_message(late).find("ended (succeeded)"), std::string::npos) << late.raw;
  auto replay = upload_results(json::array{check_result("gemm.wgmma_tma.128x256")}, m_gpu);
  EXPECT_EQ(replay.status, 409) << "a completed attempt takes nothing, not even a replay: " << replay.raw;
  EXPECT_EQ(post(job_path("/log"), json::object{{"attempt", m_attempt}, {"text", "late\n"}}, m_gpu).status, 409);
  auto listed = get("/api/v1/results?job=" + std::to_string(m_job));
  EXPECT_EQ(listed.body.at("items").as_array().size(), 1u) << listed.raw;
  // Completing again is still answered as the duplicate it is.
  auto again = post(job_path("/complete"), json::object{{"attempt", m_attempt}}, m_gpu);
  EXPECT_EQ(again.status, 200) << again.raw;
  EXPECT_TRUE(again.body.at("duplicate").as_bool());
}

TEST_F(LeaseTest, TheAdminTokenWritesIntoNoJob) {
  claim_build();
  json::object rec{{"family", "gemm"}, {"variant", "wgmma_tma"}, {"status", "ok"}};
  auto builds = post(job_path("/builds"), json::object{{"attempt", m_attempt}, {"records", json::array{rec}}}, k_admin);
  EXPECT_EQ(builds.status, 403) << builds.raw;
  EXPECT_NE(error_message(builds).find("runner token"), std::string::npos) << builds.raw;
  EXPECT_EQ(post(job_path("/log"), json::object{{"attempt", m_attempt}, {"text", "x"}}, k_admin).status, 403);
  EXPECT_EQ(post(job_path("/complete"), json::object{{"attempt", m_attempt}}, k_admin).status, 403);
  // What the admin token may do to a job: cancel it.
  EXPECT_EQ(call(client, "POST", url(job_path("/cancel")), nullptr, k_admin).status, 200);
}

// Issue 14: artifacts were stored for any runner token, with no job at all; a runner
// without work could fill the artifact store, or plant a harness under another
// runner's build.
TEST_F(LeaseTest, ArtifactUploadWithoutALiveLeaseIsRefused) {
  claim_build();
  const std::string data = "a harness built by runner a";
  const std::string sha = crypto::sha256_hex(data);
  auto put = [&](const std::string& query, const std::string& token) {
    return call_raw(client, "PUT", url("/api/v1/artifacts/" + sha + "?name=kport-harness-sm_90a&kind=harness" + query),
                    data, token, "application/octet-stream");
  };
  auto as_json = [](const JsonReply& r) { return r.body; };
  const std::string lease = "&job=" + std::to_string(m_job) + "&attempt=" + std::to_string(m_attempt);

  // No job named: a runner token alone uploads nothing.
  auto bare = put("", m_b);
  EXPECT_EQ(bare.status, 403) << bare.raw;
  EXPECT_EQ(as_json(bare).at("error").at("code").as_string(), "forbidden") << bare.raw;
  EXPECT_NE(bare.raw.find("?job=ID&attempt=N"), std::string::npos) << bare.raw;
  // Another runner's job: forbidden, by the holder rule's own words.
  auto other = put(lease, m_b);
  EXPECT_EQ(other.status, 403) << other.raw;
  EXPECT_NE(other.raw.find("only the runner holding a job's live lease"), std::string::npos) << other.raw;
  // The holder, for a stale or unknown attempt: a conflict; an unknown job: 404.
  auto stale = put("&job=" + std::to_string(m_job) + "&attempt=" + std::to_string(m_attempt + 1), m_a);
  EXPECT_EQ(stale.status, 409) << stale.raw;
  EXPECT_EQ(as_json(stale).at("error").at("code").as_string(), "conflict") << stale.raw;
  EXPECT_EQ(put("&job=999999&attempt=1", m_a).status, 404);
  EXPECT_EQ(put("&job=x&attempt=1", m_a).status, 400);
  EXPECT_EQ(get("/api/v1/artifacts/" + sha + "?meta=1").status, 404) << "a refused upload stores nothing";

  // The holder, for its attempt: stored.
  auto ok = put(lease, m_a);
  ASSERT_EQ(ok.status, 201) << ok.raw;
  EXPECT_EQ(get("/api/v1/artifacts/" + sha + "?meta=1").status, 200);

  // Once the attempt completed, no more uploads into it.
  ASSERT_EQ(post(job_path("/complete"), json::object{{"attempt", m_attempt}}, m_a).status, 200);
  const std::string late_data = "uploaded after the job completed";
  auto late = call_raw(client, "PUT",
                       url("/api/v1/artifacts/" + crypto::sha256_hex(late_data) + "?name=late&kind=harness" + lease),
                       late_data, m_a, "application/octet-stream");
  EXPECT_EQ(late.status, 409) << late.raw;
  EXPECT_NE(late.raw.find("ended (succeeded)"), std::string::npos) << late.raw;
  EXPECT_EQ(get("/api/v1/artifacts/" + crypto::sha256_hex(late_data) + "?meta=1").status, 404);

  // The operator uploads without a job; naming one with the admin token is a mistake.
  auto admin = call_raw(client, "PUT", url("/api/v1/artifacts/" + crypto::sha256_hex(late_data) + "?name=late"),
                        late_data, k_admin, "application/octet-stream");
  EXPECT_EQ(admin.status, 201) << admin.raw;
  EXPECT_EQ(put(lease, k_admin).status, 400);
}

}  // namespace kport::testing
