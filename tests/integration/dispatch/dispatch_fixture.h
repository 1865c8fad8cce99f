// A coordinator seeded with measured results on an NVIDIA H200 for every family:
// grids of shapes, instances whose speed depends on the shape, failures, untimed
// passes, unstable figures, and a second commit that re-measures part of gemm.
#pragma once

#include <random>

#include "coordinator_fixture.h"

namespace kport::testing {

class DispatchTest : public CoordinatorTest {
 public:
  struct Family {
    std::string op;
    std::vector<std::string> dtypes;
    std::vector<std::string> instances;
    std::vector<std::vector<std::pair<std::string, std::vector<int>>>> dims;  // one per shape axis
  };

 protected:
  static constexpr std::int64_t k_t1 = 1'700'000'000'000, k_t2 = 1'700'000'500'000;

  static std::vector<Family> families() {
    return {
        {"gemm",
         {"bf16", "fp16"},
         {"gemm.wgmma_tma.128x256", "gemm.wgmma_tma.64x128", "gemm.mma_sync.128x128", "gemm.simt.64x64"},
         {{{"m", {1, 16, 128, 1024, 4096, 8192}}, {"n", {1024, 4096, 8192}}, {"k", {1024, 4096}}}}},
        {"attention",
         {"bf16"},
         {"attention.fa_wgmma.128", "attention.fa_mma.64", "attention.naive.32"},
         {{{"b", {1, 4}}, {"h", {16, 32}}, {"l", {512, 2048, 8192}}, {"d", {64, 128}}, {"causal", {0, 1}}}}},
        {"rmsnorm",
         {"bf16"},
         {"rmsnorm.vec.a", "rmsnorm.warp.b", "rmsnorm.block.c"},
         {{{"rows", {1, 64, 4096, 32768}}, {"cols", {1024, 4096, 8192, 131072}}}}},
        {"softmax",
         {"fp32", "fp16"},
         {"softmax.online.a", "softmax.twopass.b", "softmax.block.c"},
         {{{"rows", {1, 64, 4096, 32768}}, {"cols", {1024, 4096, 8192, 131072}}}}},
    };
  }

  // Every shape of a family's grid, as key=value text.
  static std::vector<std::string> grid(const Family& f) {
    std::vector<std::string> out{""};
    for (const auto& [key, values] : f.dims.front()) {
      std::vector<std::string> next;
      for (const auto& prefix : out)
        for (int v : values) next.push_back(prefix + (prefix.empty() ? "" : ",") + key + "=" + std::to_string(v));
      out = std::move(next);
    }
    return out;
  }

  void SetUp() override {
    CoordinatorTest::SetUp();
    auto t =
        put("/api/v1/targets/sm_90a",
            boost::json::object{{"arch", "9.0"}, {"features", boost::json::array{"simt", "mma_sync", "wgmma", "tma"}}},
            k_admin);
    ASSERT_TRUE(t.status == 200 || t.status == 201) << t.raw;
    boost::json::array kernels;
    for (const auto& f : families())
      for (const auto& i : f.instances) {
        boost::json::array dtypes;
        for (const auto& d : f.dtypes) dtypes.emplace_back(d);
        kernels.push_back(boost::json::object{{"name", i},
                                              {"family", f.op},
                                              {"variant", variant(i)},
                                              {"features", boost::json::array{"simt"}},
                                              {"dtypes", std::move(dtypes)},
                                              {"config", config(f.op, i)}});
      }
    ASSERT_EQ(put("/api/v1/kernels", boost::json::object{{"instances", kernels}}, k_admin).status, 200);
    auto repo =
        post("/api/v1/repositories", boost::json::object{{"name", "kernels"}, {"url", "/tmp/kernels.git"}}, k_admin);
    ASSERT_EQ(repo.status, 201) << repo.raw;
    m_builder = register_runner("builder-1", "build");
    // The GPU runner says how many SMs its GPU has, as kport-runner does.
    auto gpu = post(
        "/api/v1/runners/register",
        boost::json::object{{"name", "gpu-1"},
                            {"role", "gpu"},
                            {"capabilities", boost::json::object{{"arch", "9.0"},
                                                                 {"gpu_model", "NVIDIA H200"},
                                                                 {"driver", "580.1"},
                                                                 {"extra", boost::json::object{{"sm_count", 132}}}}}},
        k_registration);
    ASSERT_EQ(gpu.status, 201) << gpu.raw;
    m_gpu = std::string(gpu.body.at("token").as_string());
  }

  // The tiles a published config names (gemm "128x256": bm, bn and bk 64; attention
  // "fa_wgmma.128": br 128, bc 64), so answers from another shape move by waves.
  static boost::json::object config(const std::string& op, const std::string& instance) {
    std::string tail = instance.substr(instance.rfind('.') + 1);
    if (op == "gemm") {
      auto x = tail.find('x');
      return {{"bm", std::stoi(tail.substr(0, x))}, {"bn", std::stoi(tail.substr(x + 1))}, {"bk", 64}};
    }
    if (op == "attention") return {{"br", std::stoi(tail)}, {"bc", 64}};
    return {};
  }

  static std::string variant(const std::string& instance) {
    auto a = instance.find('.'), b = instance.rfind('.');
    return instance.substr(a + 1, b - a - 1);
  }

  // One result; median from a model where each instance has its own fixed cost and
  // throughput, jittered, so winners change across shapes and some come close to ties.
  boost::json::object result(const Family& f, const std::string& dtype, std::size_t inst, const std::string& shape,
                             std::mt19937_64& rng, const std::string& driver) {
    boost::json::object r{{"target", "sm_90a"},
                          {"family", f.op},
                          {"variant", variant(f.instances[inst])},
                          {"instance", f.instances[inst]},
                          {"dtype", dtype},
                          {"shape", shape},
                          {"toolkit", "13.0"},
                          {"gpu_model", "NVIDIA H200"},
                          {"gpu_uuid", "GPU-1"},
                          {"arch", "9.0"},
                          {"driver", driver},
                          {"seed", 7}};
    double roll = std::uniform_real_distribution<double>(0, 1)(rng);
    if (roll < 0.05) {
      r["status"] = roll < 0.03 ? "failed" : "crashed";
      return r;
    }
    r["status"] = "passed";
    if (roll < 0.08) return r;  // checked, not timed
    double work = 1;
    for (std::size_t p = 0; p < shape.size();) {
      auto eq = shape.find('=', p), comma = shape.find(',', p);
      work *= std::max(
          1.0, std::stod(shape.substr(eq + 1, comma == std::string::npos ? std::string::npos : comma - eq - 1)));
      p = comma == std::string::npos ? shape.size() : comma + 1;
    }
    double fixed = 4.0 / (1 + inst), per = 1e-7 * (1 + 0.6 * inst);
    double median = (fixed + work * per) * std::uniform_real_distribution<double>(0.9, 1.1)(rng);
    r["median_us"] = median;
    r["stddev_us"] = median * std::uniform_real_distribution<double>(0.001, 0.01)(rng);
    r["samples"] = 50;
    r["baseline"] = "vendor";
    r["baseline_median_us"] = median * 1.1;
    r["ratio"] = 1.1;
    if (roll > 0.95) r["unstable"] = true;
    return r;
  }

  // A commit at `time_ms`, its sm_90a build and its H200 check with these results.
  void validate(const std::string& sha, std::int64_t time_ms, const boost::json::array& results) {
    auto c = post("/api/v1/commits",
                  boost::json::object{{"sha", sha}, {"repo", "kernels"}, {"message", "kernels"}, {"time_ms", time_ms}},
                  k_admin);
    ASSERT_EQ(c.status, 201) << c.raw;
    auto p = post("/api/v1/pipelines",
                  boost::json::object{{"commit", sha},
                                      {"repo", "kernels"},
                                      {"ref", "refs/heads/main"},
                                      {"targets", boost::json::array{"sm_90a"}}},
                  k_admin);
    ASSERT_EQ(p.status, 201) << p.raw;
    auto build = claim(m_builder);
    ASSERT_TRUE(build.is_object());
    auto id = std::to_string(build.at("id").as_int64());
    boost::json::array records;
    for (const auto& f : families())
      for (const auto& i : f.instances)
        records.push_back(
            boost::json::object{{"target", "sm_90a"}, {"family", f.op}, {"variant", variant(i)}, {"status", "ok"}});
    ASSERT_EQ(
        post("/api/v1/jobs/" + id + "/builds", boost::json::object{{"attempt", 1}, {"records", records}}, m_builder)
            .status,
        200);
    ASSERT_EQ(post("/api/v1/jobs/" + id + "/complete", boost::json::object{{"attempt", 1}, {"status", "succeeded"}},
                   m_builder)
                  .status,
              200);
    auto check = claim(m_gpu);
    ASSERT_TRUE(check.is_object());
    auto cid = std::to_string(check.at("id").as_int64());
    for (std::size_t at = 0; at < results.size(); at += 200) {
      boost::json::array part(results.begin() + static_cast<std::ptrdiff_t>(at),
                              results.begin() + static_cast<std::ptrdiff_t>(std::min(results.size(), at + 200)));
      auto up = post("/api/v1/jobs/" + cid + "/results",
                     boost::json::object{{"attempt", 1}, {"results", std::move(part)}}, m_gpu);
      ASSERT_EQ(up.status, 200) << up.raw;
    }
    ASSERT_EQ(post("/api/v1/jobs/" + cid + "/complete", boost::json::object{{"attempt", 1}}, m_gpu).status, 200);
  }

  // Two commits: everything on c1; c2 re-measures half of gemm bf16 (another driver).
  void seed() {
    std::mt19937_64 rng(1201);
    boost::json::array first, second;
    for (const auto& f : families())
      for (const auto& dtype : f.dtypes)
        for (const auto& shape : grid(f))
          for (std::size_t i = 0; i < f.instances.size(); ++i) {
            // softmax fp16 fails everywhere: measured, and nothing to recommend.
            if (f.op == "softmax" && dtype == "fp16") {
              auto r = result(f, dtype, i, shape, rng, "580.1");
              r["status"] = "failed";
              for (const char* k :
                   {"median_us", "stddev_us", "samples", "baseline", "baseline_median_us", "ratio", "unstable"})
                r.erase(k);
              first.push_back(std::move(r));
              continue;
            }
            first.push_back(result(f, dtype, i, shape, rng, "580.1"));
            if (f.op == "gemm" && dtype == "bf16" && rng() % 2)
              second.push_back(result(f, dtype, i, shape, rng, "590.2"));
          }
    validate(commit_sha(1), k_t1, first);
    validate(commit_sha(2), k_t2, second);
  }

  JsonReply snapshot(const std::string& gpu = "NVIDIA%20H200") { return get("/api/v1/dispatch/snapshot?gpu=" + gpu); }

  std::string m_builder, m_gpu;
};

}  // namespace kport::testing
