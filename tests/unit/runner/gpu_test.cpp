// GPU discovery and telemetry parsing of the GPU runner; discovery itself on this machine.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kport/runner/gpu.h"

namespace kport::runner {
namespace {

TEST(GpuInventory, ParsesNvidiaSmiLines) {
  auto gpus = parse_inventory_csv(
      "0, NVIDIA H200, GPU-3f1c2a6e-1111-2222-3333-444455556666, 9.0, 143771, 570.124.06, 00000000:19:00.0\n"
      "1, NVIDIA B200, GPU-aaaaaaaa-1111-2222-3333-444455556666, 10.0, [N/A], 580.65.06, 00000000:3B:00.0\n");
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H200");
  EXPECT_EQ((*gpus)[0].uuid, "GPU-3f1c2a6e-1111-2222-3333-444455556666");
  EXPECT_EQ((*gpus)[0].arch, "9.0");
  EXPECT_EQ((*gpus)[0].memory_mib, 143771);
  EXPECT_EQ((*gpus)[0].driver, "570.124.06");
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].arch, "10.0");
  EXPECT_EQ((*gpus)[1].memory_mib, 0);  // [N/A]
}

TEST(GpuInventory, RejectsLinesItCannotRead) {
  auto few = parse_inventory_csv("0, NVIDIA H200, GPU-x\n");
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.error().message.find("expected 7 fields"), std::string::npos);
  auto uuid = parse_inventory_csv("0, NVIDIA H200, 3f1c, 9.0, 1, 570, 0\n");
  ASSERT_FALSE(uuid.ok());
  EXPECT_NE(uuid.error().message.find("uuid"), std::string::npos);
  auto cc = parse_inventory_csv("x, NVIDIA H200, GPU-1, 9.0, 1, 570, 0\n");
  ASSERT_FALSE(cc.ok());
  EXPECT_NE(cc.error().message.find("line 1"), std::string::npos);
  auto empty = parse_inventory_csv("\n");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(GpuTelemetry, KeepsWhatTheGpuReports) {
  auto t = parse_telemetry_csv("1980, 1980, 3201, 41, 118.52, 700.00, P0, 0x0000000000000000\n");
  EXPECT_DOUBLE_EQ(t.at("sm_clock_mhz").as_double(), 1980);
  EXPECT_DOUBLE_EQ(t.at("temperature_c").as_double(), 41);
  EXPECT_DOUBLE_EQ(t.at("power_w").as_double(), 118.52);
  EXPECT_EQ(t.at("pstate").as_string(), "P0");
  EXPECT_EQ(t.at("clock_event_reasons").as_string(), "0x0000000000000000");
  auto partial = parse_telemetry_csv("1755, 1980, 3201, [N/A], [Not Supported], 700.00, P0, 0x0000000000000004");
  EXPECT_FALSE(partial.contains("temperature_c"));
  EXPECT_FALSE(partial.contains("power_w"));
  EXPECT_DOUBLE_EQ(partial.at("sm_clock_mhz").as_double(), 1755);
  EXPECT_TRUE(parse_telemetry_csv("garbage").empty());
}

TEST(GpuInventory, ReadsAnInventoryFileAndRefusesAnIncompleteOne) {
  auto dir = std::filesystem::temp_directory_path() / ("kport-gpus-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ok.json") << R"([{"name":"NVIDIA H200","uuid":"GPU-1","arch":"9.0","sm_count":132}])";
  std::ofstream(dir / "bad.json") << R"([{"name":"NVIDIA H200","arch":"9.0"}])";
  auto ok = gpus_from_file(dir / "ok.json");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->at(0).sm_count, 132);
  auto bad = gpus_from_file(dir / "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("needs name, uuid and arch"), std::string::npos);
  EXPECT_FALSE(gpus_from_file(dir / "absent.json").ok());
  std::filesystem::remove_all(dir);
}

// Discovery through nvidia-smi on this machine: it finds the GPUs there are, or says
// why there are none.
TEST(GpuDiscovery, FindsTheGpusOfThisMachine) {
  auto gpus = discover_gpus("nvidia-smi");
  if (!gpus.ok()) GTEST_SKIP() << "no GPU here: " << gpus.error().message;
  ASSERT_FALSE(gpus->empty());
  for (const auto& g : *gpus) {
    EXPECT_EQ(g.uuid.rfind("GPU-", 0), 0u) << g.uuid;
    EXPECT_NE(g.arch.find('.'), std::string::npos);
    EXPECT_FALSE(g.driver.empty());
  }
  fill_sm_counts(*gpus);
  EXPECT_GT(gpus->front().sm_count, 0);
}

}  // namespace
}  // namespace kport::runner

namespace {

// A machine whose NVIDIA driver is gone (unloaded, or the GPU fell off the bus): nvidia-smi
// runs and says so, through the Env discovery starts its children with.
class DriverGone : public kport::Env {
 public:
  kport::Result<kport::ProcessOutput> run_process(const std::vector<std::string>& argv,
                                                  const kport::ProcessOptions&) override {
    m_argv = argv;
    kport::ProcessOutput out;
    out.exit_code = 9;
    out.output = out.stdout_text = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n";
    return out;
  }
  std::vector<std::string> m_argv;
};

}  // namespace

TEST(GpuDiscovery, ADriverThatDoesNotAnswerIsUnavailableWithWhatNvidiaSmiSaid) {
  DriverGone machine;
  auto gpus = kport::runner::discover_gpus("/bin/true", machine);  // a program that exists; the Env answers for it
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.error().code, kport::Errc::unavailable);
  EXPECT_NE(gpus.error().message.find("exited with 9: NVIDIA-SMI has failed because it couldn't communicate"),
            std::string::npos)
      << gpus.error().message;
  ASSERT_FALSE(machine.m_argv.empty());
  EXPECT_EQ(machine.m_argv.front(), "/bin/true");
  EXPECT_TRUE(kport::runner::read_telemetry("/bin/true", "GPU-1", machine).empty())
      << "no figures rather than wrong ones";
}

// One runner process per GPU on a host: the second to ask waits, told who holds it; the
// lock goes with its holder; GPUs do not share a lock.
TEST(GpuLock, TheSecondTakerOfAGpuIsToldWhoHoldsItUntilItIsLetGo) {
  char tmpl[] = "/tmp/kport-gpu-lock-test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = std::filesystem::path(tmpl) / "locks";  // made by the first taker
  const std::string uuid = "GPU-3f1c2a6e-1111-2222-3333-444455556666";
  {
    auto first = kport::runner::GpuLock::try_take(dir, uuid, "pid 1, runner first, host h");
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_TRUE(first->held());
    EXPECT_EQ(std::filesystem::status(dir).permissions() & std::filesystem::perms::others_write,
              std::filesystem::perms::others_write)
        << "every user's runner may lock in it";
    auto second = kport::runner::GpuLock::try_take(dir, uuid, "pid 2, runner second, host h");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.error().code, kport::Errc::unavailable);
    EXPECT_NE(second.error().message.find("GPU " + uuid +
                                          " is in use by another kport-runner on this host (pid 1, "
                                          "runner first, host h; lock " +
                                          (dir / (uuid + ".lock")).string() + ")"),
              std::string::npos)
        << second.error().message;
    auto other_gpu = kport::runner::GpuLock::try_take(dir, "GPU-aaaaaaaa-1111-2222-3333-444455556666", "pid 2");
    EXPECT_TRUE(other_gpu.ok()) << "another GPU's lock is its own";
    kport::runner::GpuLock moved = std::move(*first);
    EXPECT_TRUE(moved.held());
    EXPECT_FALSE(kport::runner::GpuLock::try_take(dir, uuid, "pid 3").ok()) << "a moved lock is still held";
  }
  auto after = kport::runner::GpuLock::try_take(dir, uuid, "pid 2, runner second, host h");
  EXPECT_TRUE(after.ok()) << "its holder gone, the GPU is free: " << (after.ok() ? "" : after.error().message);
  auto bad = kport::runner::GpuLock::try_take(dir, "../escape", "pid 4");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, kport::Errc::invalid_argument);
  std::filesystem::remove_all(tmpl);
}
