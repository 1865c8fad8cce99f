// Helpers for the store tests: a temp directory per test, a store on a fake clock,
// and ready-made runners and pipelines.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kport/db/store.h"

namespace kport::db::test {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Opens (or re-opens) the store on m_dir/kport.db with the fake clock.
  std::unique_ptr<Store> open_store();
  Options options();

  Runner build_runner(const std::string& name, std::vector<std::string> targets);
  Runner gpu_runner(const std::string& name, const std::string& arch, const std::string& model = "NVIDIA H200",
                    const std::string& driver = "570.86");
  // A pipeline with one build job per target.
  Pipeline pipeline_with_builds(const std::vector<std::string>& targets, int max_attempts = 3);
  // Build records (status ok) of `job`'s current attempt, one per (family, variant).
  static std::vector<BuildRecord> built(const Job& job,
                                        const std::vector<std::pair<std::string, std::string>>& variants);
  Job job(std::int64_t id);

  std::filesystem::path m_dir;
  std::shared_ptr<std::atomic<std::int64_t>> m_now = std::make_shared<std::atomic<std::int64_t>>(1'000'000);
  // The store's Env: the machine's, with the clock the tests step.
  class SteppedClock : public Env {
   public:
    explicit SteppedClock(std::shared_ptr<std::atomic<std::int64_t>> now) : m_at(std::move(now)) {}
    std::int64_t now_unix_ms() override { return m_at->load(); }

   private:
    std::shared_ptr<std::atomic<std::int64_t>> m_at;
  };
  SteppedClock m_env{m_now};
  std::unique_ptr<Store> m_store;
};

// The bytes of a file ("" when it cannot be read).
std::string slurp(const std::filesystem::path& path);

// Unwraps a Result in a test, failing with its message.
template <typename T>
T ok(Result<T> r) {
  // Throwing ends the test with the message; gtest reports it as a failure.
  if (!r.ok()) throw std::runtime_error("unexpected error: " + r.error().message);
  return std::move(r).value();
}

inline void ok(Status s) { ASSERT_TRUE(s.ok()) << s.error().message; }

}  // namespace kport::db::test
