// The daily-use commands of the kport CLI against a real coordinator. Commands run
// in-process (kport::cli::run) where stdout and stderr must be told apart, and as the
// real binary where the exit code of a whole process is the point.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "coordinator_fixture.h"
#include "kport/cli/cli.h"

namespace kport::testing {
namespace json = boost::json;

namespace {

json::object gemm_result(const std::string& variant, double median_us) {
  return json::object{{"target", "sm_90a"},
                      {"family", "gemm"},
                      {"variant", variant},
                      {"instance", "gemm." + variant + ".128x128"},
                      {"dtype", "bf16"},
                      {"shape", "m=1024,n=1024,k=1024"},
                      {"toolkit", "13.0"},
                      {"gpu_model", "NVIDIA H200"},
                      {"gpu_uuid", "GPU-1"},
                      {"arch", "9.0"},
                      {"driver", "580.1"},
                      {"status", "passed"},
                      {"normwise_rel_err", 1e-3},
                      {"tolerance", 1e-2},
                      {"nan_inf_count", 0},
                      {"seed", 7},
                      {"median_us", median_us},
                      {"stddev_us", median_us * 0.002},
                      {"samples", 100},
                      {"baseline", "cublas"},
                      {"baseline_median_us", 200.0},
                      {"ratio", 200.0 / median_us}};
}

class CliTest : public CoordinatorTest {
 protected:
  struct Run {
    int rc = -1;
    std::string out, err;
    json::value json() const {
      boost::system::error_code ec;
      auto v = json::parse(out, ec);
      return ec ? json::value(nullptr) : v;
    }
  };

  // kport --server URL --token ADMIN args..., in-process.
  Run kport(std::vector<std::string> args, bool admin = true) {
    std::vector<std::string> a = {"kport", "--server", url(""), "--poll-ms", "50"};
    if (admin) a.insert(a.end(), {"--token", k_admin});
    a.insert(a.end(), args.begin(), args.end());
    std::vector<const char*> argv;
    for (const auto& s : a) argv.push_back(s.c_str());
    std::ostringstream out, err;
    Run r;
    r.rc = cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  // The sm_90a build records of gemm's mma_sync and wgmma_tma variants, each with `extra`.
  static json::array gemm_records(const json::object& extra = {}) {
    json::array records;
    for (const char* v : {"mma_sync", "wgmma_tma"}) {
      json::object r{{"target", "sm_90a"}, {"family", "gemm"}, {"variant", v}, {"status", "ok"}};
      for (const auto& [k, x] : extra) r[k] = x;
      records.push_back(std::move(r));
    }
    return records;
  }

  // `kport trigger` of commit_sha(), then the build runner `builder` builds it: `records`
  // go up and the build job succeeds (its check job is queued).
  void trigger_and_build(const std::string& builder, const json::array& records) {
    ASSERT_EQ(kport({"trigger", commit_sha(), "--json"}).rc, 0);
    auto job = claim(builder);
    ASSERT_TRUE(job.is_object());
    auto id = std::to_string(job.at("id").as_int64());
    ASSERT_EQ(
        post("/api/v1/jobs/" + id + "/builds", json::object{{"attempt", 1}, {"records", records}}, builder).status,
        200);
    ASSERT_EQ(
        post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, builder).status,
        200);
  }

  // The GPU runner `gpu` claims the check job and uploads `results`; the job ends when `complete`.
  void check_with(const std::string& gpu, const json::array& results, bool complete = true) {
    auto check = claim(gpu);
    ASSERT_TRUE(check.is_object());
    auto cid = std::to_string(check.at("id").as_int64());
    ASSERT_EQ(post("/api/v1/jobs/" + cid + "/results", json::object{{"attempt", 1}, {"results", results}}, gpu).status,
              200);
    if (!complete) return;
    ASSERT_EQ(post("/api/v1/jobs/" + cid + "/complete", json::object{{"attempt", 1}}, gpu).status, 200);
  }

  // A repository with one recorded commit, and the target sm_90a.
  void seed() {
    add_target();
    auto repo = post("/api/v1/repositories", json::object{{"name", "kernels"}, {"url", "/tmp/kernels.git"}}, k_admin);
    ASSERT_EQ(repo.status, 201) << repo.raw;
    auto c =
        post("/api/v1/commits", json::object{{"sha", commit_sha()}, {"repo", "kernels"}, {"message", "gemm"}}, k_admin);
    ASSERT_EQ(c.status, 201) << c.raw;
  }
};

TEST_F(CliTest, TriggerOpensAPipelineAndSaysWhichJobs) {
  seed();
  auto r = kport({"trigger", commit_sha(), "--targets", "sm_90a", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto p = r.json();
  ASSERT_TRUE(p.is_object()) << r.out;
  ASSERT_EQ(p.at("jobs").as_array().size(), 1u);
  EXPECT_EQ(p.at("jobs").as_array()[0].at("target").as_string(), "sm_90a");
  EXPECT_EQ(p.at("repo").as_string(), "kernels");  // the only repository, picked without --repo

  auto table = kport({"trigger", commit_sha(), "--repo", "kernels"});  // every known target
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("pipeline "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("build"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("sm_90a"), std::string::npos) << table.out;
  EXPECT_EQ(get("/api/v1/pipelines").body.at("items").as_array().size(), 2u);
}

TEST_F(CliTest, BisectCancelStopsARunningBisectionAndSaysWhy) {
  // A real three-commit repository whose newest commit fails one case's numerics.
  const std::string src = (dir.path() / "src").string(), bare = (dir.path() / "bisect.git").string();
  auto sh = [&](const std::string& cmd) {
    const std::string out = (dir.path() / "git.out").string();
    const std::string full =
        "GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=Dev "
        "GIT_COMMITTER_EMAIL=dev@example.com sh -c '" +
        cmd + "' > " + out + " 2>&1";
    EXPECT_EQ(std::system(full.c_str()), 0) << cmd;
    std::ifstream in(out);
    std::string line;
    std::getline(in, line);
    return line;
  };
  sh("git init -q --bare " + bare + " && mkdir -p " + src + " && cd " + src + " && git init -q -b main");
  std::vector<std::string> c;
  for (int i = 0; i < 3; ++i)
    c.push_back(sh("cd " + src + " && echo " + std::to_string(i) + " > f && git add f && git commit -q -m c" +
                   std::to_string(i) + " && git rev-parse HEAD"));
  sh("cd " + src + " && git push -q " + bare + " main");
  add_target();
  ASSERT_EQ(post("/api/v1/repositories", json::object{{"name", "kernels"}, {"url", bare}}, k_admin).status, 201);
  for (int i = 0; i < 3; ++i) {
    json::object commit{{"sha", c[i]}, {"repo", "kernels"}};
    if (i > 0) commit["parent"] = c[i - 1];
    ASSERT_EQ(post("/api/v1/commits", commit, k_admin).status, 201);
  }
  const std::string builder = register_runner("builder", "build"), gpu = register_runner("h200", "gpu");
  ASSERT_EQ(
      post("/api/v1/pipelines",
           json::object{{"commit", c[2]}, {"repo", "kernels"}, {"reason", "manual"}, {"targets", {"sm_90a"}}}, k_admin)
          .status,
      201);
  auto build = claim(builder);
  ASSERT_TRUE(build.is_object());
  const std::string b = "/api/v1/jobs/" + std::to_string(build.at("id").to_number<std::int64_t>());
  json::object rec{{"family", "gemm"}, {"variant", "simt"}, {"status", "ok"}};
  ASSERT_EQ(post(b + "/builds", json::object{{"attempt", 1}, {"records", json::array{rec}}}, builder).status, 200);
  ASSERT_EQ(post(b + "/complete", json::object{{"attempt", 1}}, builder).status, 200);
  auto check = claim(gpu);
  ASSERT_TRUE(check.is_object());
  const std::string k = "/api/v1/jobs/" + std::to_string(check.at("id").to_number<std::int64_t>());
  json::object failed = gemm_result("simt", 100.0);
  failed["status"] = "failed";
  failed["normwise_rel_err"] = 0.5;
  ASSERT_EQ(post(k + "/results", json::object{{"attempt", 1}, {"results", json::array{failed}}}, gpu).status, 200);
  ASSERT_EQ(post(k + "/complete", json::object{{"attempt", 1}}, gpu).status, 200);

  auto started =
      kport({"bisect", "start", "--kind", "numerics_failure", "--target", "sm_90a", "--gpu", "NVIDIA H200", "--bad",
             c[2], "--good", c[0], "--case", "gemm.simt.128x128 bf16 m=1024,n=1024,k=1024", "--json"});
  ASSERT_EQ(started.rc, 0) << started.err;
  const std::string id = std::to_string(started.json().at("id").as_int64());
  ASSERT_EQ(started.json().at("state").as_string(), "running") << started.out;

  auto anonymous = kport({"bisect", "--cancel", id}, false);
  EXPECT_NE(anonymous.rc, 0);
  auto cancelled = kport({"bisect", "--cancel", id, "--reason", "the GPUs are needed elsewhere"});
  ASSERT_EQ(cancelled.rc, 0) << cancelled.err;
  EXPECT_NE(cancelled.out.find("cancelled; bisection " + id), std::string::npos) << cancelled.out;
  EXPECT_NE(cancelled.out.find("state: cancelled"), std::string::npos) << cancelled.out;
  EXPECT_NE(cancelled.out.find("the GPUs are needed elsewhere"), std::string::npos) << cancelled.out;
  EXPECT_EQ(claim(builder).is_null(), true) << "its open probes were cancelled";
  auto shown = kport({"bisect", id});
  EXPECT_EQ(shown.rc, cli::k_exit_failed) << "no answer came";
  EXPECT_NE(shown.out.find("cancelled by hand: the GPUs are needed elsewhere"), std::string::npos) << shown.out;
  auto listed = kport({"bisect", "--state", "cancelled"});
  ASSERT_EQ(listed.rc, 0) << listed.err;
  EXPECT_NE(listed.out.find("cancelled"), std::string::npos) << listed.out;
  auto again = kport({"bisect", "--cancel", id});
  EXPECT_NE(again.rc, 0) << again.err;
  EXPECT_NE(again.err.find("already ended"), std::string::npos) << again.err;
  auto missing = kport({"bisect", "--cancel", "999"});
  EXPECT_NE(missing.rc, 0);
  EXPECT_NE(missing.err.find("no bisection 999"), std::string::npos) << missing.err;
  EXPECT_EQ(kport({"bisect", "--cancel", id, "extra"}).rc, cli::k_exit_usage);
}

TEST_F(CliTest, TriggerRefusesBadInputWithAReason) {
  seed();
  auto bad = kport({"trigger", commit_sha(), "--targets", "sm_90a,hopper"});
  EXPECT_EQ(bad.rc, cli::k_exit_usage);
  EXPECT_NE(bad.err.find("'hopper' is not an nvcc target"), std::string::npos) << bad.err;
  auto unknown = kport({"trigger", commit_sha(), "--targets", "sm_99"});
  EXPECT_EQ(unknown.rc, cli::k_exit_usage);
  EXPECT_NE(unknown.err.find("sm_99"), std::string::npos) << unknown.err;
  auto none = kport({"trigger"});
  EXPECT_EQ(none.rc, cli::k_exit_usage);
  EXPECT_NE(none.err.find("name the commit"), std::string::npos) << none.err;
  auto anonymous = kport({"trigger", commit_sha()}, false);
  EXPECT_EQ(anonymous.rc, cli::k_exit_unavailable);
  EXPECT_NE(anonymous.err.find("refused"), std::string::npos) << anonymous.err;
  EXPECT_EQ(get("/api/v1/pipelines").body.at("items").as_array().size(), 0u);
}

TEST_F(CliTest, RunnersListsRoleGpuAndState) {
  add_target();
  register_runner("builder-1", "build");
  register_runner("gpu-h200-0", "gpu");
  auto r = kport({"runners", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto items = r.json();
  ASSERT_TRUE(items.is_array()) << r.out;
  ASSERT_EQ(items.as_array().size(), 2u);
  auto table = kport({"runners"});
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("builder-1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("NVIDIA H200 (9.0)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("2 runners, 2 online"), std::string::npos) << table.out;
  EXPECT_EQ(kport({"runners", "extra"}).rc, cli::k_exit_usage);
}

TEST_F(CliTest, RunnersRevokeEndsARunnersTokenAndSaysSo) {
  add_target();
  const std::string token = register_runner("gpu-h200-0", "gpu");
  auto listed = kport({"runners", "--json"});
  ASSERT_EQ(listed.rc, 0) << listed.err;
  const std::string id = std::to_string(listed.json().as_array().at(0).at("id").as_int64());
  // The runner's token works until it is revoked.
  ASSERT_EQ(post("/api/v1/runners/heartbeat", json::object{}, token).status, 200);
  auto r = kport({"runners", "revoke", id, "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.json().at("runner").as_int64(), std::stoll(id)) << r.out;
  EXPECT_TRUE(r.json().at("revoked").as_bool()) << r.out;
  EXPECT_EQ(post("/api/v1/runners/heartbeat", json::object{}, token).status, 401) << "a revoked token must not work";
  auto again = kport({"runners", "revoke", id});
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_NE(again.out.find("runner " + id + ": token revoked"), std::string::npos) << again.out;
  // Bad input: an id that is not one, a runner that does not exist, no admin token.
  auto bad = kport({"runners", "revoke", "x1"});
  EXPECT_EQ(bad.rc, cli::k_exit_usage);
  EXPECT_NE(bad.err.find("'x1' is not a runner id"), std::string::npos) << bad.err;
  auto missing = kport({"runners", "revoke", "999"});
  EXPECT_EQ(missing.rc, cli::k_exit_usage) << missing.err;
  EXPECT_NE(missing.err.find("runner 999 does not exist"), std::string::npos) << missing.err;
  EXPECT_EQ(kport({"runners", "revoke", id}, false).rc, cli::k_exit_unavailable);
}

TEST_F(CliTest, AdminRegistrationTokenRotateMakesANewTokenAndRefusesTheOld) {
  auto r = kport({"admin", "registration-token", "rotate", "--expires-in", "2h", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string fresh(r.json().at("token").as_string());
  ASSERT_FALSE(fresh.empty()) << r.out;
  EXPECT_TRUE(r.json().at("expires_ms").is_int64()) << r.out;
  json::object reg{
      {"name", "b"}, {"role", "build"}, {"capabilities", json::object{{"targets", json::array{"sm_90a"}}}}};
  EXPECT_EQ(post("/api/v1/runners/register", reg, k_registration).status, 403) << "the old token must be refused";
  EXPECT_EQ(post("/api/v1/runners/register", reg, fresh).status, 201);
  // Text form, without an expiry.
  auto text = kport({"admin", "registration-token", "rotate"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("new registration token: kpreg_"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("it does not expire"), std::string::npos) << text.out;
  // Bad input is refused before anything is asked of the coordinator.
  auto bad = kport({"admin", "registration-token", "rotate", "--expires-in", "soon"});
  EXPECT_EQ(bad.rc, cli::k_exit_usage);
  EXPECT_NE(bad.err.find("--expires-in 'soon' is not a duration"), std::string::npos) << bad.err;
  EXPECT_EQ(kport({"admin", "registration-token", "rotate", "--expires-in", "0"}).rc, cli::k_exit_usage);
  EXPECT_EQ(kport({"admin", "registration-token"}).rc, cli::k_exit_usage);
  EXPECT_EQ(kport({"admin", "runner-token", "rotate"}).rc, cli::k_exit_usage);
  EXPECT_EQ(kport({"admin", "registration-token", "rotate"}, false).rc, cli::k_exit_unavailable);
}

TEST_F(CliTest, LogsPrintsAndFollowsAJobLog) {
  seed();
  auto builder = register_runner("builder-1", "build");
  auto r = kport({"trigger", commit_sha(), "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto job = claim(builder);
  ASSERT_TRUE(job.is_object());
  auto id = std::to_string(job.at("id").as_int64());
  ASSERT_EQ(
      post("/api/v1/jobs/" + id + "/log", json::object{{"attempt", 1}, {"text", "compiling gemm\n"}}, builder).status,
      200);

  auto logs = kport({"logs", id});
  ASSERT_EQ(logs.rc, 0) << logs.err;
  EXPECT_EQ(logs.out, "compiling gemm\n");

  // --follow prints what arrives later and ends with the job's verdict.
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    http::Client c;
    call(c, "POST", url("/api/v1/jobs/" + id + "/log"), nullptr, builder);  // malformed: ignored by the coordinator
    json::value more = json::object{{"attempt", 1}, {"text", "gemm.simt ok\n"}};
    call(c, "POST", url("/api/v1/jobs/" + id + "/log"), &more, builder);
    json::value done = json::object{{"attempt", 1}, {"status", "failed"}, {"reason", "nvcc failed"}};
    call(c, "POST", url("/api/v1/jobs/" + id + "/complete"), &done, builder);
  });
  auto follow = kport({"logs", id, "--follow"});
  finisher.join();
  EXPECT_EQ(follow.rc, cli::k_exit_failed) << follow.err;
  EXPECT_EQ(follow.out, "compiling gemm\ngemm.simt ok\n");
  EXPECT_NE(follow.err.find("job " + id + " failed"), std::string::npos) << follow.err;

  auto js = kport({"logs", id, "--json"});
  ASSERT_EQ(js.rc, 0) << js.err;
  EXPECT_EQ(js.json().at("chunks").as_array().size(), 2u) << js.out;
  EXPECT_EQ(js.json().at("job").at("status").as_string(), "failed");

  EXPECT_EQ(kport({"logs", "abc"}).rc, cli::k_exit_usage);
  EXPECT_EQ(kport({"logs"}).rc, cli::k_exit_usage);
  auto missing = kport({"logs", "99999"});
  EXPECT_EQ(missing.rc, cli::k_exit_usage);
  EXPECT_NE(missing.err.find("99999"), std::string::npos) << missing.err;
}

TEST_F(CliTest, BringupAndBestShowWhatWasMeasured) {
  seed();
  auto empty = kport({"bringup", "sm_90a"});
  ASSERT_EQ(empty.rc, 0) << empty.err;
  EXPECT_NE(empty.out.find("no build of sm_90a is recorded yet"), std::string::npos) << empty.out;
  auto builder = register_runner("builder-1", "build");
  auto gpu = register_runner("gpu-1", "gpu");
  trigger_and_build(
      builder,
      gemm_records(
          {{"registers", 128}, {"spill_stores_bytes", 0}, {"spill_loads_bytes", 0}, {"shared_mem_bytes", 65536}}));
  check_with(gpu, json::array{gemm_result("wgmma_tma", 90.0), gemm_result("mma_sync", 150.0)});

  auto table = kport({"bringup", "sm_90a"});
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("bring-up of sm_90a (arch 9.0)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("gemm.wgmma_tma"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("gemm.mma_sync"), std::string::npos) << table.out;
  auto bj = kport({"bringup", "sm_90a", "--json"});
  ASSERT_EQ(bj.rc, 0);
  EXPECT_GE(bj.json().at("progress").at("builds").as_int64(), 2) << bj.out;
  EXPECT_EQ(kport({"bringup", "hopper"}).rc, cli::k_exit_usage);
  auto unknown = kport({"bringup", "sm_99"});
  EXPECT_EQ(unknown.rc, cli::k_exit_usage);
  EXPECT_NE(unknown.err.find("not known"), std::string::npos) << unknown.err;

  auto best = kport({"best", "--gpu", "NVIDIA H200", "--shape", "m=1024,n=1024,k=1024"});
  ASSERT_EQ(best.rc, 0) << best.err;
  EXPECT_NE(best.out.find(": gemm.wgmma_tma.128x128 (measured)"), std::string::npos) << best.out;
  EXPECT_NE(best.out.find("gemm.mma_sync.128x128"), std::string::npos) << best.out;
  auto bjs = kport({"best", "--gpu", "NVIDIA H200", "--shape", "m=1024,n=1024,k=1024", "--json"});
  ASSERT_EQ(bjs.rc, 0);
  EXPECT_EQ(bjs.json().at("best").as_string(), "gemm.wgmma_tma.128x128") << bjs.out;
  EXPECT_EQ(bjs.json().at("ranking").as_array().size(), 2u);

  EXPECT_EQ(kport({"best", "--gpu", "NVIDIA H200"}).rc, cli::k_exit_usage);  // no shape
  auto never = kport({"best", "--gpu", "Mystery GPU", "--shape", "m=1,n=1,k=1"});
  EXPECT_EQ(never.rc, cli::k_exit_usage);
  EXPECT_NE(never.err.find("has never been seen"), std::string::npos) << never.err;
  EXPECT_EQ(kport({"best", "--gpu", "NVIDIA H200", "--shape", "m=x", "--op", "conv"}).rc, cli::k_exit_usage);
}

// `kport gpus` lists the GPU models seen; with --gpu it judges that model's GPUs on the
// cases both timed at one commit: one GPU 8 % slower at a lower clock differs, in words and
// as JSON; with nothing timed on two GPUs it says there is nothing to compare.
TEST_F(CliTest, GpusListsTheModelsAndJudgesAModelsGpus) {
  seed();
  auto builder = register_runner("builder-1", "build");
  auto gpu = register_runner("gpu-1", "gpu");
  auto measure = [&](const char* uuid, double mhz, double wgmma_us, double mma_us) {
    trigger_and_build(builder, gemm_records());
    json::array results{gemm_result("wgmma_tma", wgmma_us), gemm_result("mma_sync", mma_us)};
    for (auto& r : results) {
      r.as_object()["gpu_uuid"] = uuid;
      r.as_object()["sm_clock_mhz"] = mhz;
    }
    check_with(gpu, results);
  };
  measure("GPU-aaaa", 1980, 90.0, 150.0);
  auto alone = kport({"gpus", "--gpu", "NVIDIA H200"});
  ASSERT_EQ(alone.rc, 0) << alone.err;
  EXPECT_EQ(alone.out, "no case was timed on two GPUs of NVIDIA H200 at one commit: nothing to compare\n");
  measure("GPU-bbbb", 1830, 97.2, 162.0);
  auto list = kport({"gpus"});
  ASSERT_EQ(list.rc, 0) << list.err;
  EXPECT_NE(list.out.find("NVIDIA H200"), std::string::npos) << list.out;
  auto judged = kport({"gpus", "--gpu", "NVIDIA H200"});
  ASSERT_EQ(judged.rc, 0) << judged.err;
  EXPECT_EQ(judged.out.rfind("GPU-aaaa and GPU-bbbb differ: 2 cases timed on both, compute-bound 8.0 % apart", 0), 0u)
      << judged.out;
  EXPECT_NE(judged.out.find("SM clocks 1980 and 1830 MHz"), std::string::npos) << judged.out;
  auto as_json = kport({"gpus", "--gpu", "NVIDIA H200", "--json"});
  ASSERT_EQ(as_json.rc, 0) << as_json.err;
  EXPECT_FALSE(as_json.json().at("items").as_array()[0].at("agree").as_bool()) << as_json.out;
}

TEST_F(CliTest, BestSaysInWordsWhenAnAnswerIsProvisionalOrUnranked) {
  seed();
  json::array kernels;
  for (auto [variant, feature] :
       {std::pair{"mma_sync", "mma_sync"}, std::pair{"wgmma_tma", "wgmma"}, std::pair{"tcgen05", "tcgen05"}})
    kernels.push_back(json::object{{"name", std::string("gemm.") + variant + ".128x128"},
                                   {"family", "gemm"},
                                   {"variant", variant},
                                   {"features", json::array{feature}},
                                   {"dtypes", json::array{"bf16"}}});
  ASSERT_EQ(put("/api/v1/kernels", json::object{{"instances", kernels}}, k_admin).status, 200);
  auto builder = register_runner("builder-1", "build");
  auto gpu = register_runner("gpu-1", "gpu");
  trigger_and_build(builder, gemm_records());
  // A Blackwell target appears before anything was built for it.
  ASSERT_EQ(put("/api/v1/targets/sm_100a",
                json::object{{"arch", "10.0"}, {"features", json::array{"mma_sync", "tcgen05"}}}, k_admin)
                    .status /
                100,
            2);

  // Nothing measured anywhere: the candidates for sm_100a, and no best.
  auto unranked = kport({"best", "--gpu", "NVIDIA B200", "--arch", "10.0", "--shape", "m=1024,n=1024,k=1024"});
  EXPECT_EQ(unranked.rc, cli::k_exit_failed) << unranked.err;
  EXPECT_NE(unranked.out.find("no best (unranked"), std::string::npos) << unranked.out;
  EXPECT_NE(unranked.out.find("gemm.tcgen05.128x128"), std::string::npos) << unranked.out;
  EXPECT_EQ(unranked.out.find("gemm.wgmma_tma"), std::string::npos) << "sm_100a has no wgmma: " << unranked.out;

  check_with(gpu, json::array{gemm_result("wgmma_tma", 90.0), gemm_result("mma_sync", 150.0)}, false);

  // Measured on the H200 only: the B200's answer is provisional and says by what.
  auto prov = kport({"best", "--gpu", "NVIDIA B200", "--arch", "10.0", "--shape", "m=1024,n=1024,k=1024"});
  ASSERT_EQ(prov.rc, 0) << prov.err;
  EXPECT_NE(
      prov.out.find(": gemm.mma_sync.128x128 (provisional: nothing comparable was measured on this GPU; ranked by "
                    "speed relative to the vendor baseline on NVIDIA H200)"),
      std::string::npos)
      << prov.out;
  EXPECT_NE(prov.out.find("evidence: NVIDIA H200, commit "), std::string::npos) << prov.out;
  EXPECT_NE(prov.out.find("driver 580.1"), std::string::npos) << prov.out;
  EXPECT_NE(prov.out.find("unranked"), std::string::npos) << "tcgen05 has no evidence: " << prov.out;
  auto js = kport({"best", "--gpu", "NVIDIA B200", "--arch", "10.0", "--shape", "m=1024,n=1024,k=1024", "--json"});
  ASSERT_EQ(js.rc, 0);
  EXPECT_EQ(js.json().at("kind").as_string(), "provisional") << js.out;
  EXPECT_EQ(js.json().at("evidence").at("commit").as_string(), commit_sha()) << js.out;

  auto bad =
      kport({"best", "--gpu", "NVIDIA B200", "--arch", "10.0", "--dtype", "fp64", "--shape", "m=1024,n=1024,k=1024"});
  EXPECT_EQ(bad.rc, cli::k_exit_usage);
  EXPECT_NE(bad.err.find("no gemm instance runs dtype 'fp64'"), std::string::npos) << bad.err;
}

TEST_F(CliTest, TheBinaryExitsNonZeroOnUnreachableServerAndUnknownCommand) {
  std::string out;
  EXPECT_EQ(run_to_exit(KPORT_CLI_BIN, {"--server", "http://127.0.0.1:1", "runners"}, out), cli::k_exit_unavailable);
  EXPECT_NE(out.find("cannot reach the coordinator"), std::string::npos) << out;
  EXPECT_EQ(run_to_exit(KPORT_CLI_BIN, {"--server", url(""), "nonsense"}, out), cli::k_exit_usage);
  EXPECT_NE(out.find("unknown command 'nonsense'"), std::string::npos) << out;
  EXPECT_EQ(run_to_exit(KPORT_CLI_BIN, {"--help"}, out), 0);
  for (const char* c : {"build", "trigger", "best", "bringup", "runners", "logs"})
    EXPECT_NE(out.find(std::string("  ") + c + " "), std::string::npos) << c << "\n" << out;
}

TEST_F(CliTest, CommandHelpPrintsThatCommandsUsageAndOptions) {
  auto best = kport({"best", "--help"});
  EXPECT_EQ(best.rc, cli::k_exit_ok);
  EXPECT_EQ(best.out.rfind("usage: kport best ", 0), 0u) << best.out;
  EXPECT_NE(best.out.find("--gpu VALUE"), std::string::npos) << best.out;  // best's own option
  EXPECT_EQ(best.out.find("Commands:"), std::string::npos) << best.out;    // not the global help
  EXPECT_EQ(best.err, "");
  // Every command answers its own --help, without asking the coordinator.
  std::string out;
  for (const char* c : {"build", "trigger", "best", "best-request", "families", "gpus", "bringup", "runners", "logs",
                        "status", "admin"}) {
    EXPECT_EQ(run_to_exit(KPORT_CLI_BIN, {"--server", "http://127.0.0.1:1", c, "--help"}, out), 0) << c << ": " << out;
    EXPECT_EQ(out.rfind(std::string("usage: kport ") + c + " ", 0), 0u) << c << ": " << out;
  }
  // An unknown command is still an error, --help or not.
  auto unknown = kport({"nonsense", "--help"});
  EXPECT_EQ(unknown.rc, cli::k_exit_usage);
  EXPECT_NE(unknown.err.find("unknown command 'nonsense'"), std::string::npos) << unknown.err;
  EXPECT_EQ(unknown.out, "");
}

TEST_F(CliTest, BestRequestQueuesAMeasurementFollowsItAndLists) {
  seed();
  auto builder = register_runner("builder-1", "build");
  auto gpu = register_runner("gpu-1", "gpu");
  ASSERT_EQ(kport({"trigger", commit_sha(), "--json"}).rc, 0);
  auto job = claim(builder);
  ASSERT_TRUE(job.is_object());
  auto id = std::to_string(job.at("id").as_int64());
  ASSERT_EQ(
      post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, builder).status,
      200);
  check_with(gpu, json::array{gemm_result("wgmma_tma", 90.0), gemm_result("mma_sync", 150.0)});

  auto nearest = kport({"best", "--gpu", "NVIDIA H200", "--shape", "m=2048,n=2048,k=2048"});
  ASSERT_EQ(nearest.rc, 0) << nearest.err;
  EXPECT_NE(nearest.out.find("nearest measured shape: k=1024,m=1024,n=1024"), std::string::npos) << nearest.out;
  // Ranked by each figure moved to the asked shape (8x the problem): the estimate beside the
  // median measured at the stand-in shape.
  EXPECT_NE(nearest.out.find("estimate here  median there"), std::string::npos) << nearest.out;
  EXPECT_NE(nearest.out.find("720 us         90 us"), std::string::npos) << nearest.out;
  EXPECT_NE(nearest.out.find("to measure it: kport best-request --gpu \"NVIDIA H200\" --op gemm --dtype bf16 --shape "
                             "m=2048,n=2048,k=2048 --repo kernels"),
            std::string::npos)
      << nearest.out;
  auto exact = kport({"best", "--gpu", "NVIDIA H200", "--shape", "m=1024,n=1024,k=1024"});
  EXPECT_EQ(exact.out.find("to measure it"), std::string::npos) << exact.out;

  // The measured grid shape needs no request.
  auto measured = kport({"best-request", "--gpu", "NVIDIA H200", "--shape", "m=1024,n=1024,k=1024"});
  ASSERT_EQ(measured.rc, 0) << measured.err;
  EXPECT_NE(measured.out.find("already measured: best gemm.wgmma_tma.128x128"), std::string::npos) << measured.out;

  auto queued = kport({"best-request", "--gpu", "NVIDIA H200", "--shape", "m=2048,n=2048,k=2048"});
  ASSERT_EQ(queued.rc, 0) << queued.err;
  EXPECT_NE(queued.out.find("queued; measure request 1: gemm bf16 k=2048,m=2048,n=2048 on NVIDIA H200: queued"),
            std::string::npos)
      << queued.out;
  auto again = kport({"best-request", "--gpu", "NVIDIA H200", "--shape", "k=2048,m=2048,n=2048", "--json"});
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(again.json().at("outcome").as_string(), "coalesced") << again.out;
  EXPECT_EQ(again.json().at("requests").as_int64(), 2);

  // The GPU runner measures the case; the request, followed by id, ends measured.
  auto m = claim(gpu);
  ASSERT_TRUE(m.is_object());
  EXPECT_EQ(m.at("payload").at("cases").as_array()[0].at("shape").as_string(), "m=2048,n=2048,k=2048");
  auto mid = std::to_string(m.at("id").as_int64());
  auto at_2048 = [](json::object r) {
    r["shape"] = "m=2048,n=2048,k=2048";
    return r;
  };
  json::array measured_now{at_2048(gemm_result("wgmma_tma", 700.0)), at_2048(gemm_result("mma_sync", 650.0))};
  ASSERT_EQ(
      post("/api/v1/jobs/" + mid + "/results", json::object{{"attempt", 1}, {"results", measured_now}}, gpu).status,
      200);
  ASSERT_EQ(post("/api/v1/jobs/" + mid + "/complete", json::object{{"attempt", 1}}, gpu).status, 200);
  auto followed = kport({"best-request", "1", "--request-wait", "5"});
  ASSERT_EQ(followed.rc, 0) << followed.err;
  EXPECT_NE(followed.out.find(": measured (job " + mid), std::string::npos) << followed.out;
  EXPECT_NE(followed.out.find("best: gemm.mma_sync.128x128"), std::string::npos) << followed.out;

  auto listed = kport({"best-request", "--list", "--gpu", "NVIDIA H200"});
  ASSERT_EQ(listed.rc, 0) << listed.err;
  EXPECT_NE(listed.out.find("k=2048,m=2048,n=2048"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("measured"), std::string::npos) << listed.out;
  auto lj = kport({"best-request", "--list", "--json"});
  ASSERT_EQ(lj.rc, 0);
  EXPECT_EQ(lj.json().at("items").as_array().size(), 1u) << lj.out;
  // The request is of the one library that ran gemm; --repo lists that library's only.
  EXPECT_NE(followed.out.find(", library kernels,"), std::string::npos) << followed.out;
  auto of_kernels = kport({"best-request", "--list", "--repo", "kernels", "--json"});
  ASSERT_EQ(of_kernels.rc, 0) << of_kernels.err;
  ASSERT_EQ(of_kernels.json().at("items").as_array().size(), 1u) << of_kernels.out;
  EXPECT_EQ(of_kernels.json().at("items").as_array()[0].at("repo").as_string(), "kernels");
  // A library kport does not know is named back, not listed as having no requests.
  auto of_other = kport({"best-request", "--list", "--repo", "other", "--gpu", "NVIDIA H200"});
  EXPECT_EQ(of_other.rc, cli::k_exit_usage) << of_other.out;
  EXPECT_NE(of_other.err.find("'other'"), std::string::npos) << of_other.err;
  // The asks /api/v1/best counted are listed with the library they would measure.
  const auto asks_at = listed.out.find("most asked without a measurement");
  ASSERT_NE(asks_at, std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("kernels", asks_at), std::string::npos) << listed.out;

  // Bad input and refusals: exit 2 for what the server found wrong, 3 when refused.
  EXPECT_EQ(kport({"best-request", "--gpu", "NVIDIA H200"}).rc, cli::k_exit_usage);
  auto bad = kport({"best-request", "--gpu", "NVIDIA H200", "--shape", "m=1,n=1"});
  EXPECT_EQ(bad.rc, cli::k_exit_usage);
  EXPECT_NE(bad.err.find("'shape'"), std::string::npos) << bad.err;
  EXPECT_EQ(kport({"best-request", "--gpu", "Mystery GPU", "--shape", "m=1,n=1,k=1"}).rc, cli::k_exit_usage);
  EXPECT_EQ(kport({"best-request", "--gpu", "NVIDIA H200", "--shape", "m=8,n=8,k=8"}, false).rc,
            cli::k_exit_unavailable);
  EXPECT_EQ(kport({"best-request", "42"}).rc, cli::k_exit_usage);
}

}  // namespace
}  // namespace kport::testing
