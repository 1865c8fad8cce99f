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
    GTEST_SKIP() << h.target << " code does not run on " << info["name"].get<std::string>()
                 << " (compute capability " << info["compute_capability"].get<std::string>()
                 << ")";

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
        << r["shape_text"].get<std::string>() << ": " << verdict << " - "
        << r.value("reason", std::string());
  }
  EXPECT_EQ(chk.exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Targets, HarnessOnGpu, testing::ValuesIn(harnesses()),
                         [](const testing::TestParamInfo<Harness>& p) { return p.param.target; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HarnessOnGpu);

}  // namespace
