// Bisections and their probe pipelines in the store (migrations 0015, 0018).
#include "test_support.h"

namespace kport::db::test {
namespace {

const std::string k_good(40, 'a'), k_mid(40, 'b'), k_bad(40, 'c'), k_next(40, 'd');

class BisectionStoreTest : public StoreTest {
 protected:
  Bisection bisection() {
    Bisection b;
    b.kind = "numerics_failure";
    b.origin = "auto";
    b.repo = "kernels";
    b.target = "sm_90a";
    b.gpu_model = "NVIDIA H200";
    b.arch = "9.0";
    b.good_sha = k_good;
    b.bad_sha = k_bad;
    b.commits_json = "[\"" + k_good + "\",\"" + k_mid + "\",\"" + k_bad + "\"]";
    b.cases_json = "[]";
    b.summary = "probing both ends again";
    return b;
  }
  NewPipeline probe(const std::string& sha) {
    NewPipeline p;
    p.reason = PipelineReason::manual;
    p.repo = "kernels";
    p.commit_sha = sha;
    JobSpec spec;
    spec.kind = JobKind::build;
    spec.commit_sha = sha;
    spec.target = "sm_90a";
    spec.payload_json = R"({"variants":["gemm.mma"]})";
    p.jobs.push_back(spec);
    return p;
  }
  ResultRecord result(const std::string& sha, std::optional<std::int64_t> job, std::optional<std::int64_t> runner) {
    ResultRecord r;
    r.job_id = job;
    r.attempt = 1;
    r.runner_id = runner;
    r.commit_sha = sha;
    r.target = "sm_90a";
    r.family = "gemm";
    r.variant = "mma";
    r.instance = "gemm.mma.default";
    r.dtype = "bf16";
    r.shape = "m=64,n=64,k=64";
    r.toolkit = "13.0";
    r.gpu_model = "NVIDIA H200";
    r.arch = "9.0";
    r.driver = "580.1";
    r.status = ResultStatus::failed;
    return r;
  }
};

TEST_F(BisectionStoreTest, AReasonIsBisectedOnceAndItsProbesStayOutOfVerdicts) {
  ok(m_store->upsert_repository("kernels", "/srv/kernels.git"));
  ok(m_store->put_commit(Commit{k_good, "kernels", std::nullopt, "good", "", 0}));
  ok(m_store->put_commit(Commit{k_mid, "kernels", k_good, "mid", "", 0}));
  ok(m_store->put_commit(Commit{k_bad, "kernels", k_mid, "bad", "", 0}));
  ok(m_store->put_commit(Commit{k_next, "kernels", k_bad, "next", "", 0}));
  ok(m_store->put_results({result(k_good, std::nullopt, std::nullopt)}));  // the good end was validated

  Bisection pinned = bisection();
  pinned.driver = "580.1";  // the bad end's driver: every probe is timed on it
  auto opened = ok(m_store->open_bisection(pinned, {probe(k_mid)}));
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->state, "running");
  EXPECT_EQ(opened->driver, "580.1");
  ASSERT_EQ(opened->probes.size(), 1u);
  EXPECT_EQ(opened->probes[0].commit_sha, k_mid);
  EXPECT_FALSE(ok(m_store->open_bisection(bisection(), {probe(k_mid)}))) << "the same reason twice";
  EXPECT_EQ(ok(m_store->list_pipelines(PipelineFilter{})).items.size(), 1u) << "nothing created the second time";
  const std::int64_t pipeline = opened->probes[0].pipeline_id;
  EXPECT_EQ(ok(m_store->bisection_of_pipeline(pipeline)), opened->id);
  EXPECT_FALSE(ok(m_store->bisection_of_pipeline(pipeline + 100)));

  // The probe's build spawns one check, pinned to the GPU model that saw the reason and to
  // the bisection's driver.
  const Runner builder = build_runner("b", {"sm_90a"});
  auto build = ok(m_store->claim(builder.id));
  ASSERT_TRUE(build);
  auto done = ok(m_store->complete(build->job.id, builder.id, build->job.attempt));
  ASSERT_EQ(done.spawned.size(), 1u);
  const Job check = job(done.spawned[0]);
  EXPECT_EQ(check.gpu_model, "NVIDIA H200");
  EXPECT_EQ(check.driver, "580.1");
  EXPECT_EQ(check.arch, "9.0");
  EXPECT_EQ(check.payload_json, R"({"variants":["gemm.mma"]})");
  const Runner other_driver = gpu_runner("g570", "9.0");  // 570.86
  EXPECT_FALSE(ok(m_store->claim(other_driver.id)).has_value()) << "a probe is not timed on another driver";
  const Runner gpu = gpu_runner("g", "9.0", "NVIDIA H200", "580.1");
  auto claimed = ok(m_store->claim(gpu.id));
  ASSERT_TRUE(claimed);
  ok(m_store->put_results({result(k_mid, claimed->job.id, gpu.id)}));

  // The probe's records are the search's: not the commit's verdict, and they do not make
  // the probed commit the validated ancestor of what follows it.
  const auto inputs = ok(m_store->probe_inputs(pipeline));
  EXPECT_EQ(inputs.jobs.size(), 2u);
  EXPECT_EQ(inputs.results.size(), 1u);
  const auto mine = ok(m_store->verdict_inputs(k_mid));
  EXPECT_TRUE(mine.jobs.empty());
  EXPECT_TRUE(mine.results.empty());
  EXPECT_EQ(ok(m_store->validated_ancestor(k_next)), k_good);

  EXPECT_TRUE(ok(m_store->add_bisection_probes(opened->id, {probe(k_bad)})));
  ok(m_store->note_bisection(opened->id, "1 commit left"));
  BisectionFilter by_commit;
  by_commit.commit = k_bad;
  EXPECT_EQ(ok(m_store->list_bisections(by_commit)).items.size(), 1u);
  by_commit.commit = k_next;
  EXPECT_TRUE(ok(m_store->list_bisections(by_commit)).items.empty());

  BisectionEnd end;
  end.cause = "code";
  end.first_bad_sha = k_mid;
  end.summary = "first bad commit";
  EXPECT_TRUE(ok(m_store->finish_bisection(opened->id, end)));
  EXPECT_FALSE(ok(m_store->finish_bisection(opened->id, end))) << "ended once";
  EXPECT_FALSE(ok(m_store->add_bisection_probes(opened->id, {probe(k_bad)}))) << "no probes after the end";
  const auto b = ok(m_store->get_bisection(opened->id));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->state, "done");
  EXPECT_EQ(b->cause, "code");
  EXPECT_EQ(b->first_bad_sha, k_mid);
  EXPECT_EQ(b->summary, "first bad commit");
  EXPECT_EQ(b->probes.size(), 2u);
  EXPECT_TRUE(b->finished_ms);
  BisectionFilter done_only;
  done_only.state = "done";
  EXPECT_EQ(ok(m_store->list_bisections(done_only)).items.size(), 1u);
  EXPECT_FALSE(ok(m_store->get_bisection(999)));
}

TEST_F(BisectionStoreTest, ACancelledEndEnqueuesItsDeliveriesOnceAndKeepsTheBadEndsProvenance) {
  ok(m_store->upsert_repository("kernels", "/srv/kernels.git"));
  ok(m_store->put_commit(Commit{k_good, "kernels", std::nullopt, "good", "", 0}));
  ok(m_store->put_commit(Commit{k_mid, "kernels", k_good, "mid", "", 0}));
  ok(m_store->put_commit(Commit{k_bad, "kernels", k_mid, "bad", "", 0}));
  Bisection what = bisection();
  what.bad_env_json = R"({"toolkit":"13.0","driver":"590.2","runner":"GPU-2"})";
  auto opened = ok(m_store->open_bisection(what, {probe(k_good), probe(k_bad)}));
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->bad_env_json, what.bad_env_json);
  EXPECT_EQ(opened->good_env_json, "{}");

  NewDelivery hook;
  hook.kind = "webhook";
  hook.subject = "webhook https://hooks.example/kport";
  hook.event = "bisection.finished";
  hook.commit_sha = k_bad;
  hook.url = "https://hooks.example/kport";
  hook.body = R"({"event":"bisection.finished"})";
  BisectionEnd end;
  end.state = "cancelled";
  end.summary = "cancelled by hand";
  NewDelivery broken = hook;
  broken.url.clear();
  EXPECT_FALSE(m_store->finish_bisection(opened->id, end, {broken}).ok()) << "a delivery without a url";
  BisectionEnd unknown = end;
  unknown.state = "paused";
  EXPECT_FALSE(m_store->finish_bisection(opened->id, unknown).ok());
  EXPECT_TRUE(ok(m_store->finish_bisection(opened->id, end, {hook})));
  EXPECT_FALSE(ok(m_store->finish_bisection(opened->id, end, {hook}))) << "ended once, told once";
  DeliveryFilter df;
  const auto queued = ok(m_store->list_deliveries(df)).items;
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].event, "bisection.finished");
  EXPECT_EQ(queued[0].state, "pending");
  const auto b = ok(m_store->get_bisection(opened->id));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->state, "cancelled");
  EXPECT_FALSE(b->cause);
  BisectionFilter cancelled;
  cancelled.state = "cancelled";
  EXPECT_EQ(ok(m_store->list_bisections(cancelled)).items.size(), 1u);
  // No push pipeline of the bad commit was reported: nothing to send again.
  EXPECT_TRUE(ok(m_store->commit_reports(k_bad)).empty());
}

}  // namespace
}  // namespace kport::db::test
