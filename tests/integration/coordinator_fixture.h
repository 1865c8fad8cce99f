// A started kport-coordinator on 127.0.0.1:<free port> with a temp database, plus
// helpers that speak the runner protocol the way kport-runner does.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "support/process.h"

namespace kport::testing {

inline const std::string k_admin = "admin-secret-token";
inline const std::string k_registration = "registration-secret-token";

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override { start(); }

  std::vector<std::string> args() const {
    std::vector<std::string> a = {"--listen",
                                  "127.0.0.1:0",
                                  "--db",
                                  (dir.path() / "kport.db").string(),
                                  "--admin-token",
                                  k_admin,
                                  "--registration-token",
                                  k_registration,
                                  "--lease-seconds",
                                  std::to_string(lease_seconds),
                                  "--max-attempts",
                                  std::to_string(max_attempts),
                                  "--body-limit",
                                  "1048576",
                                  "--read-timeout-ms",
                                  "1500",
                                  "--retry-base-ms",
                                  std::to_string(retry_base_ms)};
    a.insert(a.end(), extra_args.begin(), extra_args.end());
    return a;
  }

  void start() {
    proc = std::make_unique<ServiceProcess>(KPORT_COORDINATOR_BIN, args(), dir.path() / "port",
                                            dir.path() / "coordinator.log");
    ASSERT_TRUE(proc->started()) << proc->log();
  }

  std::string url(std::string_view path) const { return proc->url(path); }

  JsonReply get(const std::string& path, const std::string& token = "") {
    return call(client, "GET", url(path), nullptr, token);
  }
  JsonReply post(const std::string& path, const boost::json::value& body, const std::string& token) {
    return call(client, "POST", url(path), &body, token);
  }
  JsonReply put(const std::string& path, const boost::json::value& body, const std::string& token) {
    return call(client, "PUT", url(path), &body, token);
  }

  // Registers sm_90a (arch 9.0) and returns nothing; most tests need one target.
  void add_target(const std::string& name = "sm_90a", const std::string& arch = "9.0") {
    auto r = put("/api/v1/targets/" + name,
                 boost::json::object{{"arch", arch}, {"features", boost::json::array{"wgmma"}}}, k_admin);
    ASSERT_TRUE(r.status == 201 || r.status == 200) << r.raw;
  }

  // Registers a runner; returns its token.
  std::string register_runner(const std::string& name, const std::string& role, const std::string& arch = "9.0",
                              const std::string& gpu = "NVIDIA H200") {
    boost::json::object caps{{"toolkit", "13.0"}, {"targets", boost::json::array{"sm_90a", "sm_100a"}}, {"cores", 2}};
    if (role == "gpu") {
      caps["arch"] = arch;
      caps["gpu_model"] = gpu;
      caps["driver"] = "580.1";
    }
    auto r = post("/api/v1/runners/register",
                  boost::json::object{{"name", name}, {"role", role}, {"capabilities", caps}}, k_registration);
    EXPECT_EQ(r.status, 201) << r.raw;
    return r.status == 201 ? std::string(r.body.at("token").as_string()) : std::string();
  }

  std::string commit_sha(int i = 1) const {
    std::string s = std::to_string(i);
    return std::string(40 - s.size(), 'a') + s;
  }

  // Records a commit and starts a pipeline on the given targets; returns the pipeline.
  boost::json::object start_pipeline(const std::string& sha, boost::json::array targets = {"sm_90a"}) {
    auto repo =
        post("/api/v1/repositories", boost::json::object{{"name", "kernels"}, {"url", "/tmp/kernels.git"}}, k_admin);
    EXPECT_TRUE(repo.status == 201) << repo.raw;
    auto c = post("/api/v1/commits", boost::json::object{{"sha", sha}, {"repo", "kernels"}, {"message", "change gemm"}},
                  k_admin);
    EXPECT_EQ(c.status, 201) << c.raw;
    auto p =
        post("/api/v1/pipelines",
             boost::json::object{
                 {"commit", sha}, {"repo", "kernels"}, {"ref", "refs/heads/main"}, {"targets", std::move(targets)}},
             k_admin);
    EXPECT_EQ(p.status, 201) << p.raw;
    return p.status == 201 ? p.body.as_object() : boost::json::object{};
  }

  // Claims with the given long-poll wait; returns the job object or null.
  boost::json::value claim(const std::string& token, int wait_s = 0) {
    auto r = call(client, "POST", url("/api/v1/runners/claim?wait=" + std::to_string(wait_s)), nullptr, token);
    EXPECT_EQ(r.status, 200) << r.raw;
    return r.status == 200 ? r.body.at("job") : boost::json::value(nullptr);
  }

  TempDir dir;
  http::Client client;
  std::unique_ptr<ServiceProcess> proc;
  int lease_seconds = 60;
  int max_attempts = 3;
  int retry_base_ms = 200;  // backoff after a first failed attempt; tests wait it out
  std::vector<std::string> extra_args;
};

// A gemm result upload (bf16 on an H200, sm_90a) timed at `median_us`, cuBLAS at 200 us.
inline boost::json::object gemm_upload(const std::string& instance, const std::string& shape, double median_us,
                                       const std::string& status = "passed") {
  return boost::json::object{{"target", "sm_90a"},
                             {"family", "gemm"},
                             {"variant", instance.substr(5, instance.rfind('.') - 5)},
                             {"instance", instance},
                             {"dtype", "bf16"},
                             {"shape", shape},
                             {"toolkit", "13.0"},
                             {"gpu_model", "NVIDIA H200"},
                             {"gpu_uuid", "GPU-1"},
                             {"arch", "9.0"},
                             {"driver", "580.1"},
                             {"status", status},
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

}  // namespace kport::testing
