#include "test_support.h"

#include <cstdio>

#include "kport/common/crypto.h"

namespace kport::db::test {

std::string slurp(const std::filesystem::path& path) {
  std::string out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  std::fclose(f);
  return out;
}

void StoreTest::SetUp() {
  m_dir = std::filesystem::temp_directory_path() / ("kport-db-test-" + crypto::random_token("", 8));
  std::filesystem::create_directories(m_dir);
  m_store = open_store();
  ok(m_store->upsert_target(Target{"sm_90a", "9.0", R"({"wgmma":true})", "12.8", 0, false}));
  ok(m_store->upsert_target(Target{"sm_80", "8.0", R"({"mma_sync":true})", "12.8", 0, false}));
}

void StoreTest::TearDown() {
  m_store.reset();
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
}

Options StoreTest::options() {
  Options o;
  o.path = (m_dir / "kport.db").string();
  o.artifact_dir = (m_dir / "artifacts").string();
  o.lease_ms = 10'000;
  o.runner_online_ms = 60'000;
  o.env = &m_env;
  // Backoff 1 s after the first failed attempt, doubling; the jitter draw at its top,
  // so every delay is the full one and the tests can step the clock exactly.
  o.retry = RetryPolicy{1'000, 8'000};
  o.jitter = [] { return 1.0; };
  return o;
}

std::unique_ptr<Store> StoreTest::open_store() {
  auto s = Store::open(options());
  if (!s.ok()) {
    ADD_FAILURE() << s.error().message;
    return nullptr;
  }
  return std::move(s).value();
}

Runner StoreTest::build_runner(const std::string& name, std::vector<std::string> targets) {
  NewRunner n;
  n.name = name;
  n.role = RunnerRole::build;
  n.caps.toolkit = "12.8";
  n.caps.targets = std::move(targets);
  n.caps.cores = 8;
  return ok(m_store->register_runner(n)).runner;
}

Runner StoreTest::gpu_runner(const std::string& name, const std::string& arch, const std::string& model,
                             const std::string& driver) {
  NewRunner n;
  n.name = name;
  n.role = RunnerRole::gpu;
  n.caps.gpu_model = model;
  n.caps.gpu_uuid = "GPU-" + name;
  n.caps.arch = arch;
  n.caps.driver = driver;
  return ok(m_store->register_runner(n)).runner;
}

std::vector<BuildRecord> StoreTest::built(const Job& job,
                                          const std::vector<std::pair<std::string, std::string>>& variants) {
  std::vector<BuildRecord> records;
  for (const auto& [family, variant] : variants) {
    BuildRecord r;
    r.job_id = job.id;
    r.attempt = job.attempt;
    r.family = family;
    r.variant = variant;
    records.push_back(r);
  }
  return records;
}

Pipeline StoreTest::pipeline_with_builds(const std::vector<std::string>& targets, int max_attempts) {
  NewPipeline p;
  p.reason = PipelineReason::push;
  p.repo = "kernels";
  p.ref = "refs/heads/main";
  p.commit_sha = std::string(40, 'a');
  for (const auto& t : targets) {
    JobSpec spec;
    spec.kind = JobKind::build;
    spec.commit_sha = p.commit_sha;
    spec.target = t;
    spec.max_attempts = max_attempts;
    p.jobs.push_back(spec);
  }
  return ok(m_store->create_pipeline(p));
}

Job StoreTest::job(std::int64_t id) {
  auto j = ok(m_store->get_job(id));
  EXPECT_TRUE(j.has_value()) << "job " << id;
  return j.value_or(Job{});
}

}  // namespace kport::db::test
