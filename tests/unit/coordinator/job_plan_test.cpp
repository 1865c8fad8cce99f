// Which jobs a pipeline of each reason gets (app/job_plan.h), over plain data.
#include "app/job_plan.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace kport::coordinator::app {
namespace {
namespace json = boost::json;

const std::string k_sha = std::string(40, 'a');

db::Target target(std::string name, std::string arch) {
  db::Target t;
  t.name = std::move(name);
  t.arch = std::move(arch);
  return t;
}

db::Job build_job(std::int64_t id, std::string target, db::JobStatus status = db::JobStatus::succeeded,
                  std::int64_t pipeline = 7) {
  db::Job j;
  j.id = id;
  j.pipeline_id = pipeline;
  j.kind = db::JobKind::build;
  j.status = status;
  j.commit_sha = k_sha;
  j.target = std::move(target);
  return j;
}

db::Revalidation revalidation(std::string previous_driver) {
  db::Revalidation rv;
  rv.gpu_model = "NVIDIA H200";
  rv.driver = "600.1";
  rv.arch = "9.0";
  rv.previous_driver = std::move(previous_driver);
  return rv;
}

json::value payload(const db::JobSpec& spec) { return json::parse(spec.payload_json); }

TEST(JobPlan, PushNewTargetAndManualPipelinesBuildEveryTargetGiven) {
  for (auto reason : {db::PipelineReason::push, db::PipelineReason::new_target, db::PipelineReason::manual}) {
    ASSERT_TRUE(builds_from_scratch(reason));
    PipelineOrigin origin{reason, "org/kernels", "refs/heads/main", k_sha, "why"};
    auto np = plan_builds(origin, {"sm_90a", "sm_80"}, 4, R"({"variants":["gemm.simt"]})");
    EXPECT_EQ(np.reason, reason);
    EXPECT_EQ(np.repo, "org/kernels");
    EXPECT_EQ(np.ref, "refs/heads/main");
    EXPECT_EQ(np.commit_sha, k_sha);
    EXPECT_EQ(np.note, "why");
    EXPECT_EQ(np.once_per_commit, reason == db::PipelineReason::push)
        << "a pushed commit is validated once; manual and new-target pipelines run again on purpose";
    ASSERT_EQ(np.jobs.size(), 2u);
    EXPECT_EQ(np.jobs[0].target, "sm_90a");
    EXPECT_EQ(np.jobs[1].target, "sm_80");
    for (const auto& j : np.jobs) {
      EXPECT_EQ(j.kind, db::JobKind::build);
      EXPECT_EQ(j.commit_sha, k_sha);
      EXPECT_FALSE(j.arch) << "a build runs on a build runner, not a GPU class";
      EXPECT_FALSE(j.depends_on);
      EXPECT_EQ(j.max_attempts, 4);
      EXPECT_EQ(j.payload_json, R"({"variants":["gemm.simt"]})") << "its checks inherit it";
      EXPECT_EQ(j.purpose, db::JobPurpose::check);
    }
  }
  // A manual pipeline's payload may say why it exists; the store keeps that beside it.
  PipelineOrigin manual{db::PipelineReason::manual, "org/kernels", "", k_sha, ""};
  EXPECT_EQ(plan_builds(manual, {"sm_90a"}, 3, R"({"remeasure":true})").jobs.at(0).purpose, db::JobPurpose::remeasure);
  EXPECT_EQ(plan_builds(manual, {"sm_90a"}, 3, R"({"remeasure":"yes"})").jobs.at(0).purpose, db::JobPurpose::check)
      << "a payload the runner cannot read is the runner's to refuse";
}

TEST(JobPlan, RevalidationReasonsAreNotBuiltFromScratch) {
  EXPECT_FALSE(builds_from_scratch(db::PipelineReason::new_gpu));
  EXPECT_FALSE(builds_from_scratch(db::PipelineReason::new_driver));
}

TEST(JobPlan, ANewGpuChecksEveryTargetItsArchChecksOnTheLatestBuild) {
  std::vector<TargetState> targets = {
      {target("sm_100a", "10.0"), {}, build_job(11, "sm_100a")},                // another arch
      {target("sm_80", "8.0"), {"8.0", "8.6", "9.0"}, build_job(12, "sm_80")},  // registered for 9.0
      {target("sm_90", "9.0"), {}, std::nullopt},                               // never built: nothing to check
      {target("sm_90a", "9.0"), {}, build_job(14, "sm_90a")},                   // its own arch
  };
  auto np = plan_revalidation(revalidation(""), targets, {"gemm.wgmma.best"}, 3);
  EXPECT_EQ(np.reason, db::PipelineReason::new_gpu);
  EXPECT_EQ(np.note, "new GPU NVIDIA H200 (arch 9.0, driver 600.1)");
  EXPECT_EQ(np.commit_sha, k_sha);
  ASSERT_EQ(np.jobs.size(), 2u);
  EXPECT_EQ(np.jobs[0].target, "sm_80");
  EXPECT_EQ(np.jobs[0].depends_on, 12);
  EXPECT_EQ(np.jobs[1].target, "sm_90a");
  EXPECT_EQ(np.jobs[1].depends_on, 14);
  for (const auto& j : np.jobs) {
    EXPECT_EQ(j.kind, db::JobKind::check);
    EXPECT_EQ(j.arch, "9.0");
    EXPECT_EQ(j.gpu_model, "NVIDIA H200") << "pinned: another 9.0 GPU says nothing about this one";
    EXPECT_EQ(j.max_attempts, 3);
    auto p = payload(j);
    EXPECT_EQ(p.at("revalidate").at("driver"), "600.1");
    EXPECT_EQ(p.at("revalidate").at("previous_driver"), "");
    EXPECT_FALSE(p.as_object().contains("instances")) << "a GPU never seen has no best yet: everything is checked";
    EXPECT_EQ(j.purpose, db::JobPurpose::revalidate);
  }
}

TEST(JobPlan, ANewDriverReChecksOnlyTheInstancesBestOnTheModelNow) {
  std::vector<TargetState> targets = {{target("sm_90a", "9.0"), {}, build_job(14, "sm_90a")}};
  auto np = plan_revalidation(revalidation("580.1"), targets, {"gemm.wgmma.best", "softmax.simt.default"}, 3);
  EXPECT_EQ(np.reason, db::PipelineReason::new_driver);
  EXPECT_EQ(np.note, "new driver 600.1 on NVIDIA H200 (was 580.1)");
  ASSERT_EQ(np.jobs.size(), 1u);
  auto p = payload(np.jobs[0]);
  EXPECT_EQ(p.at("revalidate").at("previous_driver"), "580.1");
  EXPECT_EQ(p.at("instances"), (json::array{"gemm.wgmma.best", "softmax.simt.default"}));
}

TEST(JobPlan, ANewDriverReChecksEveryLibrarysBuildOfTheTargetWithItsOwnBest) {
  // Two libraries built sm_90a (lib-b last): both are checked again, each on its own
  // build, each of its own best instances; a library without a best on the model is
  // checked whole.
  db::Job a = build_job(14, "sm_90a");
  db::Job b = build_job(21, "sm_90a");
  b.commit_sha = std::string(40, 'b');
  std::vector<LibraryBuilds> libraries = {
      {"lib-a", {{target("sm_90a", "9.0"), {}, a}}, {"gemm.tiles.a128"}},
      {"lib-b", {{target("sm_90a", "9.0"), {}, b}, {target("sm_100a", "10.0"), {}, build_job(22, "sm_100a")}}, {}},
  };
  auto np = plan_revalidation(revalidation("580.1"), libraries, 3);
  EXPECT_EQ(np.reason, db::PipelineReason::new_driver);
  EXPECT_EQ(np.repo, "") << "its checks are of several libraries, each its build's";
  EXPECT_EQ(np.commit_sha, k_sha) << "the first check's commit";
  ASSERT_EQ(np.jobs.size(), 2u) << "sm_100a is not checked by 9.0";
  EXPECT_EQ(np.jobs[0].depends_on, 14);
  EXPECT_EQ(np.jobs[0].commit_sha, k_sha);
  EXPECT_EQ(payload(np.jobs[0]).at("instances"), (json::array{"gemm.tiles.a128"}));
  EXPECT_EQ(np.jobs[1].depends_on, 21);
  EXPECT_EQ(np.jobs[1].commit_sha, std::string(40, 'b'));
  EXPECT_FALSE(payload(np.jobs[1]).as_object().contains("instances")) << "no best of lib-b yet: all of it";
  for (const auto& j : np.jobs) {
    EXPECT_EQ(j.gpu_model, "NVIDIA H200");
    EXPECT_EQ(j.purpose, db::JobPurpose::revalidate);
  }
  // One library: the single-library form plans the same jobs.
  auto one = plan_revalidation(revalidation("580.1"), libraries[0].targets, libraries[0].best_instances, 3);
  ASSERT_EQ(one.jobs.size(), 1u);
  EXPECT_EQ(one.jobs[0].depends_on, 14);
  EXPECT_EQ(one.jobs[0].payload_json, np.jobs[0].payload_json);
}

TEST(JobPlan, RegisteredCheckArchesAddToTheTargetsOwnArch) {
  // sm_90a registered for 10.0 only is still checked by 9.0 GPUs (its own arch).
  std::vector<TargetState> targets = {{target("sm_90a", "9.0"), {"10.0"}, build_job(14, "sm_90a")}};
  EXPECT_EQ(plan_revalidation(revalidation(""), targets, {}, 3).jobs.size(), 1u);
}

TEST(JobPlan, ARevalidationWithNothingBuiltHasNoJobs) {
  std::vector<TargetState> targets = {{target("sm_90a", "9.0"), {}, std::nullopt}};
  auto np = plan_revalidation(revalidation(""), targets, {}, 3);
  EXPECT_TRUE(np.jobs.empty());
  EXPECT_TRUE(np.commit_sha.empty());
}

TEST(JobPlan, ARemeasureUsesTheBuildTheMeasurementUsedAndJoinsItsPipeline) {
  db::Job measured;
  measured.id = 30;
  measured.kind = db::JobKind::check;
  measured.commit_sha = k_sha;
  measured.target = "sm_90a";
  measured.arch = "9.0";
  std::vector<db::Job> jobs = {build_job(20, "sm_90a", db::JobStatus::failed, 5), build_job(21, "sm_80"),
                               build_job(22, "sm_90a", db::JobStatus::succeeded, 6), measured};
  RemeasureAsk ask{"sm_90a", "NVIDIA H200", "", {"gemm.mma.a", "gemm.mma.b"}};
  auto plan = plan_remeasure(measured, ask, jobs, 3);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->pipeline_id, 6);
  EXPECT_EQ(plan->job.kind, db::JobKind::check);
  EXPECT_EQ(plan->job.depends_on, 22);
  EXPECT_EQ(plan->job.target, "sm_90a");
  EXPECT_EQ(plan->job.arch, "9.0") << "no arch asked: the measuring job's";
  EXPECT_EQ(plan->job.gpu_model, "NVIDIA H200");
  EXPECT_EQ(plan->job.max_attempts, 3);
  EXPECT_EQ(payload(plan->job),
            (json::object{{"remeasure", true}, {"instances", json::array{"gemm.mma.a", "gemm.mma.b"}}}));
  EXPECT_EQ(plan->job.purpose, db::JobPurpose::remeasure);
  EXPECT_EQ(plan->record.commit_sha, k_sha);
  EXPECT_EQ(plan->record.target, "sm_90a");
  EXPECT_EQ(plan->record.gpu_model, "NVIDIA H200");
  EXPECT_EQ(plan->record.instances_json, R"(["gemm.mma.a","gemm.mma.b"])");

  ask.arch = "9.0a";
  EXPECT_EQ(plan_remeasure(measured, ask, jobs, 3)->job.arch, "9.0a");
}

TEST(JobPlan, NoRemeasureWithoutASucceededBuildOfTheTarget) {
  db::Job measured;
  measured.kind = db::JobKind::check;
  measured.commit_sha = k_sha;
  measured.arch = "9.0";
  std::vector<db::Job> jobs = {build_job(20, "sm_90a", db::JobStatus::failed), build_job(21, "sm_80")};
  EXPECT_FALSE(plan_remeasure(measured, RemeasureAsk{"sm_90a", "NVIDIA H200", "", {"x"}}, jobs, 3));
}

MeasureAsk measure_ask() {
  return MeasureAsk{"NVIDIA H200", "9.0", "gemm", "bf16", "m=3000,n=3000,k=3000", "k=3000,m=3000,n=3000"};
}

TEST(JobPlan, AMeasureRequestIsOneCheckPinnedToTheGpuOnTheArchSpecificTargetsLatestBuild) {
  auto sm90a_build = build_job(21, "sm_90a", db::JobStatus::succeeded, 9);
  sm90a_build.commit_sha = std::string(40, 'c');
  std::vector<TargetState> targets = {{target("sm_80", "8.0"), {"9.0"}, build_job(30, "sm_80")},
                                      {target("sm_90", "9.0"), {}, build_job(25, "sm_90")},
                                      {target("sm_90a", "9.0"), {}, sm90a_build},
                                      {target("sm_100a", "10.0"), {}, build_job(40, "sm_100a")}};
  auto np = plan_measure(measure_ask(), targets, 3);
  ASSERT_TRUE(np);
  EXPECT_EQ(np->reason, db::PipelineReason::manual);
  EXPECT_EQ(np->commit_sha, sm90a_build.commit_sha);
  EXPECT_NE(np->note.find("m=3000,n=3000,k=3000"), std::string::npos) << np->note;
  ASSERT_EQ(np->jobs.size(), 1u) << "one job, whatever the number of targets the arch checks";
  const auto& j = np->jobs[0];
  EXPECT_EQ(j.kind, db::JobKind::check);
  EXPECT_EQ(j.target, "sm_90a") << "the arch's own arch-specific target beats a newer sm_80 build it also checks";
  EXPECT_EQ(j.depends_on, 21);
  EXPECT_EQ(j.commit_sha, sm90a_build.commit_sha);
  EXPECT_EQ(j.arch, "9.0");
  EXPECT_EQ(j.gpu_model, "NVIDIA H200");
  EXPECT_EQ(j.max_attempts, 3);
  auto p = payload(j);
  EXPECT_EQ(p.at("cases"),
            (json::array{json::object{{"family", "gemm"}, {"dtype", "bf16"}, {"shape", "m=3000,n=3000,k=3000"}}}));
  EXPECT_FALSE(p.as_object().contains("instances")) << "every instance of the family is checked on the case";
  EXPECT_EQ(p.at("bench"), json::value(true));
  EXPECT_EQ(p.at("best_request").at("shape"), json::value("k=3000,m=3000,n=3000"));
  EXPECT_EQ(j.purpose, db::JobPurpose::measure_request);
}

TEST(JobPlan, AMeasureRequestFallsBackToATargetTheArchOnlyChecks) {
  std::vector<TargetState> targets = {{target("sm_80", "8.0"), {"9.0"}, build_job(30, "sm_80")},
                                      {target("sm_90a", "9.0"), {}, std::nullopt},
                                      {target("sm_86", "8.6"), {}, build_job(31, "sm_86")}};
  auto np = plan_measure(measure_ask(), targets, 3);
  ASSERT_TRUE(np);
  ASSERT_EQ(np->jobs.size(), 1u);
  EXPECT_EQ(np->jobs[0].target, "sm_80");
  EXPECT_EQ(np->jobs[0].depends_on, 30);
}

// A library's request is a pipeline of that library's repository (its results are the
// library's, whatever repository the commit was recorded in), on the build it is given:
// the caller hands it that library's builds only.
TEST(JobPlan, AMeasureRequestOfALibraryIsThatLibrarysPipelineOnItsBuild) {
  MeasureAsk ask = measure_ask();
  ask.repo = "norm-b";
  auto library_build = build_job(17, "sm_90a", db::JobStatus::succeeded, 4);
  library_build.commit_sha = std::string(40, 'b');
  std::vector<TargetState> targets = {{target("sm_90a", "9.0"), {}, library_build}};
  auto np = plan_measure(ask, targets, 3);
  ASSERT_TRUE(np);
  EXPECT_EQ(np->repo, "norm-b");
  EXPECT_EQ(np->commit_sha, library_build.commit_sha);
  ASSERT_EQ(np->jobs.size(), 1u);
  EXPECT_EQ(np->jobs[0].depends_on, 17);
  EXPECT_EQ(np->jobs[0].commit_sha, library_build.commit_sha);
  // Of no library: no repository named, as before libraries were told apart.
  auto none = plan_measure(measure_ask(), targets, 3);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->repo, "");
}

TEST(JobPlan, NoMeasureRequestWithoutABuildTheArchChecks) {
  std::vector<TargetState> targets = {{target("sm_90a", "9.0"), {}, std::nullopt},
                                      {target("sm_100a", "10.0"), {}, build_job(40, "sm_100a")}};
  EXPECT_FALSE(plan_measure(measure_ask(), targets, 3));
}

}  // namespace
}  // namespace kport::coordinator::app
