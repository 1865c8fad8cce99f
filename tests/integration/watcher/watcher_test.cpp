// kport-watcher --once rounds against a real coordinator: a new toolkit target is
// registered and brought up (its checks wait for a runner of its arch, then run), a new
// commit on a watched branch opens a pipeline, and a new GPU model and then a new
// driver are revalidated and compared with the previous driver.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runner_fixture.h"

namespace kport::testing {
namespace {

using boost::json::array;
using boost::json::object;

class Watcher : public BuildRunnerTest {
 protected:
  void SetUp() override {
    if (std::system("git --version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "the git CLI is needed to create the test repository";
    BuildRunnerTest::SetUp();
    namespace fs = std::filesystem;
    make_repository();
    // The toolkit: nvcc 13.9 lists sm_80 and sm_130, which no catalog knows.
    nvcc = (dir.path() / "nvcc").string();
    std::ofstream(nvcc) << "#!/bin/sh\ncase \"$1\" in\n"
                           "  --version) echo 'Cuda compilation tools, release 13.9, V13.9.1' ;;\n"
                           "  --list-gpu-code) printf 'sm_80\\nsm_130\\n' ;;\n"
                           "  --list-gpu-arch) printf 'compute_80\\ncompute_130\\n' ;;\n"
                           "  *) exit 1 ;;\nesac\n";
    fs::permissions(nvcc, fs::perms::owner_all, fs::perm_options::add);
    config = (dir.path() / "watcher.conf").string();
    std::ofstream(config) << "# kport-watcher\nwatch = toolkit,fleet,git\nnvcc = " << nvcc
                          << "\nrepos = kernels=" << origin << "#main\nworkdir = " << (dir.path() / "watcher").string()
                          << "\n";
    ASSERT_EQ(post("/api/v1/repositories", object{{"name", "kernels"}, {"url", origin}}, k_admin).status, 201);
  }
  std::string head() { return shell_out("git -C " + origin + " rev-parse main"); }
  int watch_once(std::string& out) {
    return run_to_exit(KPORT_WATCHER_BIN, {"--server", url(""), "--token", k_admin, "--config", config, "--once"}, out);
  }
  // Claims, uploads and completes one job as the given runner.
  std::int64_t run_job(const std::string& token, const std::string& key, array records) {
    auto job = claim(token);
    EXPECT_TRUE(job.is_object()) << "nothing to claim";
    if (!job.is_object()) return 0;
    std::string base = "/api/v1/jobs/" + std::to_string(job.at("id").to_number<std::int64_t>());
    EXPECT_EQ(post(base + (key == "records" ? "/builds" : "/results"),
                   object{{"attempt", 1}, {key, std::move(records)}}, token)
                  .status,
              200);
    EXPECT_EQ(post(base + "/complete", object{{"attempt", 1}, {"status", "succeeded"}}, token).status, 200);
    return job.at("id").to_number<std::int64_t>();
  }
  static object result(const std::string& driver, double median_us) {
    return object{{"family", "gemm"},
                  {"variant", "simt"},
                  {"instance", "gemm.simt.default"},
                  {"dtype", "f32"},
                  {"shape", "m=512,n=512,k=512"},
                  {"gpu_model", "NVIDIA Future"},
                  {"arch", "13.0"},
                  {"driver", driver},
                  {"status", "passed"},
                  {"max_rel_err", 1e-6},
                  {"tolerance", 1e-4},
                  {"median_us", median_us},
                  {"stddev_us", 0.05},
                  {"samples", 100}};
  }
  std::string gpu_runner(const std::string& name, const std::string& driver) {
    object caps{{"arch", "13.0"}, {"gpu_model", "NVIDIA Future"}, {"driver", driver}, {"gpu_uuid", "GPU-" + name}};
    auto r = post("/api/v1/runners/register", object{{"name", name}, {"role", "gpu"}, {"capabilities", caps}},
                  k_registration);
    EXPECT_EQ(r.status, 201) << r.raw;
    return r.status == 201 ? std::string(r.body.at("token").as_string()) : std::string();
  }

  std::string nvcc, config;
};

TEST_F(Watcher, NewTargetNewCommitNewGpuAndNewDriver) {
  // Round 1: every target the toolkit lists is new; each gets a bring-up at the head.
  std::string out;
  int rc = watch_once(out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("new target sm_130"), std::string::npos) << out;
  EXPECT_NE(out.find("new target sm_80"), std::string::npos) << out;
  auto t = get("/api/v1/targets/sm_130");
  ASSERT_EQ(t.status, 200) << t.raw;
  EXPECT_EQ(t.body.at("arch").as_string(), "13.0");
  EXPECT_EQ(t.body.at("toolkit").as_string(), "13.9");
  EXPECT_NE(boost::json::serialize(t.body.at("check_arches")).find("13.0"), std::string::npos) << t.raw;
  auto bringups = get("/api/v1/pipelines?reason=new_target");
  std::int64_t sm130_pipeline = 0;
  for (const auto& p : bringups.body.at("items").as_array()) {
    EXPECT_EQ(p.at("commit").as_string(), head());
    if (p.at("note").as_string().find("sm_130") != std::string::npos)
      sm130_pipeline = p.at("id").to_number<std::int64_t>();
  }
  ASSERT_GT(sm130_pipeline, 0) << bringups.raw;
  const auto pipelines_after_first = get("/api/v1/pipelines?limit=1000").body.at("items").as_array().size();

  // Round 2: nothing is new, nothing is queued.
  rc = watch_once(out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "") << out;
  EXPECT_EQ(get("/api/v1/pipelines?limit=1000").body.at("items").as_array().size(), pipelines_after_first);

  // A commit on the watched branch opens a push pipeline on the next round.
  commit_change("echo more >> kernels/README.md", "second");
  rc = watch_once(out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("new commit kernels main " + head()), std::string::npos) << out;
  auto pushed = get("/api/v1/pipelines?commit=" + head());
  ASSERT_EQ(pushed.body.at("items").as_array().size(), 1u) << pushed.raw;
  EXPECT_EQ(pushed.body.at("items").as_array()[0].at("reason").as_string(), "push");

  // The sm_130 bring-up builds; its check waits for a runner of arch 13.0.
  auto b = post("/api/v1/runners/register",
                object{{"name", "builder"}, {"role", "build"}, {"capabilities", object{{"targets", array{"sm_130"}}}}},
                k_registration);
  ASSERT_EQ(b.status, 201) << b.raw;
  std::string builder(b.body.at("token").as_string());
  run_job(builder, "records",
          array{object{{"family", "gemm"}, {"variant", "simt"}, {"status", "ok"}, {"shared_mem_bytes", 0}}});
  auto checks = get("/api/v1/jobs?kind=check");
  ASSERT_EQ(checks.body.at("items").as_array().size(), 1u) << checks.raw;
  const auto& check = checks.body.at("items").as_array()[0];
  EXPECT_EQ(check.at("status").as_string(), "awaiting_runner") << checks.raw;
  EXPECT_EQ(check.at("arch").as_string(), "13.0");

  // A runner of that arch registers: the waiting check is its to take, and the fleet
  // watch sees a GPU model never seen before.
  std::string first = gpu_runner("future-1", "600.1");
  run_job(first, "results", array{result("600.1", 10.0)});
  rc = watch_once(out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("revalidation NVIDIA Future 600.1"), std::string::npos) << out;
  auto rv = get("/api/v1/revalidations");
  ASSERT_EQ(rv.body.at("items").as_array().size(), 1u) << rv.raw;
  EXPECT_TRUE(rv.body.at("items").as_array()[0].at("previous_driver").is_null());
  ASSERT_FALSE(rv.body.at("items").as_array()[0].at("pipeline").is_null()) << rv.raw;
  run_job(first, "results", array{result("600.1", 10.0)});

  // The same model with a newer driver: revalidated and compared with 600.1.
  std::string second = gpu_runner("future-2", "600.2");
  rc = watch_once(out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("revalidation NVIDIA Future 600.2"), std::string::npos) << out;
  auto reval = claim(second);
  ASSERT_TRUE(reval.is_object());
  EXPECT_EQ(reval.at("gpu_model").as_string(), "NVIDIA Future");
  EXPECT_NE(boost::json::serialize(reval.at("payload")).find("\"previous_driver\":\"600.1\""), std::string::npos)
      << reval;
  // A new driver re-checks the instances that are best on that GPU model now.
  EXPECT_NE(boost::json::serialize(reval.at("payload")).find("\"instances\":[\"gemm.simt.default\"]"),
            std::string::npos)
      << reval;
  std::string base = "/api/v1/jobs/" + std::to_string(reval.at("id").to_number<std::int64_t>());
  ASSERT_EQ(post(base + "/results", object{{"attempt", 1}, {"results", array{result("600.2", 12.0)}}}, second).status,
            200);
  ASSERT_EQ(post(base + "/complete", object{{"attempt", 1}, {"status", "succeeded"}}, second).status, 200);
  rv = get("/api/v1/revalidations");
  const boost::json::value* newest = nullptr;
  for (const auto& item : rv.body.at("items").as_array())
    if (item.at("driver").as_string() == "600.2") newest = &item;
  ASSERT_NE(newest, nullptr) << rv.raw;
  EXPECT_EQ(newest->at("previous_driver").as_string(), "600.1");
  EXPECT_EQ(newest->at("status").as_string(), "fail") << rv.raw;
  EXPECT_NE(boost::json::serialize(newest->at("reasons"))
                .find("performance: gemm.simt.default f32 m=512,n=512,k=512 on sm_130 / NVIDIA Future: median 10.00 us "
                      "-> 12.00 us (+20.0%"),
            std::string::npos)
      << rv.raw;
  // A round later nothing is opened twice.
  rc = watch_once(out);
  EXPECT_EQ(out, "") << out;
}

TEST_F(Watcher, BadConfigurationIsRefusedWithAReason) {
  std::string out;
  int rc =
      run_to_exit(KPORT_WATCHER_BIN, {"--server", url(""), "--token", k_admin, "--repos", "kernels", "--once"}, out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("NAME=URL#BRANCH"), std::string::npos) << out;
  rc = run_to_exit(KPORT_WATCHER_BIN, {"--server", url(""), "--once"}, out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--token is required"), std::string::npos) << out;
  // A wrong token: the round fails and says why, the exit code shows it.
  rc = run_to_exit(KPORT_WATCHER_BIN, {"--server", url(""), "--token", "wrong", "--config", config, "--once"}, out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("401"), std::string::npos) << out;
}

}  // namespace
}  // namespace kport::testing
