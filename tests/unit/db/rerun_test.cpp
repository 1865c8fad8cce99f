// Re-runs in the queue's state machine, and where a queued job stands (what the
// pipeline page says about why it waits).
#include "test_support.h"

namespace kport::db::test {

using RerunTest = StoreTest;

TEST_F(RerunTest, AFailedJobRunsAgainWithItsAttemptsCountedOn) {
  auto p = pipeline_with_builds({"sm_90a"}, 1);
  auto b = build_runner("b", {"sm_90a"});
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  ok(m_store->append_job_log(c->job.id, b.id, 1, "first attempt\n"));
  ASSERT_EQ(ok(m_store->fail(c->job.id, b.id, 1, "nvcc crashed")).status, JobStatus::failed);
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::failed);

  Job again = ok(m_store->rerun_job(c->job.id, 2));
  EXPECT_EQ(again.status, JobStatus::queued);
  EXPECT_EQ(again.attempt, 1) << "the attempt count goes on";
  EXPECT_EQ(again.max_attempts, 3) << "two more attempts allowed";
  EXPECT_FALSE(again.failure_reason.has_value());
  EXPECT_FALSE(again.finished_ms.has_value());
  EXPECT_FALSE(again.started_ms.has_value());
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::queued);

  auto second = ok(m_store->claim(b.id));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->job.attempt, 2);
  ok(m_store->append_job_log(c->job.id, b.id, 2, "second attempt\n"));
  ASSERT_EQ(ok(m_store->complete(c->job.id, b.id, 2, false)).status, JobStatus::succeeded);
  auto log = ok(m_store->job_log(c->job.id));
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].attempt, 1);
  EXPECT_EQ(log[1].attempt, 2);
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::succeeded);
}

TEST_F(RerunTest, OnlyFailedOrCancelledJobsRunAgain) {
  auto p = pipeline_with_builds({"sm_90a", "sm_80"});
  auto b = build_runner("b", {"sm_90a"});
  auto queued = ok(m_store->list_jobs(JobFilter{p.id, {}, JobKind::build, {}, "sm_80", {}, 100})).items.at(0);
  auto r = m_store->rerun_job(queued.id, 3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::conflict);
  EXPECT_NE(r.error().message.find("is queued"), std::string::npos) << r.error().message;
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  EXPECT_EQ(m_store->rerun_job(c->job.id, 3).error().code, Errc::conflict) << "running";
  ASSERT_TRUE(m_store->complete(c->job.id, b.id, 1, false).ok());
  EXPECT_EQ(m_store->rerun_job(c->job.id, 3).error().code, Errc::conflict) << "succeeded";
  EXPECT_EQ(m_store->rerun_job(999, 3).error().code, Errc::not_found);
  EXPECT_EQ(m_store->rerun_pipeline(p.id, 3).error().code, Errc::conflict) << "nothing failed yet";
  EXPECT_EQ(m_store->rerun_pipeline(999, 3).error().code, Errc::not_found);
  EXPECT_EQ(m_store->rerun_job(c->job.id, 0).error().code, Errc::invalid_argument);
}

TEST_F(RerunTest, APipelineRerunQueuesEveryFailedAndCancelledJobAndReopensItsReport) {
  ok(m_store->upsert_repository("kernels", "/srv/kernels.git"));
  NewPipeline np;
  np.reason = PipelineReason::push;
  np.repo = "kernels";
  np.commit_sha = std::string(40, 'c');
  for (const char* t : {"sm_90a", "sm_80", "sm_100a"})
    np.jobs.push_back(JobSpec{JobKind::build, np.commit_sha, t, {}, {}, {}, 3, ""});
  auto p = ok(m_store->create_pipeline(np));
  auto b = build_runner("b", {"sm_90a", "sm_80", "sm_100a"});
  auto first = ok(m_store->claim(b.id));
  ASSERT_TRUE(first);
  ASSERT_TRUE(m_store->fail(first->job.id, b.id, 1, "compile error").ok());
  auto second = ok(m_store->claim(b.id));
  ASSERT_TRUE(second);
  ASSERT_TRUE(m_store->complete(second->job.id, b.id, 1, false).ok());
  ASSERT_EQ(ok(m_store->cancel_pipeline(p.id)), 1);
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::failed);
  ASSERT_TRUE(ok(m_store->advance_report(p.id, "completed", {})));

  auto ids = ok(m_store->rerun_pipeline(p.id, 3));
  ASSERT_EQ(ids.size(), 2u) << "the failed and the cancelled build, not the one that succeeded";
  EXPECT_EQ(job(second->job.id).status, JobStatus::succeeded);
  for (auto id : ids) EXPECT_EQ(job(id).status, JobStatus::queued);
  auto open = ok(m_store->pending_reports());
  ASSERT_EQ(open.size(), 1u) << "the completed report is reported again";
  EXPECT_EQ(open[0].pipeline.id, p.id);
  EXPECT_FALSE(open[0].reported.has_value()) << "from the start: a new check run";
  EXPECT_FALSE(open[0].check_run_id.has_value());
}

TEST_F(RerunTest, QueuePlaceCountsTheJobsAheadAndTheRunnersThatCouldTakeIt) {
  auto p1 = pipeline_with_builds({"sm_90a"});
  auto p2 = pipeline_with_builds({"sm_90a", "sm_80"});
  auto last = ok(m_store->list_jobs(JobFilter{p2.id, {}, JobKind::build, {}, "sm_90a", {}, 100})).items.at(0);
  auto sm80 = ok(m_store->list_jobs(JobFilter{p2.id, {}, JobKind::build, {}, "sm_80", {}, 100})).items.at(0);
  auto place = ok(m_store->queue_place(last.id));
  ASSERT_TRUE(place);
  EXPECT_EQ(place->ahead, 1) << "p1's sm_90a build is older";
  EXPECT_EQ(place->runners, 0);
  auto b = build_runner("b", {"sm_90a"});
  place = ok(m_store->queue_place(last.id));
  EXPECT_EQ(place->runners, 1);
  EXPECT_EQ(place->runners_busy, 0);
  EXPECT_EQ(ok(m_store->queue_place(sm80.id))->runners, 0) << "no runner builds sm_80";
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->job.pipeline_id, p1.id);
  place = ok(m_store->queue_place(last.id));
  EXPECT_EQ(place->ahead, 0);
  EXPECT_EQ(place->runners_busy, 1);
  EXPECT_FALSE(ok(m_store->queue_place(c->job.id)).has_value()) << "a running job does not wait";
}

}  // namespace kport::db::test
