// The harness SDK installed from this build into a fresh prefix and the fixture library
// (fixture/) built against it for one target, as an outside library does: shared by the SDK's
// integration test and its GPU test. The including test target defines KPORT_CMAKE,
// KPORT_BUILD_DIR, KPORT_MAKE_PROGRAM, KPORT_NVCC, KPORT_CXX, KPORT_CCACHE and
// KPORT_SDK_FIXTURE (tests/integration/harness_sdk/CMakeLists.txt).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace kport::test_sdk {

namespace fs = std::filesystem;

struct Ran {
  int exit_code = -1;
  std::string out;  // stdout: the harness's one JSON document
  std::string err;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv[0] (a path) with argv, stdout and stderr captured through files in `dir`, named
// by this process: ctest runs each test of a suite as its own process, at once, in one `dir`.
inline Ran run(const std::vector<std::string>& argv, const fs::path& dir) {
  const std::string tag = "run." + std::to_string(getpid());
  const fs::path out = dir / (tag + ".stdout"), err = dir / (tag + ".stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Ran r;
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    r.err = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  std::error_code ec;
  fs::remove(out, ec);
  fs::remove(err, ec);
  return r;
}

inline std::string describe(const std::vector<std::string>& argv, const Ran& r) {
  std::string text;
  for (const std::string& a : argv) text += a + " ";
  return text + "exited " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// The cmake configure command of a project at `source` into `build` against the SDK at
// `prefix`, with this build's compilers (and ccache when it has one).
inline std::vector<std::string> configure_command(const fs::path& source, const fs::path& build, const fs::path& prefix,
                                                  const std::vector<std::string>& extra) {
  std::vector<std::string> c = {KPORT_CMAKE,
                                "-S",
                                source.string(),
                                "-B",
                                build.string(),
                                "-G",
                                "Ninja",
                                std::string("-DCMAKE_MAKE_PROGRAM=") + KPORT_MAKE_PROGRAM,
                                "-DCMAKE_BUILD_TYPE=Release",
                                std::string("-DCMAKE_CUDA_COMPILER=") + KPORT_NVCC,
                                std::string("-DCMAKE_CXX_COMPILER=") + KPORT_CXX,
                                "-DCMAKE_PREFIX_PATH=" + prefix.string()};
  if (!std::string(KPORT_CCACHE).empty()) {
    c.push_back(std::string("-DCMAKE_CXX_COMPILER_LAUNCHER=") + KPORT_CCACHE);
    c.push_back(std::string("-DCMAKE_CUDA_COMPILER_LAUNCHER=") + KPORT_CCACHE);
  }
  c.insert(c.end(), extra.begin(), extra.end());
  return c;
}

// Installs the SDK into work/prefix and builds the fixture for `target` in work/build; its
// harness is then work/build/warp_softmax_harness. Returns "" or the failing step's output.
inline std::string install_and_build_fixture(const fs::path& work, const std::string& target) {
  const fs::path prefix = work / "prefix", build = work / "build";
  const std::vector<std::vector<std::string>> steps = {
      {KPORT_CMAKE, "--install", KPORT_BUILD_DIR, "--component", "harness-sdk", "--prefix", prefix.string()},
      configure_command(KPORT_SDK_FIXTURE, build, prefix, {"-DWARP_SOFTMAX_TARGET=" + target}),
      {KPORT_CMAKE, "--build", build.string()}};
  for (const auto& step : steps) {
    const Ran r = run(step, work);
    if (r.exit_code != 0) return describe(step, r);
  }
  return "";
}

}  // namespace kport::test_sdk
