// The one insert path for a pipeline with its jobs, through every store method that
// creates one (create_pipeline, record_push, open_revalidation), and the checks a
// finished build spawns.
#include "test_support.h"

namespace kport::db::test {
namespace {

const std::string k_sha = std::string(40, 'e');

JobSpec build(const std::string& target) { return JobSpec{JobKind::build, k_sha, target, {}, {}, {}, 3, ""}; }
JobSpec check_after(std::int64_t depends_on, const std::string& arch) {
  return JobSpec{JobKind::check, k_sha, "sm_90a", arch, "NVIDIA H200", depends_on, 3, ""};
}

PushDelivery delivery(const std::string& id) {
  PushDelivery d;
  d.delivery_id = id;
  d.source = "github";
  d.repo = "kernels";
  d.ref = "refs/heads/main";
  d.after_sha = k_sha;
  return d;
}

NewPipeline push_pipeline(std::vector<JobSpec> jobs) {
  NewPipeline np;
  np.reason = PipelineReason::push;
  np.repo = "kernels";
  np.ref = "refs/heads/main";
  np.commit_sha = k_sha;
  np.jobs = std::move(jobs);
  return np;
}

class PipelineStoreTest : public StoreTest {
 protected:
  std::size_t pipelines() { return ok(m_store->list_pipelines(PipelineFilter{})).items.size(); }
  std::vector<Job> jobs_of(std::int64_t pipeline) {
    auto page = ok(m_store->list_jobs(JobFilter{pipeline, {}, {}, {}, {}, {}, 100}));
    std::reverse(page.items.begin(), page.items.end());  // oldest first
    return page.items;
  }
};

TEST_F(PipelineStoreTest, APipelineWithAnInvalidJobIsNotCreatedAtAll) {
  auto bad = m_store->create_pipeline(push_pipeline({build("sm_90a"), check_after(-1, "")}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_NE(bad.error().message.find("needs the arch"), std::string::npos) << bad.error().message;
  EXPECT_EQ(pipelines(), 0u) << "the pipeline row rolled back with its jobs";
  auto no_commit = push_pipeline({});
  no_commit.commit_sha.clear();
  EXPECT_EQ(m_store->create_pipeline(no_commit).error().code, Errc::invalid_argument);
}

TEST_F(PipelineStoreTest, APushWhosePipelineFailsRecordsNoDeliverySoTheRetryCounts) {
  auto bad = m_store->record_push(delivery("d1"), push_pipeline({check_after(-5, "9.0")}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("must name an earlier job"), std::string::npos) << bad.error().message;
  EXPECT_EQ(pipelines(), 0u);
  auto retry = ok(m_store->record_push(delivery("d1"), push_pipeline({build("sm_90a"), check_after(-1, "9.0")})));
  EXPECT_FALSE(retry.duplicate) << "the failed attempt left no delivery behind";
  ASSERT_TRUE(retry.pipeline);
  auto jobs = jobs_of(retry.pipeline->id);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1].depends_on, jobs[0].id) << "depends_on -1 resolves on every creation path";
  auto again = ok(m_store->record_push(delivery("d1"), push_pipeline({build("sm_90a")})));
  EXPECT_TRUE(again.duplicate);
  ASSERT_TRUE(again.pipeline);
  EXPECT_EQ(again.pipeline->id, retry.pipeline->id);
  EXPECT_EQ(pipelines(), 1u);
}

TEST_F(PipelineStoreTest, APushedCommitIsValidatedOnceWhicheverPathCreatesItsPipeline) {
  auto manual = ok(m_store->create_pipeline(push_pipeline({build("sm_90a")})));
  NewPipeline once = push_pipeline({build("sm_90a"), build("sm_80")});
  once.once_per_commit = true;
  auto refused = m_store->create_pipeline(once);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::conflict);
  EXPECT_NE(refused.error().message.find("already validated by pipeline " + std::to_string(manual.id)),
            std::string::npos)
      << refused.error().message;

  PushDelivery d = delivery("d2");
  d.note = "the delivery's own note";
  auto pushed = ok(m_store->record_push(d, once));
  EXPECT_FALSE(pushed.duplicate);
  EXPECT_EQ(pushed.outcome, "ignored");
  EXPECT_FALSE(pushed.pipeline);
  EXPECT_NE(pushed.note.find("already validated by pipeline " + std::to_string(manual.id)), std::string::npos)
      << pushed.note;
  EXPECT_EQ(pipelines(), 1u);
  EXPECT_TRUE(ok(m_store->record_push(d, once)).duplicate) << "the delivery itself was recorded";

  // Without the flag (a manual re-run) the commit gets another pipeline.
  EXPECT_EQ(ok(m_store->create_pipeline(push_pipeline({build("sm_90a")}))).jobs_total, 1);
  EXPECT_EQ(pipelines(), 2u);
  // A fresh commit is created as usual, and the delivery keeps its note.
  NewPipeline other = once;
  other.commit_sha = std::string(40, 'f');
  for (auto& j : other.jobs) j.commit_sha = other.commit_sha;
  PushDelivery d3 = delivery("d3");
  d3.after_sha = other.commit_sha;
  d3.note = "kept";
  auto fresh = ok(m_store->record_push(d3, other));
  EXPECT_EQ(fresh.outcome, "pipeline");
  EXPECT_EQ(fresh.note, "kept");
  ASSERT_TRUE(fresh.pipeline);
  EXPECT_EQ(fresh.pipeline->jobs_total, 2);
}

TEST_F(PipelineStoreTest, ARevalidationIsOpenedOnceWithItsPipelineOrWithoutOneWhenNothingToCheck) {
  Revalidation rv{"NVIDIA H200", "600.1", "9.0", "580.1", {}, 0};
  NewPipeline np = push_pipeline({build("sm_90a"), check_after(-1, "9.0")});
  np.reason = PipelineReason::new_driver;
  auto opened = ok(m_store->open_revalidation(rv, np));
  ASSERT_TRUE(opened && opened->pipeline_id);
  auto p = ok(m_store->get_pipeline(*opened->pipeline_id));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reason, PipelineReason::new_driver);
  EXPECT_EQ(p->jobs_total, 2);
  EXPECT_FALSE(ok(m_store->open_revalidation(rv, np))) << "a pair is revalidated once";
  EXPECT_EQ(pipelines(), 1u);

  Revalidation fresh{"NVIDIA H100", "580.1", "9.0", "", {}, 0};
  auto empty = ok(m_store->open_revalidation(fresh, NewPipeline{}));
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->pipeline_id) << "no jobs: recorded without a pipeline";
  EXPECT_EQ(pipelines(), 1u);
}

TEST_F(PipelineStoreTest, ARevalidationsCheckIsSplitByFamilyOverTheOnlineGpusOfItsModel) {
  pipeline_with_builds({"sm_90a"});
  const Runner b = build_runner("b", {"sm_90a"});
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  ok(m_store->put_build_records(
      built(c->job, {{"gemm", "simt"}, {"gemm", "mma"}, {"gemm", "wgmma"}, {"attention", "fa"}, {"rmsnorm", "vec"}}),
      b.id));
  ok(m_store->complete(c->job.id, b.id, c->job.attempt));  // no GPU runner yet: one check
  const std::int64_t built = c->job.id;
  gpu_runner("h200-0", "9.0", "NVIDIA H200", "600.1");
  gpu_runner("h200-1", "9.0", "NVIDIA H200", "600.1");
  gpu_runner("h100", "9.0", "NVIDIA H100", "600.1");
  auto revalidate = [&](const std::string& model) {
    NewPipeline np;
    np.reason = PipelineReason::new_gpu;
    np.repo = "kernels";
    np.commit_sha = c->job.commit_sha;
    JobSpec check{JobKind::check, c->job.commit_sha, "sm_90a", "9.0", model, built, 3, ""};
    np.jobs.push_back(check);
    auto opened = ok(m_store->open_revalidation(Revalidation{model, "600.1", "9.0", "", {}, 0}, np));
    EXPECT_TRUE(opened && opened->pipeline_id);
    return opened && opened->pipeline_id ? jobs_of(*opened->pipeline_id) : std::vector<Job>{};
  };
  // Two H200s online: one part each, gemm (three variants) against the rest, both for that
  // model; the H100 beside them on the arch does not count, the check names its model.
  const auto h200 = revalidate("NVIDIA H200");
  ASSERT_EQ(h200.size(), 2u);
  EXPECT_EQ(h200[0].payload_json, R"({"families":["gemm"],"shard":{"index":0,"count":2}})");
  EXPECT_EQ(h200[1].payload_json, R"({"families_except":["gemm"],"shard":{"index":1,"count":2}})");
  for (const auto& j : h200) {
    EXPECT_EQ(j.gpu_model.value_or(""), "NVIDIA H200");
    EXPECT_EQ(j.depends_on.value_or(0), built);
  }
  // One H100: its check stays whole.
  const auto h100 = revalidate("NVIDIA H100");
  ASSERT_EQ(h100.size(), 1u);
  EXPECT_EQ(h100[0].payload_json, "{}");
}

TEST_F(PipelineStoreTest, ARemeasureIsQueuedOncePerCommitTargetAndGpuModel) {
  auto p = ok(m_store->create_pipeline(push_pipeline({build("sm_90a")})));
  const std::int64_t b = jobs_of(p.id).at(0).id;
  Remeasure what{k_sha, "sm_90a", "NVIDIA H200", 0, R"(["gemm.x.default"])", 0};
  EXPECT_TRUE(ok(m_store->request_remeasure(p.id, what, check_after(b, "9.0"))));
  EXPECT_FALSE(ok(m_store->request_remeasure(p.id, what, check_after(b, "9.0"))));
  EXPECT_EQ(jobs_of(p.id).size(), 2u);
  what.gpu_model = "NVIDIA H100";
  EXPECT_TRUE(ok(m_store->request_remeasure(p.id, what, check_after(b, "9.0"))))
      << "another GPU model is another re-measure";
}

TEST_F(PipelineStoreTest, ABuildSpawnsChecksOnItsOwnArchEvenWhenTheRegisteredListLacksIt) {
  ok(m_store->set_target_check_arches("sm_80", {"8.9", "8.6"}));
  auto p = pipeline_with_builds({"sm_80"});
  auto b = build_runner("b", {"sm_80"});
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  auto done = ok(m_store->complete(c->job.id, b.id, c->job.attempt));
  std::vector<std::string> arches;
  for (auto id : done.spawned) arches.push_back(job(id).arch.value_or(""));
  EXPECT_EQ(arches, (std::vector<std::string>{"8.0", "8.6", "8.9"}));
  EXPECT_EQ(jobs_of(p.id).size(), 4u);
}

TEST_F(PipelineStoreTest, ChecksInheritTheirBuildsPurposeAndTheVerdictLeavesMeasureRequestsOut) {
  JobSpec measured = build("sm_90a");
  measured.purpose = JobPurpose::measure_request;
  auto own = ok(m_store->create_pipeline(push_pipeline({build("sm_90a")})));
  auto asked = ok(m_store->create_pipeline(push_pipeline({measured})));
  auto b = build_runner("b", {"sm_90a"});
  std::vector<std::int64_t> spawned;
  for (int i = 0; i < 2; ++i) {
    auto c = ok(m_store->claim(b.id));
    ASSERT_TRUE(c);
    for (auto id : ok(m_store->complete(c->job.id, b.id, c->job.attempt)).spawned) spawned.push_back(id);
  }
  ASSERT_EQ(spawned.size(), 2u);
  for (auto id : spawned)
    EXPECT_EQ(job(id).purpose, job(id).pipeline_id == asked.id ? JobPurpose::measure_request : JobPurpose::check);
  // Whatever its payload says: the column, not the text, is what the verdict reads.
  std::vector<std::int64_t> judged;
  for (const auto& j : ok(m_store->verdict_inputs(k_sha)).jobs) judged.push_back(j.pipeline_id);
  EXPECT_EQ(judged, (std::vector<std::int64_t>{own.id, own.id}));
}

TEST_F(PipelineStoreTest, ABuildOfAnUnknownTargetSpawnsNoChecks) {
  pipeline_with_builds({"sm_120a"});
  auto b = build_runner("b", {"sm_120a"});
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  EXPECT_TRUE(ok(m_store->complete(c->job.id, b.id, c->job.attempt)).spawned.empty());
}

}  // namespace
// Issue 14, item 6: a replayed, validly signed branch delete (or force push) with a
// fresh delivery id cancelled the live head's queued build.
TEST_F(PipelineStoreTest, ReplayedDeleteOrForcePushOlderThanTheHeadChangesNothing) {
  const std::string old_head(40, 'a');
  PushDelivery first = delivery("p1");
  first.after_sha = old_head;
  first.before_sha = std::string(40, '0');
  ok(m_store->record_push(first, std::nullopt));
  PushDelivery live = delivery("p2");  // main moves on to k_sha, whose build is queued
  live.before_sha = old_head;
  auto pushed = ok(m_store->record_push(live, push_pipeline({build("sm_90a")})));
  ASSERT_TRUE(pushed.pipeline);
  const auto build_job = jobs_of(pushed.pipeline->id).at(0).id;

  PushDelivery replayed_delete = delivery("p3-fresh-id");  // recorded when main was at old_head
  replayed_delete.before_sha = old_head;
  replayed_delete.after_sha = std::string(40, '0');
  replayed_delete.deleted = true;
  auto del = ok(m_store->record_push(replayed_delete, std::nullopt));
  EXPECT_TRUE(del.stale);
  EXPECT_EQ(del.outcome, "ignored");
  EXPECT_EQ(del.superseded_jobs, 0);
  PushDelivery replayed_force = delivery("p4-fresh-id");
  replayed_force.before_sha = old_head;
  replayed_force.after_sha = std::string(40, 'f');
  replayed_force.forced = true;
  auto forced = ok(m_store->record_push(replayed_force, std::nullopt));
  EXPECT_TRUE(forced.stale);
  EXPECT_EQ(forced.superseded_jobs, 0);
  EXPECT_EQ(ok(m_store->get_job(build_job))->status, JobStatus::queued) << "the live head's build survives";
  EXPECT_EQ(ok(m_store->resolve_commit("main")), std::optional<std::string>(k_sha)) << "the head did not move";

  // A delete whose before is the recorded head is acted on.
  PushDelivery real_delete = delivery("p5");
  real_delete.before_sha = k_sha;
  real_delete.after_sha = std::string(40, '0');
  real_delete.deleted = true;
  auto gone = ok(m_store->record_push(real_delete, std::nullopt));
  EXPECT_FALSE(gone.stale);
  EXPECT_EQ(gone.superseded_jobs, 1);
  EXPECT_EQ(ok(m_store->get_job(build_job))->status, JobStatus::cancelled);
}

}  // namespace kport::db::test
