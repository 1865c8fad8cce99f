// Measure requests and unmeasured asks in the store (migration 0010).
#include <thread>

#include "test_support.h"

namespace kport::db::test {
namespace {

class BestRequestStoreTest : public StoreTest {
 protected:
  // A measure pipeline: one check job pinned to the H200, on build job `build`.
  NewPipeline measure_pipeline(std::int64_t build) {
    NewPipeline p;
    p.reason = PipelineReason::manual;
    p.commit_sha = std::string(40, 'a');
    p.note = "measure";
    JobSpec spec;
    spec.kind = JobKind::check;
    spec.commit_sha = p.commit_sha;
    spec.target = "sm_90a";
    spec.arch = "9.0";
    spec.gpu_model = "NVIDIA H200";
    spec.depends_on = build;
    spec.payload_json = R"({"cases":[{"family":"gemm","dtype":"bf16","shape":"m=3,n=3,k=3"}],"best_request":{}})";
    p.jobs.push_back(spec);
    return p;
  }
  static BestKey key(const std::string& shape = "k=3,m=3,n=3") { return BestKey{"NVIDIA H200", "gemm", "bf16", shape}; }
};

TEST_F(BestRequestStoreTest, AnOpenRequestOfTheSameKeyIsAnsweredAndCountedInsteadOfQueuedAgain) {
  auto build = pipeline_with_builds({"sm_90a"});
  const std::int64_t build_job = ok(m_store->list_jobs(JobFilter{})).items.front().id;
  auto first = ok(m_store->open_best_request(key(), measure_pipeline(build_job)));
  EXPECT_TRUE(first.created);
  EXPECT_EQ(first.request.requests, 1);
  EXPECT_EQ(first.request.job.gpu_model, "NVIDIA H200");
  EXPECT_EQ(first.request.job.depends_on, build_job);
  EXPECT_NE(first.request.job.pipeline_id, build.id) << "a pipeline of its own";
  auto second = ok(m_store->open_best_request(key(), measure_pipeline(build_job)));
  EXPECT_FALSE(second.created);
  EXPECT_EQ(second.request.id, first.request.id);
  EXPECT_EQ(second.request.job_id, first.request.job_id);
  EXPECT_EQ(second.request.requests, 2);
  auto other = ok(m_store->open_best_request(key("k=5,m=5,n=5"), measure_pipeline(build_job)));
  EXPECT_TRUE(other.created);
  EXPECT_NE(other.request.job_id, first.request.job_id);

  // Once its job ended, the same question opens a new request.
  EXPECT_EQ(ok(m_store->cancel(first.request.job_id)), JobStatus::cancelled);
  auto third = ok(m_store->open_best_request(key(), measure_pipeline(build_job)));
  EXPECT_TRUE(third.created);
  EXPECT_NE(third.request.id, first.request.id);
  auto page = ok(m_store->list_best_requests(BestRequestFilter{}));
  ASSERT_EQ(page.items.size(), 3u);
  EXPECT_EQ(page.items.front().id, third.request.id) << "newest first";
  EXPECT_EQ(ok(m_store->get_best_request(first.request.id))->job.status, JobStatus::cancelled);
  EXPECT_FALSE(ok(m_store->get_best_request(999)).has_value());
}

TEST_F(BestRequestStoreTest, RacingRequestsOfOneKeyQueueOneJob) {
  pipeline_with_builds({"sm_90a"});
  const std::int64_t build_job = ok(m_store->list_jobs(JobFilter{})).items.front().id;
  std::atomic<int> created{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      auto r = m_store->open_best_request(key(), measure_pipeline(build_job));
      if (!r.ok())
        ++failed;
      else if (r->created)
        ++created;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(created.load(), 1);
  auto page = ok(m_store->list_best_requests(BestRequestFilter{}));
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items.front().requests, 8);
  JobFilter checks;
  checks.kind = JobKind::check;
  EXPECT_EQ(ok(m_store->list_jobs(checks)).items.size(), 1u);
}

TEST_F(BestRequestStoreTest, ARequestQueuesExactlyOneCheckJob) {
  pipeline_with_builds({"sm_90a"});
  NewPipeline two = measure_pipeline(1);
  two.jobs.push_back(two.jobs.front());
  auto r = m_store->open_best_request(key(), two);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_TRUE(ok(m_store->list_best_requests(BestRequestFilter{})).items.empty());
}

TEST_F(BestRequestStoreTest, AsksAddUpPerKeyAndTheLeastRecentAreForgottenBeyondTheBound) {
  ok(m_store->record_best_asks({BestAsk{key(), 2, 10, 20}, BestAsk{key("k=5,m=5,n=5"), 1, 15, 15}}));
  ok(m_store->record_best_asks({BestAsk{key(), 3, 30, 40}}));
  auto asks = ok(m_store->list_best_asks("NVIDIA H200"));
  ASSERT_EQ(asks.size(), 2u);
  EXPECT_EQ(asks[0].key.shape, "k=3,m=3,n=3");
  EXPECT_EQ(asks[0].asks, 5);
  EXPECT_EQ(asks[0].first_ms, 10);
  EXPECT_EQ(asks[0].last_ms, 40);
  EXPECT_TRUE(ok(m_store->list_best_asks("NVIDIA B200")).empty());
  // A request of the key shows the stored asks.
  pipeline_with_builds({"sm_90a"});
  const std::int64_t build_job = ok(m_store->list_jobs(JobFilter{})).items.front().id;
  EXPECT_EQ(ok(m_store->open_best_request(key(), measure_pipeline(build_job))).request.asked, 5);

  ok(m_store->record_best_asks({BestAsk{key("k=7,m=7,n=7"), 1, 50, 50}}, 2));
  asks = ok(m_store->list_best_asks(""));
  ASSERT_EQ(asks.size(), 2u);
  for (const auto& a : asks) EXPECT_NE(a.key.shape, "k=5,m=5,n=5") << "the least recently asked key goes first";
}

}  // namespace
}  // namespace kport::db::test
