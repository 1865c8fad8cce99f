// Measure requests and unmeasured asks in the store (migration 0010; per library, 0023).
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
  // A pipeline of `repo` (none: "") on commit `sha` with one sm_90a build job; its job id.
  std::int64_t build_of(const std::string& repo, const std::string& sha) {
    NewPipeline p;
    p.reason = PipelineReason::manual;
    p.repo = repo;
    p.commit_sha = sha;
    JobSpec spec;
    spec.kind = JobKind::build;
    spec.commit_sha = sha;
    spec.target = "sm_90a";
    p.jobs.push_back(spec);
    const Pipeline made = ok(m_store->create_pipeline(p));
    JobFilter f;
    f.pipeline_id = made.id;
    return ok(m_store->list_jobs(f)).items.at(0).id;
  }
  std::vector<std::int64_t> builds_of(const std::string& repo) {
    JobFilter f;
    f.kind = JobKind::build;
    f.target = "sm_90a";
    f.repo = repo;
    std::vector<std::int64_t> ids;
    for (const auto& j : ok(m_store->list_jobs(f)).items) ids.push_back(j.id);
    return ids;
  }
};

TEST_F(BestRequestStoreTest, AnOpenRequestOfTheSameKeyIsAnsweredAndCountedInsteadOfQueuedAgain) {
  auto build = pipeline_with_builds({"sm_90a"});
  const std::int64_t build_job = ok(m_store->list_jobs(JobFilter{})).items.front().id;
  auto first = ok(m_store->open_best_request(key(), "", measure_pipeline(build_job)));
  EXPECT_TRUE(first.created);
  EXPECT_EQ(first.request.requests, 1);
  EXPECT_EQ(first.request.job.gpu_model, "NVIDIA H200");
  EXPECT_EQ(first.request.job.depends_on, build_job);
  EXPECT_NE(first.request.job.pipeline_id, build.id) << "a pipeline of its own";
  auto second = ok(m_store->open_best_request(key(), "", measure_pipeline(build_job)));
  EXPECT_FALSE(second.created);
  EXPECT_EQ(second.request.id, first.request.id);
  EXPECT_EQ(second.request.job_id, first.request.job_id);
  EXPECT_EQ(second.request.requests, 2);
  auto other = ok(m_store->open_best_request(key("k=5,m=5,n=5"), "", measure_pipeline(build_job)));
  EXPECT_TRUE(other.created);
  EXPECT_NE(other.request.job_id, first.request.job_id);

  // Once its job ended, the same question opens a new request.
  EXPECT_EQ(ok(m_store->cancel(first.request.job_id)), JobStatus::cancelled);
  auto third = ok(m_store->open_best_request(key(), "", measure_pipeline(build_job)));
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
      auto r = m_store->open_best_request(key(), "", measure_pipeline(build_job));
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
  auto r = m_store->open_best_request(key(), "", two);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_TRUE(ok(m_store->list_best_requests(BestRequestFilter{})).items.empty());
}

// Two libraries asking for one key measure different instances on different builds:
// two requests, each with its own job, each coalescing only with its own.
TEST_F(BestRequestStoreTest, TwoLibrariesAskingForOneKeyAreTwoRequests) {
  const std::int64_t build_a = build_of("lib-a", std::string(40, 'a'));
  const std::int64_t build_b = build_of("lib-b", std::string(40, 'b'));
  auto a = ok(m_store->open_best_request(key(), "lib-a", measure_pipeline(build_a)));
  auto b = ok(m_store->open_best_request(key(), "lib-b", measure_pipeline(build_b)));
  EXPECT_TRUE(a.created);
  EXPECT_TRUE(b.created) << "another library's open request of the key is not this one";
  EXPECT_NE(a.request.id, b.request.id);
  EXPECT_NE(a.request.job_id, b.request.job_id);
  EXPECT_EQ(a.request.repo, "lib-a");
  EXPECT_EQ(b.request.repo, "lib-b");
  EXPECT_EQ(b.request.job.depends_on, build_b);
  auto again = ok(m_store->open_best_request(key(), "lib-a", measure_pipeline(build_a)));
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.request.id, a.request.id);
  EXPECT_EQ(again.request.requests, 2);
  EXPECT_EQ(ok(m_store->get_best_request(b.request.id))->requests, 1);
  // Of no library: a third request, apart from both.
  auto none = ok(m_store->open_best_request(key(), "", measure_pipeline(build_a)));
  EXPECT_TRUE(none.created);
  EXPECT_EQ(none.request.repo, "");

  BestRequestFilter f;
  EXPECT_EQ(ok(m_store->list_best_requests(f)).items.size(), 3u);
  f.repo = "lib-b";
  auto only_b = ok(m_store->list_best_requests(f));
  ASSERT_EQ(only_b.items.size(), 1u);
  EXPECT_EQ(only_b.items[0].id, b.request.id);
  f.repo = "";
  auto of_none = ok(m_store->list_best_requests(f));
  ASSERT_EQ(of_none.items.size(), 1u);
  EXPECT_EQ(of_none.items[0].id, none.request.id);
  f.repo = "lib-c";
  EXPECT_TRUE(ok(m_store->list_best_requests(f)).items.empty());
}

// A job's library is its pipeline's repository, else its commit's: the build a library's
// measure request runs on is found among that library's jobs only.
TEST_F(BestRequestStoreTest, BuildJobsAreListedByTheirLibrary) {
  ok(m_store->upsert_repository("lib-b", "/b.git"));
  Commit c;
  c.sha = std::string(40, 'c');
  c.repo = "lib-b";
  c.time_ms = 5;
  ok(m_store->put_commit(c));
  const std::int64_t a = build_of("lib-a", std::string(40, 'a'));
  const std::int64_t b = build_of("lib-b", std::string(40, 'b'));
  const std::int64_t b_by_commit = build_of("", c.sha);  // no repository named: the commit's
  const std::int64_t none = build_of("", std::string(40, 'd'));
  EXPECT_EQ(builds_of("lib-a"), (std::vector<std::int64_t>{a}));
  EXPECT_EQ(builds_of("lib-b"), (std::vector<std::int64_t>{b_by_commit, b})) << "newest first";
  EXPECT_EQ(builds_of(""), (std::vector<std::int64_t>{none}));
  EXPECT_TRUE(builds_of("lib-c").empty());
  JobFilter any;
  any.kind = JobKind::build;
  EXPECT_EQ(ok(m_store->list_jobs(any)).items.size(), 4u) << "no library asked: every one";
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
  EXPECT_EQ(ok(m_store->open_best_request(key(), "", measure_pipeline(build_job))).request.asked, 5);

  ok(m_store->record_best_asks({BestAsk{key("k=7,m=7,n=7"), 1, 50, 50}}, 2));
  asks = ok(m_store->list_best_asks(""));
  ASSERT_EQ(asks.size(), 2u);
  for (const auto& a : asks) EXPECT_NE(a.key.shape, "k=5,m=5,n=5") << "the least recently asked key goes first";
}

}  // namespace
}  // namespace kport::db::test
