// The job queue's state machine, as runners and the coordinator drive it.
#include "test_support.h"

namespace kport::db::test {

using QueueTest = StoreTest;

TEST_F(QueueTest, ClaimMatchesRoleAndCapabilities) {
  auto p = pipeline_with_builds({"sm_90a", "sm_80"});
  auto sm80_builder = build_runner("b80", {"sm_80"});
  auto other_builder = build_runner("b120", {"sm_120"});
  auto gpu = gpu_runner("h200", "9.0");

  EXPECT_FALSE(ok(m_store->claim(other_builder.id)).has_value());
  EXPECT_FALSE(ok(m_store->claim(gpu.id)).has_value()) << "a gpu runner never takes build jobs";
  auto c = ok(m_store->claim(sm80_builder.id));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->job.target, "sm_80");
  EXPECT_EQ(c->job.status, JobStatus::running);
  EXPECT_EQ(c->job.attempt, 1);
  EXPECT_EQ(c->job.runner_id, sm80_builder.id);
  EXPECT_EQ(c->lease_expires_ms, *m_now + 10'000);
  EXPECT_EQ(ok(m_store->get_runner(sm80_builder.id))->current_job, c->job.id);
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::running);
}

TEST_F(QueueTest, ACheckPinnedToADriverWaitsForARunnerReportingIt) {
  // Two runners of one GPU model on two drivers: a check pinned to the newer driver is not
  // the older one's, and while only the older one is online it says it awaits a runner.
  const Runner old_driver = gpu_runner("old", "9.0", "NVIDIA H200", "570.86");
  NewPipeline np;
  np.commit_sha = std::string(40, 'd');
  JobSpec check{JobKind::check, np.commit_sha, "sm_90a", "9.0", "NVIDIA H200", {}, 3, ""};
  check.driver = "580.159.04";
  np.jobs.push_back(check);
  auto p = ok(m_store->create_pipeline(np));
  const auto jobs = ok(m_store->list_jobs(JobFilter{p.id, {}, {}, {}, {}, {}, 100})).items;
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].driver, "580.159.04");
  EXPECT_EQ(jobs[0].status, JobStatus::awaiting_runner) << "no online runner reports the driver";
  EXPECT_FALSE(ok(m_store->claim(old_driver.id)).has_value()) << "another driver never claims it";
  const Runner new_driver = gpu_runner("new", "9.0", "NVIDIA H200", "580.159.04");
  EXPECT_EQ(job(jobs[0].id).status, JobStatus::queued);
  auto place = ok(m_store->queue_place(jobs[0].id));
  ASSERT_TRUE(place);
  EXPECT_EQ(place->runners, 1) << "only the runner on the pinned driver can take it";
  auto claimed = ok(m_store->claim(new_driver.id));
  ASSERT_TRUE(claimed);
  EXPECT_EQ(claimed->job.id, jobs[0].id);
  EXPECT_EQ(claimed->job.driver, "580.159.04");
}

TEST_F(QueueTest, OldestMatchingJobIsClaimedFirst) {
  auto p1 = pipeline_with_builds({"sm_90a"});
  auto p2 = pipeline_with_builds({"sm_90a"});
  auto b = build_runner("b", {"sm_90a"});
  auto b2 = build_runner("b2", {"sm_90a"});
  EXPECT_EQ(ok(m_store->claim(b.id))->job.pipeline_id, p1.id);
  EXPECT_EQ(ok(m_store->claim(b2.id))->job.pipeline_id, p2.id);
}

TEST_F(QueueTest, SucceededBuildSpawnsChecksForRegisteredArches) {
  ok(m_store->set_target_check_arches("sm_80", {"8.0", "8.6"}));
  auto p = pipeline_with_builds({"sm_80"});
  auto b = build_runner("b", {"sm_80"});
  auto hopper = gpu_runner("h200", "9.0");
  auto ampere = gpu_runner("a6000", "8.6", "NVIDIA RTX A6000");
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  auto done = ok(m_store->complete(c->job.id, b.id, c->job.attempt));
  EXPECT_EQ(done.status, JobStatus::succeeded);
  ASSERT_EQ(done.spawned.size(), 2u);
  for (auto id : done.spawned) {
    Job j = job(id);
    EXPECT_EQ(j.kind, JobKind::check);
    EXPECT_EQ(j.depends_on, c->job.id);
    EXPECT_EQ(j.pipeline_id, p.id);
  }
  EXPECT_FALSE(ok(m_store->claim(hopper.id)).has_value()) << "sm_80 checks are for 8.0 and 8.6 GPUs here";
  auto check = ok(m_store->claim(ampere.id));
  ASSERT_TRUE(check);
  EXPECT_EQ(check->job.arch, "8.6");
  ASSERT_TRUE(m_store->complete(check->job.id, ampere.id, 1).ok());
  // The 8.0 check has no runner: the pipeline is not done, and that job says why.
  auto waiting = ok(m_store->list_jobs(JobFilter{p.id, JobStatus::awaiting_runner, {}, {}, {}, {}, 100}));
  ASSERT_EQ(waiting.items.size(), 1u);
  EXPECT_EQ(waiting.items[0].arch, "8.0");
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::running);
}

// Two GPUs of one model online: a build's check on their arch is split in two by
// family, the heaviest alone, the last part taking every family the first leaves; the
// weights are the variants built the first time and what the earlier pipeline measured
// after. One GPU, or GPUs of two models, keep the one job.
TEST_F(QueueTest, ABuildsCheckIsSplitByFamilyOverTheOnlineGpusOfItsArch) {
  const Runner b = build_runner("b", {"sm_90a"});
  const Runner gpu0 = gpu_runner("h200-0", "9.0"), gpu1 = gpu_runner("h200-1", "9.0");
  // Builds and completes one pipeline's build with these variants; returns its checks.
  auto build_with = [&](const std::vector<std::pair<std::string, std::string>>& variants) {
    pipeline_with_builds({"sm_90a"});
    auto c = ok(m_store->claim(b.id));
    EXPECT_TRUE(c);
    if (!c) return std::vector<Job>{};
    std::vector<BuildRecord> records = built(c->job, variants);
    BuildRecord broken = records.back();
    broken.family = "softmax";
    broken.variant = "broken";
    broken.status = BuildStatus::compile_error;  // no instance in the harness, no weight
    records.push_back(broken);
    ok(m_store->put_build_records(records, b.id));
    std::vector<Job> checks;
    for (auto id : ok(m_store->complete(c->job.id, b.id, c->job.attempt)).spawned) checks.push_back(job(id));
    return checks;
  };
  const std::vector<std::pair<std::string, std::string>> variants{
      {"gemm", "simt"}, {"gemm", "mma"}, {"gemm", "wgmma"}, {"attention", "fa"}, {"rmsnorm", "vec"}};
  auto first = build_with(variants);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].payload_json, R"({"families":["gemm"],"shard":{"index":0,"count":2}})");
  EXPECT_EQ(first[1].payload_json, R"({"families_except":["gemm"],"shard":{"index":1,"count":2}})");
  for (const auto& j : first) {
    EXPECT_EQ(j.arch, "9.0");
    EXPECT_EQ(j.purpose, JobPurpose::check);
    EXPECT_FALSE(j.gpu_model) << "either GPU takes either part";
  }
  // Stores `counts` results of each family for the job `c` holds on `gpu`, and ends it.
  auto measure = [&](const Claim& c, const Runner& gpu, const std::vector<std::pair<std::string, int>>& counts) {
    std::vector<ResultRecord> results;
    for (const auto& [family, n] : counts)
      for (int i = 0; i < n; ++i) {
        ResultRecord r;
        r.job_id = c.job.id;
        r.attempt = c.job.attempt;
        r.runner_id = gpu.id;
        r.commit_sha = c.job.commit_sha;
        r.target = "sm_90a";
        r.family = family;
        r.variant = "v";
        r.instance = family + ".v." + std::to_string(i);
        r.dtype = "bf16";
        r.shape = "m=1";
        r.toolkit = "13.0";
        r.arch = "9.0";
        r.status = ResultStatus::passed;
        r.median_us = 10;
        results.push_back(r);
      }
    ok(m_store->put_results(results));
    ok(m_store->complete(c.job.id, gpu.id, c.job.attempt));
  };
  // One part each; both parts' results measured: attention (9 cases) is the heavy family
  // now, gemm (2) and rmsnorm (1) together lighter.
  for (const Runner* gpu : {&gpu0, &gpu1}) {
    auto c = ok(m_store->claim(gpu->id));
    ASSERT_TRUE(c);
    if (c->job.id == first[0].id)
      measure(*c, *gpu, {{"gemm", 2}});
    else
      measure(*c, *gpu, {{"rmsnorm", 1}, {"attention", 9}});
  }
  // A bisection's probe checked after it, of gemm alone: it says nothing of the whole
  // library's weights (counted, every family but gemm would be unmeasured).
  Bisection bisection;
  bisection.kind = "numerics_failure";
  bisection.origin = "auto";
  bisection.repo = "kernels";
  bisection.target = "sm_90a";
  bisection.gpu_model = "NVIDIA H200";
  bisection.arch = "9.0";
  bisection.good_sha = std::string(40, 'a');
  bisection.bad_sha = std::string(40, 'c');
  bisection.commits_json = R"(["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","cccccccccccccccccccccccccccccccccccccccc"])";
  bisection.cases_json = "[]";
  NewPipeline probe;
  probe.reason = PipelineReason::manual;
  probe.repo = "kernels";
  probe.commit_sha = bisection.bad_sha;
  probe.jobs.push_back(
      JobSpec{JobKind::build, probe.commit_sha, "sm_90a", {}, {}, {}, 3, R"({"variants":["gemm.mma"]})"});
  ASSERT_TRUE(ok(m_store->open_bisection(bisection, {probe})));
  auto probe_build = ok(m_store->claim(b.id));
  ASSERT_TRUE(probe_build);
  const auto probe_checks = ok(m_store->complete(probe_build->job.id, b.id, probe_build->job.attempt)).spawned;
  ASSERT_EQ(probe_checks.size(), 1u) << "a probe's check is never split";
  auto probe_check = ok(m_store->claim(gpu0.id));
  ASSERT_TRUE(probe_check);
  ASSERT_EQ(probe_check->job.id, probe_checks[0]);
  measure(*probe_check, gpu0, {{"gemm", 20}});
  auto second = build_with(variants);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].payload_json, R"({"families":["attention"],"shard":{"index":0,"count":2}})");
  EXPECT_EQ(second[1].payload_json, R"({"families_except":["attention"],"shard":{"index":1,"count":2}})");
  // A family the earlier pipeline did not measure: every weight is the variants' again.
  auto third = build_with({{"gemm", "simt"}, {"gemm", "mma"}, {"gemm", "wgmma"}, {"attention", "fa"}, {"new", "x"}});
  ASSERT_EQ(third.size(), 2u);
  EXPECT_EQ(third[0].payload_json, R"({"families":["gemm"],"shard":{"index":0,"count":2}})");
  // A GPU of another model on the arch: one job, as before the split.
  gpu_runner("h100", "9.0", "NVIDIA H100");
  auto mixed = build_with(variants);
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_EQ(mixed[0].payload_json, "{}");
}

TEST_F(QueueTest, ChecksWaitUntilTheirBuildSucceeds) {
  NewPipeline np;
  np.commit_sha = std::string(40, 'b');
  np.jobs.push_back(JobSpec{JobKind::build, np.commit_sha, "sm_90a", {}, {}, {}, 3, ""});
  np.jobs.push_back(JobSpec{JobKind::check, np.commit_sha, "sm_90a", "9.0", {}, -1, 3, ""});
  auto p = ok(m_store->create_pipeline(np));
  auto gpu = gpu_runner("h200", "9.0");
  auto b = build_runner("b", {"sm_90a"});
  EXPECT_FALSE(ok(m_store->claim(gpu.id)).has_value());
  auto build = ok(m_store->claim(b.id));
  ASSERT_TRUE(build);
  ASSERT_TRUE(m_store->complete(build->job.id, b.id, 1, false).ok());
  auto check = ok(m_store->claim(gpu.id));
  ASSERT_TRUE(check);
  EXPECT_EQ(check->job.depends_on, build->job.id);
  auto all = ok(m_store->list_jobs(JobFilter{p.id, {}, {}, {}, {}, {}, 100}));
  EXPECT_EQ(all.items.size(), 2u) << "spawn_checks=false adds no jobs";
}

TEST_F(QueueTest, ExpiredLeaseRequeuesThenFailsAtTheLastAttempt) {
  auto p = pipeline_with_builds({"sm_90a"}, 2);
  auto b = build_runner("b", {"sm_90a"});
  auto c1 = ok(m_store->claim(b.id));
  ASSERT_TRUE(c1);
  EXPECT_TRUE(ok(m_store->expire_leases(*m_now + 9'999)).empty());
  auto expired = ok(m_store->expire_leases(*m_now + 10'000));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].status, JobStatus::queued);
  EXPECT_EQ(job(c1->job.id).status, JobStatus::queued);
  EXPECT_EQ(job(c1->job.id).attempt, 1);
  EXPECT_FALSE(ok(m_store->get_runner(b.id))->current_job.has_value());
  // Requeued at +10 s with a 1 s backoff, 2 s for the runner that held it.
  *m_now += 11'999;
  EXPECT_FALSE(ok(m_store->claim(b.id)).has_value()) << "the expired runner waits out twice the backoff";
  *m_now += 1;
  auto c2 = ok(m_store->claim(b.id));
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->job.attempt, 2);
  expired = ok(m_store->expire_leases(*m_now + 10'000));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].status, JobStatus::failed);
  Job j = job(c1->job.id);
  EXPECT_EQ(j.status, JobStatus::failed);
  EXPECT_EQ(j.failure_reason, "lease expired after 2 attempts");
  EXPECT_TRUE(j.finished_ms.has_value());
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::failed);
  EXPECT_FALSE(ok(m_store->claim(b.id)).has_value());
}

TEST_F(QueueTest, HeartbeatExtendsTheLease) {
  pipeline_with_builds({"sm_90a"});
  auto b = build_runner("b", {"sm_90a"});
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  *m_now += 8'000;
  auto hb = ok(m_store->heartbeat(b.id, c->job.id, 1));
  EXPECT_EQ(hb.lease_expires_ms, *m_now + 10'000);
  EXPECT_FALSE(hb.cancel_requested);
  *m_now += 8'000;
  EXPECT_TRUE(ok(m_store->expire_leases(*m_now)).empty());
  EXPECT_EQ(job(c->job.id).status, JobStatus::running);
}

TEST_F(QueueTest, CompleteIsIdempotentAndStaleAttemptsAreRefused) {
  pipeline_with_builds({"sm_90a"});
  auto slow = build_runner("slow", {"sm_90a"});
  auto fast = build_runner("fast", {"sm_90a"});
  auto c1 = ok(m_store->claim(slow.id));
  ASSERT_TRUE(c1);
  ASSERT_TRUE(m_store->expire_leases(*m_now + 20'000).ok());
  *m_now += 21'000;  // past the first backoff
  auto c2 = ok(m_store->claim(fast.id));
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->job.attempt, 2);

  auto stale = m_store->complete(c1->job.id, slow.id, 1);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, Errc::conflict);
  auto stolen = m_store->complete(c1->job.id, slow.id, 2);
  ASSERT_FALSE(stolen.ok());
  EXPECT_EQ(stolen.error().code, Errc::forbidden) << "the lease belongs to the other runner";

  auto first = ok(m_store->complete(c2->job.id, fast.id, 2));
  EXPECT_FALSE(first.duplicate);
  auto again = ok(m_store->complete(c2->job.id, fast.id, 2));
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.status, JobStatus::succeeded);
  EXPECT_EQ(again.spawned, first.spawned);

  auto hb = m_store->heartbeat(slow.id, c1->job.id, 1);
  ASSERT_FALSE(hb.ok());
  EXPECT_EQ(hb.error().code, Errc::gone);
}

TEST_F(QueueTest, CancelQueuedAtOnceAndRunningAtNextHeartbeat) {
  auto p = pipeline_with_builds({"sm_90a", "sm_80"});
  auto b = build_runner("b", {"sm_90a"});
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  auto jobs = ok(m_store->list_jobs(JobFilter{p.id, JobStatus::queued, {}, {}, {}, {}, 100}));
  ASSERT_EQ(jobs.items.size(), 1u);
  EXPECT_EQ(ok(m_store->cancel(jobs.items[0].id)), JobStatus::cancelled);
  EXPECT_EQ(job(jobs.items[0].id).status, JobStatus::cancelled);

  EXPECT_EQ(ok(m_store->cancel(c->job.id)), JobStatus::running);
  EXPECT_TRUE(ok(m_store->heartbeat(b.id, c->job.id, 1)).cancel_requested);
  auto stopped = ok(m_store->fail(c->job.id, b.id, 1, "stopped on request"));
  EXPECT_EQ(stopped.status, JobStatus::cancelled);
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::cancelled);
  EXPECT_EQ(ok(m_store->cancel(c->job.id)), JobStatus::cancelled) << "a finished job stays as it is";
}

TEST_F(QueueTest, FailRetriesWhileAttemptsRemainAndCancelsDependents) {
  NewPipeline np;
  np.commit_sha = std::string(40, 'c');
  np.jobs.push_back(JobSpec{JobKind::build, np.commit_sha, "sm_90a", {}, {}, {}, 2, ""});
  np.jobs.push_back(JobSpec{JobKind::check, np.commit_sha, "sm_90a", "9.0", {}, -1, 3, ""});
  auto p = ok(m_store->create_pipeline(np));
  auto b = build_runner("b", {"sm_90a"});
  auto c1 = ok(m_store->claim(b.id));
  ASSERT_TRUE(c1);
  EXPECT_EQ(ok(m_store->fail(c1->job.id, b.id, 1, "toolkit crashed", true)).status, JobStatus::queued);
  EXPECT_TRUE(ok(m_store->fail(c1->job.id, b.id, 1, "toolkit crashed", true)).duplicate);
  *m_now += 2'000;  // the backoff of the runner that failed it
  auto c2 = ok(m_store->claim(b.id));
  ASSERT_TRUE(c2);
  EXPECT_EQ(ok(m_store->fail(c2->job.id, b.id, 2, "toolkit crashed", true)).status, JobStatus::failed);
  EXPECT_EQ(job(c2->job.id).failure_reason, "toolkit crashed (attempt 2 of 2)");
  auto jobs = ok(m_store->list_jobs(JobFilter{p.id, {}, JobKind::check, {}, {}, {}, 100}));
  ASSERT_EQ(jobs.items.size(), 1u);
  EXPECT_EQ(jobs.items[0].status, JobStatus::cancelled) << "a check cannot run without its build";
}

TEST_F(QueueTest, AwaitingRunnerIsDerivedFromOnlineRunners) {
  NewPipeline np;
  np.commit_sha = std::string(40, 'd');
  np.jobs.push_back(JobSpec{JobKind::check, np.commit_sha, "sm_100a", "10.0", {}, {}, 3, ""});
  auto p = ok(m_store->create_pipeline(np));
  auto id = ok(m_store->list_jobs(JobFilter{p.id, {}, {}, {}, {}, {}, 10})).items.at(0).id;
  EXPECT_EQ(job(id).status, JobStatus::awaiting_runner);
  EXPECT_EQ(ok(m_store->queue_stats()).jobs_by_status[JobStatus::awaiting_runner], 1);

  auto b200 = gpu_runner("b200", "10.0", "NVIDIA B200");
  EXPECT_EQ(job(id).status, JobStatus::queued);
  auto stats = ok(m_store->queue_stats());
  EXPECT_EQ(stats.jobs_by_status[JobStatus::queued], 1);
  EXPECT_EQ(stats.jobs_by_status[JobStatus::awaiting_runner], 0);
  EXPECT_EQ(stats.runners_online, 1);

  *m_now += 61'000;  // the runner went silent
  EXPECT_EQ(job(id).status, JobStatus::awaiting_runner);
  EXPECT_EQ(ok(m_store->queue_stats()).runners_online, 0);
  auto c = ok(m_store->claim(b200.id));  // claiming is a sign of life
  ASSERT_TRUE(c);
  EXPECT_EQ(c->job.id, id);
}

TEST_F(QueueTest, DeregisterReleasesTheHeldJob) {
  pipeline_with_builds({"sm_90a"});
  auto b = build_runner("b", {"sm_90a"});
  auto c1 = ok(m_store->claim(b.id));
  ASSERT_TRUE(c1);
  ok(m_store->deregister_runner(b.id));
  Job j = job(c1->job.id);
  EXPECT_EQ(j.status, JobStatus::queued);
  EXPECT_EQ(j.failure_reason, "runner deregistered after 1 attempt");
  EXPECT_EQ(j.not_before_ms, *m_now + 1'000);
  auto gone = m_store->claim(b.id);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, Errc::gone);
}

// Issue 14, item 10: 500 parked long-polls on one runner token were handed the same job
// three times, each counted "abandoned", and the job failed without running.
TEST_F(QueueTest, RepeatedClaimsOnOneTokenNeverBurnAttempts) {
  pipeline_with_builds({"sm_90a", "sm_90a"});
  auto b = build_runner("b", {"sm_90a"});
  auto first = ok(m_store->claim(b.id));
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->held);
  for (int i = 0; i < 50; ++i) {
    *m_now += 1;
    auto again = ok(m_store->claim(b.id));
    ASSERT_TRUE(again) << "a claim on a token that holds a lease answers that lease";
    EXPECT_TRUE(again->held);
    EXPECT_EQ(again->job.id, first->job.id);
    EXPECT_EQ(again->job.attempt, 1);
    EXPECT_EQ(again->lease_expires_ms, first->lease_expires_ms) << "answering a claim again changes nothing";
  }
  Job j = job(first->job.id);
  EXPECT_EQ(j.status, JobStatus::running);
  EXPECT_EQ(j.attempt, 1);
  EXPECT_EQ(
      ok(m_store->list_jobs(JobFilter{first->job.pipeline_id, JobStatus::running, {}, {}, {}, {}, 10})).items.size(),
      1u)
      << "one token, one worker, one job";
  EXPECT_EQ(ok(m_store->complete(first->job.id, b.id, 1)).status, JobStatus::succeeded);
  auto next = ok(m_store->claim(b.id));
  ASSERT_TRUE(next) << "once the held job ended, the token claims the next one";
  EXPECT_NE(next->job.id, first->job.id);
  EXPECT_FALSE(next->held);
}

// Issue 14, item 9: a failing clone burned all three attempts in 15 ms.
TEST_F(QueueTest, RetriesBackOffAndTheFailingRunnerWaitsLonger) {
  auto p = pipeline_with_builds({"sm_90a"}, 3);
  auto a = build_runner("a", {"sm_90a"});
  auto b = build_runner("b", {"sm_90a"});
  const std::int64_t t0 = *m_now;
  auto c1 = ok(m_store->claim(a.id));
  ASSERT_TRUE(c1);
  auto failed = ok(m_store->fail(c1->job.id, a.id, 1, "clone failed: connection reset", true));
  EXPECT_EQ(failed.status, JobStatus::queued);
  EXPECT_EQ(failed.retry_in.others_ms, 1'000);
  EXPECT_EQ(failed.retry_in.same_ms, 2'000);
  EXPECT_EQ(job(c1->job.id).not_before_ms, t0 + 1'000);
  EXPECT_FALSE(ok(m_store->claim(a.id)).has_value()) << "no retry right away";
  EXPECT_FALSE(ok(m_store->claim(b.id)).has_value());
  *m_now = t0 + 999;
  EXPECT_FALSE(ok(m_store->claim(b.id)).has_value());
  *m_now = t0 + 1'000;
  EXPECT_FALSE(ok(m_store->claim(a.id)).has_value()) << "the runner that failed it waits twice as long";
  auto c2 = ok(m_store->claim(b.id));
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->job.attempt, 2);
  EXPECT_FALSE(job(c2->job.id).not_before_ms.has_value()) << "a running job has no backoff";

  // The second failure doubles the delay.
  const std::int64_t t1 = *m_now;
  EXPECT_EQ(ok(m_store->fail(c2->job.id, b.id, 2, "clone failed: connection reset", true)).retry_in.others_ms, 2'000);
  *m_now = t1 + 1'999;
  EXPECT_FALSE(ok(m_store->claim(a.id)).has_value());
  *m_now = t1 + 2'000;
  auto c3 = ok(m_store->claim(a.id));
  ASSERT_TRUE(c3) << "a did not fail attempt 2; it may take the job once the backoff passed";
  EXPECT_EQ(c3->job.attempt, 3);
  EXPECT_EQ(ok(m_store->fail(c3->job.id, a.id, 3, "clone failed: connection reset", true)).status, JobStatus::failed);
  EXPECT_EQ(job(c3->job.id).failure_reason, "clone failed: connection reset (attempt 3 of 3)");
  EXPECT_EQ(ok(m_store->get_pipeline(p.id))->status, PipelineStatus::failed);
}

TEST_F(QueueTest, PermanentFailureFailsAtOnceWithItsReason) {
  pipeline_with_builds({"sm_90a"}, 3);
  auto b = build_runner("b", {"sm_90a"});
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  auto r = ok(m_store->fail(c->job.id, b.id, 1, "repository acme/kernels not found", false));
  EXPECT_EQ(r.status, JobStatus::failed);
  Job j = job(c->job.id);
  EXPECT_EQ(j.attempt, 1) << "a permanent failure is not retried";
  EXPECT_EQ(j.failure_reason, "repository acme/kernels not found");
}

TEST(RetryDelayTest, DoublesPerAttemptUpToTheCapWithJitterInTheUpperHalf) {
  const RetryPolicy p{1'000, 5'000};
  EXPECT_EQ(retry_delay(p, 1, 1.0).others_ms, 1'000);
  EXPECT_EQ(retry_delay(p, 2, 1.0).others_ms, 2'000);
  EXPECT_EQ(retry_delay(p, 3, 1.0).others_ms, 4'000);
  EXPECT_EQ(retry_delay(p, 4, 1.0).others_ms, 5'000) << "capped";
  EXPECT_EQ(retry_delay(p, 1'000'000, 1.0).others_ms, 5'000) << "no overflow however many attempts";
  EXPECT_EQ(retry_delay(p, 1, 0.0).others_ms, 500) << "jitter keeps at least half the delay";
  EXPECT_EQ(retry_delay(p, 3, 0.5).others_ms, 3'000);
  EXPECT_EQ(retry_delay(p, 3, -2.0).others_ms, 2'000) << "draws outside [0, 1] are clamped";
  EXPECT_EQ(retry_delay(p, 2, 0.25).same_ms, 2 * retry_delay(p, 2, 0.25).others_ms);
  EXPECT_EQ(retry_delay(RetryPolicy{0, 0}, 3, 0.7).others_ms, 0) << "a zero base turns backoff off";
}

// A revalidation's pipeline is of no repository and checks several libraries' builds: a
// check job is of the library of the build it depends on.
TEST_F(QueueTest, AJobOfAPipelineWithoutRepositoryIsOfItsBuildsLibrary) {
  NewPipeline built;
  built.reason = PipelineReason::manual;
  built.repo = "lib-a";
  built.commit_sha = std::string(40, 'a');  // a commit kport never recorded
  built.jobs.push_back(JobSpec{JobKind::build, built.commit_sha, "sm_90a", {}, {}, {}, 3, ""});
  ok(m_store->create_pipeline(built));
  JobFilter builds;
  builds.kind = JobKind::build;
  const std::int64_t build_id = ok(m_store->list_jobs(builds)).items.at(0).id;
  NewPipeline revalidation;
  revalidation.reason = PipelineReason::new_driver;
  revalidation.commit_sha = built.commit_sha;
  JobSpec check{JobKind::check, built.commit_sha, "sm_90a", "9.0", "NVIDIA H200", build_id, 3, ""};
  revalidation.jobs.push_back(check);
  ok(m_store->create_pipeline(revalidation));
  JobFilter of_a;
  of_a.repo = "lib-a";
  auto jobs = ok(m_store->list_jobs(of_a)).items;
  ASSERT_EQ(jobs.size(), 2u) << "the build, and the check of it in a pipeline of no repository";
  EXPECT_EQ(jobs[0].kind, JobKind::check);
  EXPECT_EQ(jobs[0].depends_on, build_id);
  JobFilter of_none;
  of_none.repo = "";
  EXPECT_TRUE(ok(m_store->list_jobs(of_none)).items.empty());
}

}  // namespace kport::db::test
