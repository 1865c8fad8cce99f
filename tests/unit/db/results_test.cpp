// Results, build records and the queries built on them.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "test_support.h"

namespace kport::db::test {

namespace {

ResultRecord result(const std::string& instance, const std::string& shape, double median_us,
                    ResultStatus status = ResultStatus::passed, const std::string& gpu = "NVIDIA H200") {
  ResultRecord r;
  r.commit_sha = std::string(40, 'a');
  r.target = "sm_90a";
  r.family = "gemm";
  r.variant = instance.substr(0, instance.find('.'));
  r.instance = instance;
  r.dtype = "bf16";
  r.shape = shape;
  r.toolkit = "12.8";
  r.gpu_model = gpu;
  r.arch = "9.0";
  r.status = status;
  r.median_us = median_us;
  r.stddev_us = median_us / 100;
  r.samples = 50;
  r.env_json = R"({"clock_mhz":1980})";
  return r;
}

}  // namespace

class ResultsTest : public StoreTest {
 protected:
  // A running check job on an H200 runner, for uploads tied to a job attempt.
  Claim running_check() {
    NewPipeline np;
    np.commit_sha = std::string(40, 'a');
    np.jobs.push_back(JobSpec{JobKind::check, np.commit_sha, "sm_90a", "9.0", {}, {}, 3, ""});
    ok(m_store->create_pipeline(np));
    m_gpu = gpu_runner("h200", "9.0");
    auto c = ok(m_store->claim(m_gpu.id));
    if (!c) throw std::runtime_error("no job to claim");
    return *c;
  }
  ResultRecord for_job(ResultRecord r, const Claim& c) {
    r.job_id = c.job.id;
    r.attempt = c.job.attempt;
    r.runner_id = m_gpu.id;
    return r;
  }
  Runner m_gpu;
};

TEST_F(ResultsTest, SameUploadTwiceStoresOneCopy) {
  auto c = running_check();
  std::vector<ResultRecord> upload{for_job(result("wgmma.a", "m=1024,n=1024,k=1024", 10), c),
                                   for_job(result("wgmma.b", "m=1024,n=1024,k=1024", 12), c)};
  auto first = ok(m_store->put_results(upload));
  auto second = ok(m_store->put_results(upload));
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(first[i].duplicate);
    EXPECT_TRUE(second[i].duplicate);
    EXPECT_EQ(first[i].id, second[i].id);
  }
  ResultFilter f;
  f.job_id = c.job.id;
  EXPECT_EQ(ok(m_store->list_results(f)).items.size(), 2u);
  auto stored = ok(m_store->get_result(first[0].id));
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->instance, "wgmma.a");
  EXPECT_EQ(stored->env_json, R"({"clock_mhz":1980})");
  EXPECT_EQ(stored->samples, 50);
}

// Migration 0011: a figure keeps how many samples the harness dropped at a throttled clock;
// a result that does not say stores NULL, not 0.
TEST_F(ResultsTest, ThrottledSamplesDroppedAreStoredAndReadBack) {
  auto c = running_check();
  auto timed = for_job(result("wgmma.a", "m=64,n=64,k=64", 10), c);
  timed.samples_dropped = 3;
  auto unsaid = for_job(result("wgmma.b", "m=64,n=64,k=64", 12), c);
  auto ids = ok(m_store->put_results({timed, unsaid}));
  EXPECT_EQ(ok(m_store->get_result(ids[0].id))->samples_dropped, 3);
  EXPECT_FALSE(ok(m_store->get_result(ids[1].id))->samples_dropped);
}

// Migration 0014: the metrics beyond the columns are kept as the object given ('{}' when
// none); text that is not JSON is refused and the batch stores nothing.
TEST_F(ResultsTest, MetricsBeyondTheColumnsAreKeptAsGiven) {
  auto c = running_check();
  auto measured = for_job(result("wgmma.a", "m=64,n=64,k=64", 10), c);
  measured.metrics_json = R"({"clock_mhz_min":1755})";
  auto plain = for_job(result("wgmma.b", "m=64,n=64,k=64", 12), c);
  auto ids = ok(m_store->put_results({measured, plain}));
  EXPECT_EQ(ok(m_store->get_result(ids[0].id))->metrics_json, R"({"clock_mhz_min":1755})");
  EXPECT_EQ(ok(m_store->get_result(ids[1].id))->metrics_json, "{}");
  auto broken = for_job(result("wgmma.c", "m=64,n=64,k=64", 14), c);
  broken.metrics_json = "{clock";
  auto refused = m_store->put_results({broken});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::invalid_argument);
  EXPECT_NE(refused.error().message.find("metrics_json"), std::string::npos) << refused.error().message;
}

TEST_F(ResultsTest, UploadsFromAStaleAttemptOrAnotherRunnerAreRefused) {
  auto c = running_check();
  auto stale = result("wgmma.a", "m=64,n=64,k=64", 1);
  stale = for_job(stale, c);
  stale.attempt = c.job.attempt - 1;
  auto r = m_store->put_results({stale});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::conflict);
  auto other = for_job(result("wgmma.a", "m=64,n=64,k=64", 1), c);
  other.runner_id = gpu_runner("intruder", "9.0").id;
  r = m_store->put_results({other});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::forbidden);
  EXPECT_NE(r.error().message.find("leased to runner " + std::to_string(m_gpu.id)), std::string::npos)
      << r.error().message;
}

// Issue 14: a runner leasing commit A's check posted results for commit B and target
// sm_100a, and they were stored and fed to best answers.
TEST_F(ResultsTest, ResultsForAnotherCommitTargetOrGpuThanTheirJobAreRefused) {
  auto c = running_check();
  const std::pair<std::string, std::function<void(ResultRecord&)>> lies[] = {
      {"commit", [](ResultRecord& r) { r.commit_sha = std::string(40, 'b'); }},
      {"target", [](ResultRecord& r) { r.target = "sm_100a"; }},
      {"gpu_model", [](ResultRecord& r) { r.gpu_model = "NVIDIA B200"; }},
      {"arch", [](ResultRecord& r) { r.arch = "10.0"; }}};
  for (const auto& [field, lie] : lies) {
    auto r = for_job(result("wgmma.a", "m=64,n=64,k=64", 1), c);
    lie(r);
    auto out = m_store->put_results({r});
    ASSERT_FALSE(out.ok()) << field;
    EXPECT_EQ(out.error().code, Errc::conflict) << field;
    EXPECT_NE(out.error().message.find("names " + field + " '"), std::string::npos) << out.error().message;
  }
  EXPECT_TRUE(ok(m_store->list_results(ResultFilter{})).items.empty());

  // What a row leaves out comes from the job and the runner's registration.
  auto bare = for_job(result("wgmma.a", "m=64,n=64,k=64", 1), c);
  bare.commit_sha.clear();
  bare.target.clear();
  bare.gpu_model.clear();
  bare.arch.clear();
  auto id = ok(m_store->put_results({bare})).at(0).id;
  auto stored = ok(m_store->get_result(id));
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->commit_sha, std::string(40, 'a'));
  EXPECT_EQ(stored->target, "sm_90a");
  EXPECT_EQ(stored->gpu_model, "NVIDIA H200");
  EXPECT_EQ(stored->arch, "9.0");
  EXPECT_EQ(stored->runner_id, m_gpu.id);
}

// Issue 14: results were accepted after the job completed.
TEST_F(ResultsTest, AnEndedOrExpiredAttemptTakesNoMoreUploads) {
  auto c = running_check();
  auto first = for_job(result("wgmma.a", "m=64,n=64,k=64", 1), c);
  ok(m_store->put_results({first}));
  ok(m_store->complete(c.job.id, m_gpu.id, c.job.attempt));
  for (const auto& r : {first, for_job(result("wgmma.b", "m=64,n=64,k=64", 1), c)}) {
    auto late = m_store->put_results({r});
    ASSERT_FALSE(late.ok()) << "neither a replay nor a new row after complete";
    EXPECT_EQ(late.error().code, Errc::conflict);
    EXPECT_NE(late.error().message.find("ended (succeeded)"), std::string::npos) << late.error().message;
  }
  EXPECT_EQ(m_store->append_job_log(c.job.id, m_gpu.id, c.job.attempt, "late\n").error().code, Errc::conflict);

  // A lease that ran out is over even before the reaper requeues the job.
  NewPipeline np;
  np.commit_sha = std::string(40, 'a');
  np.jobs.push_back(JobSpec{JobKind::check, np.commit_sha, "sm_90a", "9.0", {}, {}, 3, ""});
  ok(m_store->create_pipeline(np));
  auto second = ok(m_store->claim(m_gpu.id));
  ASSERT_TRUE(second);
  *m_now += 10'000;
  auto expired = m_store->put_results({for_job(result("wgmma.a", "m=64,n=64,k=64", 1), *second)});
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().code, Errc::conflict);
  EXPECT_NE(expired.error().message.find("lease expired"), std::string::npos) << expired.error().message;
  EXPECT_EQ(m_store->complete(second->job.id, m_gpu.id, second->job.attempt).error().code, Errc::conflict);
}

TEST_F(ResultsTest, BuildJobsTakeNoResultsAndTheirRecordsComeFromTheHolder) {
  pipeline_with_builds({"sm_90a"});
  auto a = build_runner("a", {"sm_90a"});
  auto b = build_runner("b", {"sm_90a"});
  auto c = ok(m_store->claim(a.id));
  ASSERT_TRUE(c);
  BuildRecord rec;
  rec.job_id = c->job.id;
  rec.attempt = c->job.attempt;
  rec.family = "gemm";
  rec.variant = "wgmma";
  rec.status = BuildStatus::compile_error;
  auto forged = m_store->put_build_records({rec}, b.id);
  ASSERT_FALSE(forged.ok());
  EXPECT_EQ(forged.error().code, Errc::forbidden);
  EXPECT_EQ(m_store->put_build_records({rec}).error().code, Errc::invalid_argument)
      << "a job's record names its writer";
  auto other_target = rec;
  other_target.target = "sm_100a";
  auto lied = m_store->put_build_records({other_target}, a.id);
  ASSERT_FALSE(lied.ok());
  EXPECT_EQ(lied.error().code, Errc::conflict);
  EXPECT_NE(lied.error().message.find("names target 'sm_100a'"), std::string::npos) << lied.error().message;
  auto stored = ok(m_store->put_build_records({rec}, a.id));
  BuildRecordFilter f;
  f.job_id = c->job.id;
  auto listed = ok(m_store->list_build_records(f)).items;
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, stored.at(0).id);
  EXPECT_EQ(listed[0].commit_sha, c->job.commit_sha);
  EXPECT_EQ(listed[0].target, "sm_90a");

  ResultRecord r = result("wgmma.a", "m=64,n=64,k=64", 1);
  r.job_id = c->job.id;
  r.attempt = c->job.attempt;
  r.runner_id = a.id;
  auto on_build = m_store->put_results({r});
  ASSERT_FALSE(on_build.ok());
  EXPECT_EQ(on_build.error().code, Errc::conflict);
  EXPECT_NE(on_build.error().message.find("build job"), std::string::npos) << on_build.error().message;

  // Issue 14: a log for attempt 77 was accepted.
  auto log77 = m_store->append_job_log(c->job.id, a.id, 77, "x");
  ASSERT_FALSE(log77.ok());
  EXPECT_EQ(log77.error().code, Errc::conflict);
  EXPECT_NE(log77.error().message.find("has no attempt 77"), std::string::npos) << log77.error().message;
  EXPECT_EQ(m_store->append_job_log(c->job.id, b.id, c->job.attempt, "x").error().code, Errc::forbidden);
  EXPECT_TRUE(ok(m_store->job_log(c->job.id)).empty());
}

TEST_F(ResultsTest, ABatchWithABadRowStoresNothing) {
  auto c = running_check();
  auto good = for_job(result("wgmma.a", "m=64,n=64,k=64", 1), c);
  auto bad = good;
  bad.instance = "wgmma.b";
  bad.job_id = 999'999;
  EXPECT_FALSE(m_store->put_results({good, bad}).ok());
  EXPECT_TRUE(ok(m_store->list_results(ResultFilter{})).items.empty());

  auto bad_shape = result("wgmma.a", "m=64,n", 1);
  auto r = m_store->put_results({bad_shape});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_NE(r.error().message.find("m=64,n"), std::string::npos);
}

TEST_F(ResultsTest, KeysetPagesCoverEveryRowOnce) {
  std::vector<ResultRecord> rows;
  for (int i = 0; i < 250; ++i)
    rows.push_back(result("simt.i" + std::to_string(i), "m=" + std::to_string(i) + ",n=8,k=8", 1 + i));
  ok(m_store->put_results(rows));
  ResultFilter f;
  f.family = "gemm";
  f.limit = 100;
  std::vector<std::int64_t> seen;
  for (;;) {
    auto page = ok(m_store->list_results(f));
    for (const auto& r : page.items) seen.push_back(r.id);
    if (!page.next_cursor) break;
    f.before_id = page.next_cursor;
  }
  ASSERT_EQ(seen.size(), 250u);
  EXPECT_TRUE(std::is_sorted(seen.rbegin(), seen.rend())) << "newest first";
  EXPECT_EQ(std::set<std::int64_t>(seen.begin(), seen.end()).size(), 250u);

  ResultFilter none;
  none.gpu_model = "NVIDIA B200";
  EXPECT_TRUE(ok(m_store->list_results(none)).items.empty());
  ResultFilter too_big;
  too_big.limit = 1001;
  EXPECT_EQ(m_store->list_results(too_big).error().code, Errc::invalid_argument);
}

TEST_F(ResultsTest, EveryFilterCombinationNarrowsTheRows) {
  std::vector<ResultRecord> rows;
  for (int i = 0; i < 60; ++i) {
    auto r = result(i % 2 ? "wgmma.a" : "mma.b", "m=" + std::to_string(64 << (i % 3)) + ",n=64,k=64", 1 + i,
                    i % 5 ? ResultStatus::passed : ResultStatus::failed, i % 4 ? "NVIDIA H200" : "NVIDIA H100");
    r.commit_sha = std::string(40, i < 30 ? 'a' : 'b');
    r.target = i % 3 ? "sm_90a" : "sm_80";
    rows.push_back(r);
  }
  ok(m_store->put_results(rows));
  auto count = [&](ResultFilter f) {
    f.limit = 1000;
    return ok(m_store->list_results(f)).items.size();
  };
  auto expected = [&](auto pred) { return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), pred)); };
  ResultFilter f;
  f.commit_sha = std::string(40, 'b');
  f.target = "sm_90a";
  f.gpu_model = "NVIDIA H200";
  EXPECT_EQ(count(f), expected([](const ResultRecord& r) {
              return r.commit_sha[0] == 'b' && r.target == "sm_90a" && r.gpu_model == "NVIDIA H200";
            }));
  ResultFilter g;
  g.gpu_model = "NVIDIA H100";
  g.family = "gemm";
  g.dtype = "bf16";
  g.status = ResultStatus::failed;
  g.target = "sm_80";
  EXPECT_EQ(count(g), expected([](const ResultRecord& r) {
              return r.gpu_model == "NVIDIA H100" && r.status == ResultStatus::failed && r.target == "sm_80";
            }));
  ResultFilter h;
  h.target = "sm_90a";
  h.variant = "wgmma";
  h.shape = "m=128,n=64,k=64";
  EXPECT_EQ(count(h), expected([](const ResultRecord& r) {
              return r.target == "sm_90a" && r.variant == "wgmma" && r.shape == "m=128,n=64,k=64";
            }));
  EXPECT_GT(count(h), 0u);
}

TEST_F(ResultsTest, BuildRecordsAreIdempotentAndFeedTheBringupFacts) {
  NewPipeline np;
  np.commit_sha = std::string(40, 'a');
  // A commit kport knows no time of (queued by hand, time 0): the burndown places its stages
  // when their records and results arrived, not at 1970.
  ok(m_store->upsert_repository("kernels", "/srv/git/kernels.git"));
  ok(m_store->put_commit(Commit{np.commit_sha, "kernels", {}, "msg", "dev", 0}));
  np.jobs.push_back(JobSpec{JobKind::build, np.commit_sha, "sm_90a", {}, {}, {}, 3, ""});
  ok(m_store->create_pipeline(np));
  auto b = build_runner("b", {"sm_90a"});
  auto c = ok(m_store->claim(b.id));
  ASSERT_TRUE(c);
  ok(m_store->upsert_kernel_instances({{"wgmma.a", "gemm", "wgmma", "[\"wgmma\"]", "{}"},
                                       {"mma.c", "gemm", "mma", "[]", "{}"},
                                       {"tc.x", "gemm", "tcgen05", "[\"tcgen05\"]", "{}"}}));
  auto rec = [&](const std::string& variant, BuildStatus st, std::int64_t spills) {
    BuildRecord r;
    r.job_id = c->job.id;
    r.attempt = 1;
    r.commit_sha = np.commit_sha;
    r.target = "sm_90a";
    r.family = "gemm";
    r.variant = variant;
    r.status = st;
    r.registers = 168;
    r.spill_stores_bytes = spills;
    r.spill_loads_bytes = spills;
    return r;
  };
  std::vector<BuildRecord> records{rec("wgmma", BuildStatus::ok, 0), rec("mma", BuildStatus::ok, 64),
                                   rec("tcgen05", BuildStatus::not_applicable, 0)};
  auto first = ok(m_store->put_build_records(records, b.id));
  auto again = ok(m_store->put_build_records(records, b.id));
  EXPECT_TRUE(again[0].duplicate && again[1].duplicate && again[2].duplicate);
  EXPECT_EQ(first[1].id, again[1].id);
  // The same variant name in another family is another record, not a duplicate.
  auto other_family = rec("mma", BuildStatus::ok, 0);
  other_family.family = "attention";
  auto attention = ok(m_store->put_build_records({other_family}, b.id));
  EXPECT_FALSE(attention[0].duplicate);
  EXPECT_NE(attention[0].id, first[1].id);
  ok(m_store->put_results({result("wgmma.a", "m=64,n=64,k=64", 3), result("mma.c", "m=64,n=64,k=64", 4)}));

  auto built = ok(m_store->built_variants("sm_90a", "gemm"));
  ASSERT_EQ(built.size(), 2u);
  // The board holds facts, not stages (porting's decide_stages turns them into stages).
  auto up = ok(m_store->target_board("sm_90a"));
  ASSERT_TRUE(up);
  EXPECT_EQ(up->stage_commit, np.commit_sha);
  ASSERT_EQ(up->variants.size(), 4u);  // gemm: wgmma, mma, tcgen05; attention: mma
  std::map<std::string, VariantBoard> by;
  for (const auto& r : up->variants)
    if (r.family == "gemm") by[r.variant] = r;
  EXPECT_EQ(by.size(), 3u);
  EXPECT_EQ(by["wgmma"].build_status, "ok");
  EXPECT_EQ(by["wgmma"].spill_bytes, 0);
  EXPECT_EQ(by["wgmma"].passed, 1);
  EXPECT_EQ(by["wgmma"].measured, 1);
  EXPECT_EQ(by["wgmma"].selected, 1);
  EXPECT_EQ(by["wgmma"].features_json, "[\"wgmma\"]");
  EXPECT_GE(by["wgmma"].built_ms.value_or(0), 1'000'000) << "the record's arrival, the commit's time being unknown";
  EXPECT_GE(by["wgmma"].numerics_ms.value_or(0), 1'000'000);
  EXPECT_EQ(by["mma"].spill_bytes, 128) << "stores and loads";
  EXPECT_EQ(by["mma"].selected, 0) << "wgmma is faster";
  EXPECT_EQ(by["tcgen05"].build_status, "not_applicable");
  EXPECT_EQ(by["tcgen05"].features_json, "[\"tcgen05\"]");
  EXPECT_FALSE(ok(m_store->target_board("sm_999")).has_value());

  // A later commit rebuilt: its records and results are the facts now; an earlier pass
  // stays in the history only.
  const std::string later(40, 'b');
  ok(m_store->put_commit(Commit{later, "kernels", np.commit_sha, "msg", "dev", 0}));
  std::vector<BuildRecord> rebuilt{rec("wgmma", BuildStatus::ok, 0), rec("mma", BuildStatus::compile_error, 0)};
  for (auto& r : rebuilt) {
    r.commit_sha = later;
    r.job_id.reset();  // recorded by an operator, outside a job
  }
  ok(m_store->put_build_records(rebuilt));
  auto failing = result("wgmma.a", "m=64,n=64,k=64", 3, ResultStatus::failed);
  failing.commit_sha = later;
  ok(m_store->put_results({failing}));
  auto now = ok(m_store->target_board("sm_90a"));
  ASSERT_TRUE(now);
  EXPECT_EQ(now->stage_commit, later);
  by.clear();
  for (const auto& r : now->variants)
    if (r.family == "gemm") by[r.variant] = r;
  EXPECT_EQ(by["wgmma"].passed, 0);
  EXPECT_EQ(by["wgmma"].failed, 1);
  EXPECT_TRUE(by["wgmma"].numerics_ms.has_value()) << "the burndown keeps the first pass";
  EXPECT_EQ(by["mma"].build_status, "compile_error");
  EXPECT_FALSE(by["tcgen05"].build_status.has_value()) << "no record at the later commit";
  // Asked for the first commit, the board shows that commit's facts.
  auto then = ok(m_store->target_board("sm_90a", np.commit_sha));
  ASSERT_TRUE(then);
  for (const auto& r : then->variants)
    if (r.family == "gemm" && r.variant == "wgmma") {
      EXPECT_EQ(r.passed, 1);
    }

  auto summary = ok(m_store->commit_summary(np.commit_sha));
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->builds_by_status[BuildStatus::ok], 3);  // gemm.wgmma, gemm.mma, attention.mma
  EXPECT_EQ(summary->results_by_status[ResultStatus::passed], 2);
  EXPECT_EQ(summary->jobs_by_status[JobStatus::running], 1);
  EXPECT_EQ(summary->targets, std::vector<std::string>{"sm_90a"});
}

// "Selected best" is select_best's answer, not the smallest median: an unstable figure
// within noise of a stable one does not make its variant selected.
TEST_F(ResultsTest, TheSelectedStageFollowsTheSelectionRuleNotTheSmallestMedian) {
  auto fast_but_unstable = result("wgmma.a", "m=64,n=64,k=64", 3.00);
  fast_but_unstable.unstable = true;
  auto stable = result("mma.c", "m=64,n=64,k=64", 3.02);  // within 1 %: a tie
  ok(m_store->put_results({fast_but_unstable, stable}));
  auto up = ok(m_store->target_board("sm_90a"));
  ASSERT_TRUE(up);
  std::map<std::string, std::int64_t> selected;
  for (const auto& r : up->variants) selected[r.variant] = r.selected;
  EXPECT_EQ(selected["mma"], 1) << "the stable figure ranks first in a tie";
  EXPECT_EQ(selected["wgmma"], 0);
}

}  // namespace kport::db::test
