// The porting build driver on the fixture tree plus two variants made to fail in the
// ways a real port fails: a compiler that hangs (its source includes a FIFO nobody
// writes) and a variant that declares mma_sync but whose code has no mma.sync.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "kport/porting/build_driver.h"
#include "runner_fixture.h"

namespace kport::porting {
namespace {
namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(BuildDriver, HungCompilerTimesOutAndAuditCatchesMissingInstructions) {
  if (!testing::nvcc_available())
    GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
  testing::TempDir dir;
  fs::path kernels = dir.path() / "kernels";
  fs::copy(KPORT_FIXTURE_KERNELS, kernels, fs::copy_options::recursive);
  fs::create_directories(kernels / "cmake");
  fs::copy_file(KPORT_KERNELS_CMAKE, kernels / "cmake" / "kport_kernels.cmake");
  fs::remove_all(kernels / "gemm" / "broken");
  fs::path fifo = dir.path() / "never-written";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  write(kernels / "rmsnorm" / "hang" / "CMakeLists.txt",
        "kport_kernel_variant(FAMILY rmsnorm VARIANT hang FEATURES simt SOURCES rmsnorm_hang.cu)\n");
  write(kernels / "rmsnorm" / "hang" / "rmsnorm_hang.cu", "#include \"" + fifo.string() + "\"\n");
  write(kernels / "gemm" / "fake_mma" / "CMakeLists.txt",
        "kport_kernel_variant(FAMILY gemm VARIANT fake_mma FEATURES mma_sync SOURCES gemm_fake_mma.cu)\n");
  write(kernels / "gemm" / "fake_mma" / "gemm_fake_mma.cu",
        "// Claims tensor cores, uses plain FMAs.\n__global__ void fake(float* c) { c[threadIdx.x] *= 2.f; }\n");

  auto catalog = Catalog::from_file(KPORT_CATALOG_DEFAULT);
  ASSERT_TRUE(catalog.ok());
  auto listing = make_nvcc_probe(fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc")->probe();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  catalog->join(*listing);
  BuildRequest req;
  req.kernels_dir = kernels;
  req.target = "sm_80";
  req.build_dir = dir.path() / "build";
  req.catalog = &*catalog;
  req.jobs = 3;  // the hung compile holds one slot until the limit
  // Generous: a tiny compile can take tens of seconds on a loaded 2-core CI machine.
  req.compile_timeout = std::chrono::seconds(60);
  if (fs::exists("/usr/local/cuda/bin/nvcc")) req.nvcc = "/usr/local/cuda/bin/nvcc";
  req.cuobjdump = (dir.path() / "no-such-cuobjdump").string();
  auto report = build_target(req);
  ASSERT_TRUE(report.ok()) << report.error().message;

  std::map<std::string, VariantRecord> by_id;
  for (const auto& r : report->records) by_id[r.id()] = r;
  ASSERT_EQ(by_id.size(), 5u);
  // Without a disassembler the machine code is not audited, and the record says why.
  EXPECT_FALSE(by_id["softmax.tiny"].sass.audited);
  EXPECT_NE(by_id["softmax.tiny"].sass.reason.find("no-such-cuobjdump does not exist"), std::string::npos)
      << by_id["softmax.tiny"].sass.reason;
  EXPECT_NE(by_id["softmax.tiny"].audit_json.find("\"sass\":{\"audited\":false,\"reason\":"), std::string::npos)
      << by_id["softmax.tiny"].audit_json;
  EXPECT_EQ(by_id["rmsnorm.hang"].status, VariantStatus::timeout) << by_id["rmsnorm.hang"].message;
  EXPECT_NE(by_id["rmsnorm.hang"].message.find("was killed"), std::string::npos);
  EXPECT_EQ(by_id["gemm.fake_mma"].status, VariantStatus::compile_error);
  EXPECT_NE(by_id["gemm.fake_mma"].message.find("declares mma_sync but its generated PTX has no mma.sync"),
            std::string::npos)
      << by_id["gemm.fake_mma"].message;
  EXPECT_FALSE(by_id["gemm.fake_mma"].audit_passed);
  EXPECT_EQ(by_id["gemm.tiny_mma"].status, VariantStatus::ok);
  EXPECT_EQ(by_id["softmax.tiny"].status, VariantStatus::ok);
  EXPECT_EQ(by_id["attention.hopper"].status, VariantStatus::not_applicable);
  // The failures are left out of the harness; the rest still links.
  ASSERT_FALSE(report->harness.empty()) << report->harness_error;
  EXPECT_EQ(report->harness_sha256.size(), 64u);
  EXPECT_FALSE(report->all_ok());
  std::string list;
  testing::run_to_exit(report->harness.string(), {"list"}, list);
  EXPECT_NE(list.find("softmax.tiny"), std::string::npos) << list;
  EXPECT_EQ(list.find("rmsnorm.hang"), std::string::npos) << list;
}

// The fixture tree for sm_90a without the variants that cannot pass there.
struct Sm90Build {
  testing::TempDir dir;
  fs::path kernels = dir.path() / "kernels";
  Result<Catalog> catalog = Catalog::from_file(KPORT_CATALOG_DEFAULT);
  BuildRequest req;

  Sm90Build() {
    fs::copy(KPORT_FIXTURE_KERNELS, kernels, fs::copy_options::recursive);
    fs::create_directories(kernels / "cmake");
    fs::copy_file(KPORT_KERNELS_CMAKE, kernels / "cmake" / "kport_kernels.cmake");
    fs::remove_all(kernels / "gemm" / "broken");
    fs::remove_all(kernels / "attention" / "hopper");  // declares wgmma, has none: fails the PTX audit
    std::string nvcc = fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc";
    auto listing = make_nvcc_probe(nvcc)->probe();
    if (catalog.ok() && listing.ok()) catalog->join(*listing);
    req.kernels_dir = kernels;
    req.target = "sm_90a";
    req.build_dir = dir.path() / "build";
    req.catalog = catalog.ok() ? &*catalog : nullptr;
    req.jobs = 2;
    req.compile_timeout = std::chrono::seconds(120);
    req.nvcc = nvcc;
  }
};

// The driver runs the disassembler on each variant's objects and audits what it prints.
// The stand-in prints real cuobjdump output captured on the GPU machine: a plain (simt)
// function for gemm.tiny_mma, as if its mma.sync path had been lowered away, the
// mma_sync kernel for gemm.real_mma, and the spilling kernel for softmax.tiny.
TEST(BuildDriver, SassAuditFailsAVariantWhoseMachineCodeLostItsPath) {
  if (!testing::nvcc_available())
    GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
  Sm90Build b;
  ASSERT_TRUE(b.catalog.ok());
  fs::create_directories(b.kernels / "gemm" / "real_mma");
  fs::copy_file(b.kernels / "gemm" / "tiny_mma" / "gemm_tiny_mma_sm80.cu",
                b.kernels / "gemm" / "real_mma" / "gemm_real_mma_sm80.cu");
  write(
      b.kernels / "gemm" / "real_mma" / "CMakeLists.txt",
      "kport_kernel_variant(FAMILY gemm VARIANT real_mma FEATURES mma_sync ldmatrix SOURCES gemm_real_mma_sm80.cu)\n");
  const std::string fx = KPORT_SASS_FIXTURES;
  fs::path tool = b.dir.path() / "cuobjdump";
  write(tool,
        "#!/bin/sh\n[ \"$1\" = -sass ] || exit 2\ncase \"$2\" in\n"
        "  *tiny_mma*) cat " +
            fx +
            "/kport_softmax_simt_sm_90a__softmax_simt.sass ;;\n"
            "  *real_mma*) cat " +
            fx +
            "/kport_gemm_mma_sync_sm_90a__gemm_mma_sync_sm80.sass ;;\n"
            "  *) cat " +
            fx + "/spill__sm_90a.sass ;;\nesac\n");
  fs::permissions(tool, fs::perms::owner_all);
  b.req.cuobjdump = tool.string();
  auto report = build_target(b.req);
  ASSERT_TRUE(report.ok()) << report.error().message;
  std::map<std::string, VariantRecord> by_id;
  for (const auto& r : report->records) by_id[r.id()] = r;
  ASSERT_EQ(by_id.size(), 3u);

  const auto& lost = by_id["gemm.tiny_mma"];
  EXPECT_EQ(lost.status, VariantStatus::compile_error) << lost.message;
  EXPECT_NE(lost.message.find("declares mma_sync but its sm_90a machine code has no HMMA"), std::string::npos)
      << lost.message;
  EXPECT_FALSE(lost.audit_passed);
  EXPECT_TRUE(lost.sass.audited);
  EXPECT_NE(lost.audit_json.find("\"ptx\":{\"source\":\"ptx\""), std::string::npos)
      << "the PTX audit passed and is kept";

  const auto& real = by_id["gemm.real_mma"];
  EXPECT_EQ(real.status, VariantStatus::ok) << real.message;
  ASSERT_TRUE(real.sass.audited) << real.sass.reason;
  EXPECT_EQ(real.sass.count("mma_sync"), 32);
  EXPECT_EQ(real.sass.count("ldmatrix"), 12);
  EXPECT_TRUE(real.audit_passed);

  const auto& spilled = by_id["softmax.tiny"];
  EXPECT_EQ(spilled.status, VariantStatus::ok) << "local memory is counted and diffed, not a failed path";
  EXPECT_EQ(spilled.sass.count("local_store"), 64);
  EXPECT_EQ(spilled.sass.count("local_load"), 29);

  // The variant whose machine code failed is left out of the harness.
  ASSERT_FALSE(report->harness.empty()) << report->harness_error;
  EXPECT_TRUE(report->validatable());
  std::string list;
  testing::run_to_exit(report->harness.string(), {"list"}, list);
  EXPECT_NE(list.find("gemm.real_mma"), std::string::npos) << list;
  EXPECT_EQ(list.find("gemm.tiny_mma"), std::string::npos) << list;
}

// With the toolkit's own disassembler (the GPU machine has it): the mma.sync fixture's
// machine code really holds HMMA for sm_90a.
TEST(BuildDriver, RealDisassemblerAuditsTheMachineCode) {
  if (!testing::nvcc_available())
    GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
  if (!testing::disassembler_available()) GTEST_SKIP() << "no cuobjdump next to nvcc or on PATH";
  Sm90Build b;
  ASSERT_TRUE(b.catalog.ok());
  auto report = build_target(b.req);
  ASSERT_TRUE(report.ok()) << report.error().message;
  std::map<std::string, VariantRecord> by_id;
  for (const auto& r : report->records) by_id[r.id()] = r;
  const auto& mma = by_id["gemm.tiny_mma"];
  EXPECT_EQ(mma.status, VariantStatus::ok) << mma.message;
  ASSERT_TRUE(mma.sass.audited) << mma.sass.reason;
  EXPECT_GE(mma.sass.count("mma_sync"), 1);
  EXPECT_EQ(mma.sass.count("local_store"), 0);
  EXPECT_TRUE(by_id["softmax.tiny"].sass.audited);
  EXPECT_EQ(by_id["softmax.tiny"].sass.count("mma_sync"), 0);
  EXPECT_TRUE(report->all_ok()) << report->summary();
}

TEST(BuildDriver, TargetTheToolkitCannotBuildIsRefusedBeforeAnyCompile) {
  auto catalog = Catalog::from_file(KPORT_CATALOG_DEFAULT);
  ASSERT_TRUE(catalog.ok());
  catalog->join(ToolkitListing{"13.0", {"sm_80"}, {"compute_80"}});
  BuildRequest req;
  req.kernels_dir = KPORT_FIXTURE_KERNELS;
  req.target = "sm_100a";
  req.build_dir = "/nonexistent/never-created";
  req.catalog = &*catalog;
  auto report = build_target(req);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, Errc::unprocessable);
  EXPECT_NE(report.error().message.find("cannot build sm_100a"), std::string::npos);
  req.target = "volta";
  EXPECT_EQ(build_target(req).error().code, Errc::invalid_argument);
}

// The machine of a build whose disk fills while the harness links: the link step fails
// with the linker's message, injected through kport::Env; every other child runs.
class FullDiskAtLink : public Env {
 public:
  explicit FullDiskAtLink(std::string link_target) : m_link(std::move(link_target)) {}
  Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options) override {
    // The link (`/bin/sh -c "... -o bin/TARGET ..."`), not a compile or ninja's answers.
    if (argv.size() == 3 && argv[0] == "/bin/sh" && argv[2].find(" -o bin/" + m_link + " ") != std::string::npos) {
      m_links.fetch_add(1);
      ProcessOutput out;
      out.exit_code = 1;
      out.output = "/usr/bin/ld: final link failed: No space left on device\n";
      return out;
    }
    return Env::run_process(argv, options);
  }
  int links() const { return m_links.load(); }

 private:
  std::string m_link;
  std::atomic<int> m_links{0};
};

// A fault injected through the Env the driver's children start through: the variants
// that compiled keep their records, and the report says why there is no harness.
TEST(BuildDriver, AFailedLinkKeepsTheVariantsThatBuiltAndSaysWhy) {
  if (!testing::nvcc_available())
    GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
  Sm90Build b;
  ASSERT_TRUE(b.catalog.ok()) << b.catalog.error().message;
  FullDiskAtLink machine("kport-harness-sm_90a");
  b.req.env = &machine;
  b.req.cuobjdump = (b.dir.path() / "no-such-cuobjdump").string();
  auto report = build_target(b.req);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(machine.links(), 1);
  EXPECT_TRUE(report->harness.empty());
  EXPECT_NE(report->harness_error.find("linking kport-harness-sm_90a failed"), std::string::npos)
      << report->harness_error;
  EXPECT_NE(report->harness_error.find("No space left on device"), std::string::npos) << report->harness_error;
  EXPECT_GE(report->built(), 1) << report->summary();
  EXPECT_FALSE(report->all_ok()) << "no harness, so not all ok";
}

// The machine of a build that holds each compile of one variant's sources until the other
// has started too (or 60 s have passed), and counts how many ran at once.
class PairedCompiles : public Env {
 public:
  Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options) override {
    // A compile of one of the pair, or its PTX pass.
    const bool unit = argv.size() == 3 &&
                      (argv[2].find(" -c ") != std::string::npos || argv[2].find(" -ptx ") != std::string::npos) &&
                      argv[2].find("softmax_pair_") != std::string::npos;
    if (!unit) {
      {
        std::lock_guard lock(m_mutex);
        if (argv.size() > 3 && argv[1] == "-C" && !argv[3].starts_with("-")) m_ninja.push_back(argv);
        if (argv.size() == 3 && argv[0] == "/bin/sh") m_shell.push_back(argv[2]);
      }
      return Env::run_process(argv, options);
    }
    {
      std::lock_guard lock(m_mutex);
      m_shell.push_back(argv[2]);
    }
    {
      std::unique_lock lock(m_mutex);
      m_most = std::max(m_most, ++m_running);
      m_changed.notify_all();
      m_changed.wait_for(lock, std::chrono::seconds(60), [&] { return m_running >= 4; });
    }
    auto out = Env::run_process(argv, options);
    std::lock_guard lock(m_mutex);
    --m_running;
    return out;
  }
  // Every command the build ran through the shell (compiles, PTX passes, the link), in order.
  std::vector<std::string> shell_runs() {
    std::lock_guard lock(m_mutex);
    return m_shell;
  }
  // Every `ninja -C DIR TARGET...` the build ran, in order.
  std::vector<std::vector<std::string>> ninja_runs() {
    std::lock_guard lock(m_mutex);
    return m_ninja;
  }
  int most_at_once() {
    std::lock_guard lock(m_mutex);
    return m_most;
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_running = 0, m_most = 0;
  std::vector<std::vector<std::string>> m_ninja;
  std::vector<std::string> m_shell;
};

// A variant split into several units is compiled all at once, not one unit after another
// while the pool's other workers idle: gemm_fp8.wgmma_tma, four units, was a pipeline
// build's long pole. One worker, so only the variant's own threads can overlap them.
TEST(BuildDriver, AVariantsSourcesCompileAtOnce) {
  if (!testing::nvcc_available())
    GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
  Sm90Build b;
  ASSERT_TRUE(b.catalog.ok()) << b.catalog.error().message;
  write(
      b.kernels / "softmax" / "pair" / "CMakeLists.txt",
      "kport_kernel_variant(FAMILY softmax VARIANT pair FEATURES simt SOURCES softmax_pair_a.cu softmax_pair_b.cu)\n");
  write(b.kernels / "softmax" / "pair" / "softmax_pair_a.cu",
        "__global__ void pair_a(float* x) { x[threadIdx.x] += 1.f; }\n");
  write(b.kernels / "softmax" / "pair" / "softmax_pair_b.cu",
        "__global__ void pair_b(float* x) { x[threadIdx.x] *= 2.f; }\n");
  PairedCompiles machine;
  b.req.env = &machine;
  b.req.jobs = 1;
  b.req.cuobjdump = (b.dir.path() / "no-such-cuobjdump").string();
  auto report = build_target(b.req);
  ASSERT_TRUE(report.ok()) << report.error().message;
  // Both units compiled at once, each with its PTX pass beside it.
  EXPECT_EQ(machine.most_at_once(), 4);
  bool found = false;
  for (const auto& r : report->records)
    if (r.id() == "softmax.pair") {
      found = true;
      EXPECT_EQ(r.status, VariantStatus::ok) << r.message;
      EXPECT_NE(r.audit_json.find("\"ptx\""), std::string::npos) << r.audit_json;
    }
  EXPECT_TRUE(found) << report->summary();
  // The harness's own parts (its core, references, main, their libraries) built beside the
  // variants in one ninja run, none of a variant's objects among them; then the link ran
  // by itself, last, and ninja never compiled a variant's object a second time.
  const auto runs = machine.ninja_runs();
  ASSERT_EQ(runs.size(), 1u);
  const auto& own = runs.front();
  ASSERT_GT(own.size(), 3u);
  for (std::size_t i = 3; i < own.size(); ++i) {
    EXPECT_TRUE(own[i].ends_with(".o") || own[i].ends_with(".a") || own[i].ends_with(".so")) << own[i];
    for (const char* family : {"/kport_gemm_", "/kport_softmax_", "/kport_rmsnorm_", "/kport_attention_"})
      EXPECT_EQ(own[i].find(family), std::string::npos) << own[i] << " is a variant's object";
  }
  const auto shell = machine.shell_runs();
  ASSERT_FALSE(shell.empty());
  EXPECT_NE(shell.back().find(" -o bin/kport-harness-sm_90a "), std::string::npos) << shell.back();
  EXPECT_FALSE(report->harness.empty()) << report->harness_error;
  std::string list;
  testing::run_to_exit(report->harness.string(), {"list"}, list);
  EXPECT_NE(list.find("softmax.pair"), std::string::npos) << list;
}

// A second build of the same tree in the same folder reuses every compile (nothing any of
// them read has changed), and a source changed since is compiled again, alone.
TEST(BuildDriver, ARebuildCompilesOnlyWhatChanged) {
  if (!testing::nvcc_available())
    GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
  Sm90Build b;
  ASSERT_TRUE(b.catalog.ok()) << b.catalog.error().message;
  b.req.cuobjdump = (b.dir.path() / "no-such-cuobjdump").string();
  auto first = build_target(b.req);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_FALSE(first->harness.empty()) << first->harness_error;

  auto compiles = [](PairedCompiles& m) {
    int n = 0;
    for (const auto& c : m.shell_runs())
      if (c.find(" -c ") != std::string::npos && c.find(" -ptx") == std::string::npos) ++n;
    return n;
  };
  PairedCompiles again;
  b.req.env = &again;
  auto second = build_target(b.req);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(compiles(again), 0);
  for (const auto& r : second->records) {
    if (r.status == VariantStatus::ok) {
      EXPECT_EQ(r.cache, "hit") << r.id();
    }
  }
  EXPECT_FALSE(second->harness.empty()) << second->harness_error;

  std::ofstream(b.kernels / "softmax" / "tiny" / "softmax_tiny.cu", std::ios::app) << "// changed\n";
  PairedCompiles changed;
  b.req.env = &changed;
  auto third = build_target(b.req);
  ASSERT_TRUE(third.ok()) << third.error().message;
  EXPECT_EQ(compiles(changed), 1);
  EXPECT_FALSE(third->harness.empty()) << third->harness_error;
}

}  // namespace
}  // namespace kport::porting
