// The Slurm dispatcher's commands go through kport::Env: a test's Env stands in for
// squeue and sbatch failing or hanging, and the dispatcher reports it and submits nothing.
#include "slurm_dispatch.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

namespace kport::coordinator {
namespace {

class ScriptedSlurm : public Env {
 public:
  enum class Mode { cannot_start, hangs, fails };
  explicit ScriptedSlurm(Mode mode) : m_mode(mode) {}
  Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options) override {
    seen.push_back(argv.front());
    timeout = options.timeout;
    if (m_mode == Mode::cannot_start) return make_error(Errc::not_found, argv.front() + " is not on PATH");
    ProcessOutput out;
    if (m_mode == Mode::hangs) {
      out.timed_out = true;
      return out;
    }
    out.exit_code = 1;
    out.output = "squeue: error: Unable to contact slurm controller\n";
    return out;
  }
  std::vector<std::string> seen;
  std::chrono::milliseconds timeout{0};

 private:
  Mode m_mode;
};

class SlurmEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() / ("kport-slurm-env-" + std::to_string(::getpid()));
    std::filesystem::create_directories(m_dir);
    db::Options o;
    o.path = (m_dir / "kport.db").string();
    auto s = db::Store::open(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    m_store = std::move(*s);
  }
  void TearDown() override {
    m_store.reset();
    std::filesystem::remove_all(m_dir);
  }
  SlurmConfig config() {
    SlurmConfig c;
    c.partition = "gpu";
    c.command_timeout_ms = 1234;
    return c;
  }
  std::string last_error(const SlurmDispatcher& d) { return std::string(d.snapshot().at("last_error").as_string()); }
  std::filesystem::path m_dir;
  std::unique_ptr<db::Store> m_store;
};

}  // namespace

TEST_F(SlurmEnvTest, AnSqueueThatCannotStartIsReportedAndNothingIsSubmitted) {
  ScriptedSlurm env(ScriptedSlurm::Mode::cannot_start);
  SlurmDispatcher d(config(), *m_store, env);
  EXPECT_EQ(d.tick(env.now_unix_ms()), 0);
  ASSERT_EQ(env.seen.size(), 1u);
  EXPECT_EQ(env.timeout, std::chrono::milliseconds(1234));
  EXPECT_NE(last_error(d).find("squeue failed"), std::string::npos) << last_error(d);
  EXPECT_NE(last_error(d).find("not on PATH"), std::string::npos) << last_error(d);
}

TEST_F(SlurmEnvTest, AHungSqueueIsCutAtTheLimitAndSaysSo) {
  ScriptedSlurm env(ScriptedSlurm::Mode::hangs);
  SlurmDispatcher d(config(), *m_store, env);
  EXPECT_EQ(d.tick(env.now_unix_ms()), 0);
  EXPECT_NE(last_error(d).find("did not answer within 1234 ms"), std::string::npos) << last_error(d);
}

TEST_F(SlurmEnvTest, AFailingSqueueKeepsItsOwnMessage) {
  ScriptedSlurm env(ScriptedSlurm::Mode::fails);
  SlurmDispatcher d(config(), *m_store, env);
  EXPECT_EQ(d.tick(env.now_unix_ms()), 0);
  EXPECT_NE(last_error(d).find("Unable to contact slurm controller"), std::string::npos) << last_error(d);
}

}  // namespace kport::coordinator
