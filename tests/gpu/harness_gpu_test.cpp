// Runs each kport-harness built in this tree as a subprocess, the way kport-runner does:
// `device` decides whether this machine can run it (skip with the reason if not), then
// `check --all` must report every instance passed or unsupported, with no run error.
// KPORT_GPU_TEST_FILTER limits the instances (substring of the name).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <string>
#include <vector>

namespace {

struct Harness {
  std::string target;
  std::string path;
};
void PrintTo(const Harness& h, std::ostream* os) { *os << h.target << " (" << h.path << ")"; }

std::vector<Harness> harnesses() {
  std::vector<Harness> out;
  std::stringstream in(KPORT_HARNESSES);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq != std::string::npos) out.push_back({item.substr(0, eq), item.substr(eq + 1)});
  }
  return out;
}

struct RunResult {
  int exit_code = -1;
  std::string out;
};

RunResult run(const std::string& command) {
  RunResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 65536> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// What `device` of harness `h` says: "" when its code runs on this machine's GPU, else why
// not (the reason a test skips with); a `device` that prints no JSON fails the test.
std::string skip_reason(const Harness& h) {
  const RunResult dev = run("'" + h.path + "' device");
  const auto info = nlohmann::json::parse(dev.out, nullptr, false);
  EXPECT_FALSE(info.is_discarded()) << "device printed no JSON: " << dev.out;
  if (info.is_discarded()) return "device printed no JSON";
  if (info.contains("error")) return "no CUDA device: " + info["error"]["message"].get<std::string>();
  if (!info.value("harness_target_runs_here", false)) return h.target + " code does not run here";
  return "";
}

class HarnessOnGpu : public testing::TestWithParam<Harness> {};

TEST_P(HarnessOnGpu, EveryInstancePassesCheck) {
  const Harness& h = GetParam();
  const RunResult dev = run("'" + h.path + "' device");
  const auto info = nlohmann::json::parse(dev.out, nullptr, false);
  ASSERT_FALSE(info.is_discarded()) << "device printed no JSON: " << dev.out;
  if (info.contains("error")) {
    ASSERT_EQ(info["error"]["code"], "no_device") << dev.out;
    GTEST_SKIP() << "no CUDA device: " << info["error"]["message"].get<std::string>();
  }
  if (!info.value("harness_target_runs_here", false))
    GTEST_SKIP() << h.target << " code does not run on " << info["name"].get<std::string>() << " (compute capability "
                 << info["compute_capability"].get<std::string>() << ")";

  std::string cmd = "'" + h.path + "' check --all --timeout-s 120";
  if (const char* f = std::getenv("KPORT_GPU_TEST_FILTER")) cmd += std::string(" --filter '") + f + "'";
  const RunResult chk = run(cmd);
  const auto doc = nlohmann::json::parse(chk.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << "check printed no JSON (exit " << chk.exit_code << ")";
  EXPECT_FALSE(doc.contains("error")) << doc["error"].dump();
  ASSERT_TRUE(doc.contains("results"));
  EXPECT_FALSE(doc["results"].empty());
  for (const auto& r : doc["results"]) {
    const std::string verdict = r.value("verdict", "?");
    EXPECT_TRUE(verdict == "passed" || verdict == "unsupported")
        << r["instance"].get<std::string>() << " " << r["dtype"].get<std::string>() << " "
        << r["shape_text"].get<std::string>() << ": " << verdict << " - " << r.value("reason", std::string());
  }
  EXPECT_EQ(chk.exit_code, 0);
}

// The fp32 GPU references (cuBLAS gemm; cuBLAS gemms around a row softmax for attention),
// which check every large problem, against the CPU double reference on problems small
// enough for both: the same inputs (same seed) give the same verdict and errors that
// differ by fp32 rounding only, far below what the kernels' own rounding makes.
TEST_P(HarnessOnGpu, TheGpuReferencesAgreeWithTheCpuDoubleOne) {
  const Harness& h = GetParam();
  if (const std::string why = skip_reason(h); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::pair<std::string, std::string>> cases = {{"attention", "b=1,h=2,l=128,d=64"},
                                                                  {"attention", "b=2,h=3,l=200,d=128,causal=1"},
                                                                  {"attention", "b=1,h=1,l=77,d=64,causal=1"},
                                                                  {"gemm", "m=96,n=200,k=136"}};
  int compared = 0;
  for (const auto& [family, shape] : cases) {
    auto check = [&](const std::string& reference) {
      const RunResult r = run("'" + h.path + "' check --all --filter '" + family + ".' --dtype bf16 --shape '" + shape +
                              "' --seed 7 --reference " + reference);
      auto doc = nlohmann::json::parse(r.out, nullptr, false);
      EXPECT_FALSE(doc.is_discarded()) << r.out;
      return doc;
    };
    const auto cpu = check("auto"), gpu = check("gpu");
    ASSERT_TRUE(cpu.contains("results") && gpu.contains("results")) << cpu.dump() << gpu.dump();
    ASSERT_EQ(cpu["results"].size(), gpu["results"].size());
    for (std::size_t i = 0; i < cpu["results"].size(); ++i) {
      const auto &a = cpu["results"][i], &b = gpu["results"][i];
      const std::string what = a["instance"].get<std::string>() + " " + shape;
      ASSERT_EQ(a["instance"], b["instance"]);
      ASSERT_EQ(a["verdict"], b["verdict"]) << what << ": " << b.dump();
      if (a["verdict"] != "passed") continue;
      EXPECT_EQ(a["reference"], "cpu_double") << what;
      EXPECT_EQ(b["reference"], family == "gemm" ? "gpu_cublas_fp32_pedantic" : "gpu_cublas_fp32_attention") << what;
      const double ea = a["max_abs_error"].get<double>(), eb = b["max_abs_error"].get<double>();
      EXPECT_NEAR(ea, eb, 1e-4 + 0.02 * ea) << what;
      if (family == "attention") {
        EXPECT_NEAR(a["lse_max_abs_error"].get<double>(), b["lse_max_abs_error"].get<double>(), 1e-4) << what;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 4);
}

// More (batch, head) pairs than one grid axis holds (65536: b = 512, h = 128), which the
// attention variants lay over the grid's z and y (kernels/common/attention_grid.cuh): every
// attention instance of head dim 64 checks them and passes; those of 128 refuse d=64.
TEST_P(HarnessOnGpu, AttentionRunsMoreHeadPairsThanOneGridAxisHolds) {
  const Harness& h = GetParam();
  if (const std::string why = skip_reason(h); !why.empty()) GTEST_SKIP() << why;
  for (const char* shape : {"b=512,h=128,l=64,d=64", "b=512,h=128,l=80,d=64,causal=1"}) {
    const RunResult r =
        run("'" + h.path + "' check --all --filter 'attention.' --dtype bf16 --shape '" + shape + "' --timeout-s 120");
    const auto doc = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << r.out;
    ASSERT_TRUE(doc.contains("results")) << doc.dump();
    int passed = 0;
    for (const auto& c : doc["results"]) {
      const std::string instance = c["instance"].get<std::string>(), verdict = c.value("verdict", "?");
      const bool d64 = instance.find("d128") == std::string::npos;
      EXPECT_EQ(verdict, d64 ? "passed" : "unsupported") << instance << " " << shape << ": " << c.dump();
      passed += verdict == "passed";
    }
    EXPECT_GT(passed, 0) << shape;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, HarnessOnGpu, testing::ValuesIn(harnesses()),
                         [](const testing::TestParamInfo<Harness>& p) { return p.param.target; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HarnessOnGpu);

}  // namespace
