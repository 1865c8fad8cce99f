// Why a queued job waits, as the pipeline and job pages say it.
#include "job_waits.h"

#include <gtest/gtest.h>

namespace kport::coordinator {
namespace {

db::Job check_job() {
  db::Job j;
  j.id = 7;
  j.kind = db::JobKind::check;
  j.status = db::JobStatus::queued;
  j.target = "sm_90a";
  j.arch = "9.0";
  j.depends_on = 3;
  return j;
}

db::Job build_job(db::JobStatus status) {
  db::Job j;
  j.id = 3;
  j.kind = db::JobKind::build;
  j.status = status;
  j.target = "sm_90a";
  return j;
}

TEST(JobWaits, FinishedOrRunningJobsDoNotWait) {
  WaitFacts f;
  f.job = build_job(db::JobStatus::running);
  EXPECT_FALSE(wait_reason(f));
  f.job.status = db::JobStatus::succeeded;
  EXPECT_FALSE(wait_reason(f));
}

TEST(JobWaits, ACheckWaitsOnItsBuildFirst) {
  WaitFacts f;
  f.job = check_job();
  f.dependency = build_job(db::JobStatus::running);
  f.place = db::QueuePlace{0, 0, 0};
  EXPECT_EQ(wait_reason(f), "waiting on its build, job 3 (running)");
  f.dependency->status = db::JobStatus::succeeded;
  EXPECT_EQ(wait_reason(f), "no online GPU runner of arch 9.0");
  f.job.gpu_model = "NVIDIA H200";
  f.job.status = db::JobStatus::awaiting_runner;
  EXPECT_EQ(wait_reason(f), "no online GPU runner of arch 9.0 (NVIDIA H200)");
}

TEST(JobWaits, ABackoffSaysUntilWhenAndWhy) {
  WaitFacts f;
  f.job = build_job(db::JobStatus::queued);
  f.job.attempt = 1;
  f.job.not_before_ms = 1'764'590'400'000;  // 2025-12-01T12:00:00Z
  f.job.failure_reason = "lease expired after 1 attempt";
  f.now_ms = f.job.not_before_ms.value() - 1000;
  f.place = db::QueuePlace{0, 1, 0};
  EXPECT_EQ(wait_reason(f),
            "backing off after attempt 1 until 2025-12-01T12:00:00.000Z: lease expired after 1 attempt");
  f.now_ms = f.job.not_before_ms.value();
  EXPECT_EQ(wait_reason(f), "next in line; an idle build runner for target sm_90a claims it at its next poll");
}

TEST(JobWaits, JobsAheadAndBusyRunnersAreCounted) {
  WaitFacts f;
  f.job = build_job(db::JobStatus::queued);
  f.place = db::QueuePlace{4, 2, 2};
  EXPECT_EQ(wait_reason(f), "queued behind 4 jobs for the same runners (2 of 2 runners busy)");
  f.place = db::QueuePlace{0, 1, 1};
  EXPECT_EQ(wait_reason(f), "next in line; every build runner for target sm_90a is busy (1 runner)");
  f.place = db::QueuePlace{0, 0, 0};
  EXPECT_EQ(wait_reason(f), "no online build runner for target sm_90a");
}

}  // namespace
}  // namespace kport::coordinator
