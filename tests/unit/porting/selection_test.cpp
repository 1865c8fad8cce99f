#include "kport/porting/selection.h"

#include <gtest/gtest.h>

#include "kport_families.h"

namespace kport::porting {
namespace {

const char* k_cube = "m=4096,n=4096,k=4096";

// A passing, timed figure; `commit_ms` orders commits, `ratio` defaults to a 200 us baseline.
Measurement meas(std::int64_t id, std::string instance, std::string shape, double median, double stddev = 0.1,
                 std::string gpu = "NVIDIA H200", std::string arch = "9.0", std::int64_t commit_ms = 1000,
                 std::string commit = "c1") {
  Measurement m;
  m.result_id = id;
  m.instance = instance;
  m.variant = instance.substr(instance.find('.') + 1, instance.rfind('.') - instance.find('.') - 1);
  m.gpu_model = gpu;
  m.arch = arch;
  m.target = arch == "9.0" ? "sm_90a" : "sm_80";
  m.driver = "580.1";
  m.commit = commit;
  m.commit_ms = commit_ms;
  m.shape = *Shape::parse(shape);
  m.median_us = median;
  m.stddev_us = stddev;
  m.samples = 50;
  m.ratio = 200.0 / median;
  m.measured_at_ms = commit_ms + id;
  return m;
}

Measurement failed(Measurement m, std::string status = "failed") {
  m.status = std::move(status);
  m.median_us = 0;
  m.ratio.reset();
  return m;
}

SelectionQuery query(std::string shape, std::string gpu = "NVIDIA H200", std::string arch = "9.0",
                     std::string target = "sm_90a") {
  return SelectionQuery{gpu, arch, target, *Shape::parse(shape), "bf16"};
}

Selection on_gpu(const SelectionQuery& q, const std::vector<Measurement>& rows) {
  return select_best(q, SelectionInputs{.on_gpu = rows});
}

}  // namespace

TEST(Selection, FastestPassingMedianWinsOnExactShape) {
  std::vector<Measurement> rows = {meas(1, "gemm.simt.64x64", k_cube, 900.0),
                                   meas(2, "gemm.wgmma_tma.128x256", k_cube, 200.0),
                                   meas(3, "gemm.mma_sync.128x128", k_cube, 300.0)};
  auto sel = on_gpu(query(k_cube), rows);
  EXPECT_EQ(sel.kind, Selection::Kind::measured);
  EXPECT_EQ(sel.ranked_by, "median_us");
  EXPECT_TRUE(sel.exact_shape);
  ASSERT_EQ(sel.ranking.size(), 3u);
  ASSERT_NE(sel.best(), nullptr);
  EXPECT_EQ(sel.best()->instance, "gemm.wgmma_tma.128x256");
  EXPECT_EQ(sel.ranking[0].evidence->result_id, 2);
  EXPECT_FALSE(sel.ranking[0].tie_with_best);
  EXPECT_DOUBLE_EQ(sel.ranking[1].slowdown, 1.5);
  EXPECT_EQ(sel.evidence.commits, std::vector<std::string>{"c1"});
  EXPECT_EQ(sel.evidence.drivers, std::vector<std::string>{"580.1"});
  EXPECT_EQ(sel.evidence.result_ids, (std::vector<std::int64_t>{2, 3, 1}));
  EXPECT_EQ(sel.evidence.samples, 150);
}

TEST(Selection, MediansWithinNoiseAreReportedAsATie) {
  std::vector<Measurement> rows = {meas(1, "gemm.a.x", k_cube, 200.0, 2.0), meas(2, "gemm.b.x", k_cube, 203.0, 2.0),
                                   meas(3, "gemm.c.x", k_cube, 260.0, 2.0)};
  auto sel = on_gpu(query(k_cube), rows);
  EXPECT_TRUE(sel.ranking[0].tie_with_best);
  EXPECT_TRUE(sel.ranking[1].tie_with_best);
  EXPECT_FALSE(sel.ranking[2].tie_with_best);
}

TEST(Selection, TieNeedsMoreThanTheOnePercentFloorWhenSpreadIsTight) {
  auto a = meas(1, "gemm.a.x", k_cube, 100.0, 0.01);
  EXPECT_TRUE(is_tie(a, meas(2, "gemm.b.x", k_cube, 100.9, 0.01)));
  EXPECT_FALSE(is_tie(a, meas(2, "gemm.b.x", k_cube, 101.5, 0.01)));
}

TEST(Selection, NearestShapeStandsInAndSaysSo) {
  std::vector<Measurement> rows = {meas(1, "gemm.a.x", "m=2048,n=2048,k=2048", 50.0),
                                   meas(2, "gemm.a.x", "m=8192,n=8192,k=8192", 2000.0)};
  auto sel = on_gpu(query("m=7000,n=8192,k=8192"), rows);
  EXPECT_EQ(sel.kind, Selection::Kind::measured);
  EXPECT_FALSE(sel.exact_shape);
  EXPECT_EQ(sel.matched_shape->canonical(), "k=8192,m=8192,n=8192");
  EXPECT_NE(sel.reason.find("nearest measured shape"), std::string::npos);
  // No geometry: scaled by problem size, which keeps the order and only guesses the times.
  EXPECT_EQ(sel.method, "problem_size");
  EXPECT_NE(sel.reason.find("scaled to the asked shape by the problem's size"), std::string::npos) << sel.reason;
  EXPECT_NE(sel.reason.find("the times a rough guess"), std::string::npos) << sel.reason;
}

// How sure a nearest-shape answer is, calibrated on the GPU's own measurements: each
// measured shape answered from its nearest other one. At 1024 and 2048 "a" wins, at 8192
// "b" by 25 %; 8192 answered from 2048 picks "a" (25 % off), 1024 from 2048 and 2048 from
// 1024 pick "a" (right).
TEST(Selection, ANearestShapeAnswerSaysHowSuchAnswersFaredOnThisGpu) {
  std::vector<Measurement> rows = {
      meas(1, "gemm.a.x", "m=1024,n=1024,k=1024", 10.0),   meas(2, "gemm.b.y", "m=1024,n=1024,k=1024", 12.0),
      meas(3, "gemm.a.x", "m=2048,n=2048,k=2048", 50.0),   meas(4, "gemm.b.y", "m=2048,n=2048,k=2048", 60.0),
      meas(5, "gemm.a.x", "m=8192,n=8192,k=8192", 2500.0), meas(6, "gemm.b.y", "m=8192,n=8192,k=8192", 2000.0)};
  auto sel = on_gpu(query("m=1536,n=1536,k=1536"), rows);
  ASSERT_EQ(sel.kind, Selection::Kind::measured);
  EXPECT_FALSE(sel.exact_shape);
  EXPECT_GT(sel.shape_distance, 0.0);
  ASSERT_TRUE(sel.nearest_shape_regret);
  EXPECT_EQ(sel.nearest_shape_regret->shapes, 3);
  EXPECT_DOUBLE_EQ(sel.nearest_shape_regret->median, 0.0);
  EXPECT_NEAR(sel.nearest_shape_regret->max, 0.25, 1e-12);
  EXPECT_EQ(sel.nearest_shape_regret->worst_shape, "k=8192,m=8192,n=8192");
  EXPECT_EQ(sel.nearest_shape_regret->worst_from, "k=2048,m=2048,n=2048");
  bool said = false;
  for (const auto& n : sel.notes)
    said |= n.find("how sure") != std::string::npos &&
            n.find("25.0 % at worst (k=8192,m=8192,n=8192 answered from k=2048,m=2048,n=2048)") != std::string::npos;
  EXPECT_TRUE(said);
  // An exact answer needs no such estimate.
  auto exact = on_gpu(query("m=2048,n=2048,k=2048"), rows);
  EXPECT_TRUE(exact.exact_shape);
  EXPECT_FALSE(exact.nearest_shape_regret);
}

// c1 measured 100 us, c2 (newer) 130 us and re-measured at 131 us: the answer is the
// re-measure on c2, never c1's faster figure.
TEST(Selection, TheNewestCommitsLatestFigureCountsNotTheFastestEver) {
  std::vector<Measurement> rows = {meas(1, "gemm.a.x", k_cube, 100.0, 0.1, "NVIDIA H200", "9.0", 1000, "c1"),
                                   meas(2, "gemm.a.x", k_cube, 130.0, 0.1, "NVIDIA H200", "9.0", 2000, "c2"),
                                   meas(3, "gemm.a.x", k_cube, 131.0, 0.1, "NVIDIA H200", "9.0", 2000, "c2"),
                                   meas(4, "gemm.b.x", k_cube, 120.0, 0.1, "NVIDIA H200", "9.0", 2000, "c2")};
  auto sel = on_gpu(query(k_cube), rows);
  ASSERT_EQ(sel.ranking.size(), 2u);
  EXPECT_EQ(sel.best()->instance, "gemm.b.x");
  EXPECT_EQ(sel.ranking[1].instance, "gemm.a.x");
  EXPECT_EQ(sel.ranking[1].evidence->result_id, 3);
  EXPECT_DOUBLE_EQ(sel.ranking[1].evidence->median_us, 131.0);
  EXPECT_EQ(sel.evidence.commits, std::vector<std::string>{"c2"});
  // A late upload of the older commit does not bring its figure back.
  rows.push_back(meas(5, "gemm.a.x", k_cube, 90.0, 0.1, "NVIDIA H200", "9.0", 1000, "c1"));
  EXPECT_EQ(on_gpu(query(k_cube), rows).best()->instance, "gemm.b.x");
}

TEST(Selection, AFailureOnTheNewestCommitDropsTheInstance) {
  std::vector<Measurement> rows = {
      meas(1, "gemm.a.x", k_cube, 100.0, 0.1, "NVIDIA H200", "9.0", 1000, "c1"),
      meas(2, "gemm.b.x", k_cube, 150.0, 0.1, "NVIDIA H200", "9.0", 1000, "c1"),
      failed(meas(3, "gemm.a.x", k_cube, 0, 0, "NVIDIA H200", "9.0", 2000, "c2")),
      failed(meas(4, "gemm.c.x", k_cube, 0, 0, "NVIDIA H200", "9.0", 2000, "c2"), "crashed")};
  auto sel = on_gpu(query(k_cube), rows);
  EXPECT_EQ(sel.kind, Selection::Kind::measured);
  ASSERT_EQ(sel.ranking.size(), 1u);
  EXPECT_EQ(sel.best()->instance, "gemm.b.x");
  ASSERT_EQ(sel.excluded.size(), 2u);
  EXPECT_EQ(sel.excluded[0].instance, "gemm.a.x");
  EXPECT_NE(sel.excluded[0].reason.find("failed numerics on NVIDIA H200 at commit c2 (result 3)"), std::string::npos)
      << sel.excluded[0].reason;
  EXPECT_NE(sel.excluded[1].reason.find("crashed"), std::string::npos);

  // When every current figure failed, nothing is recommended.
  rows.push_back(failed(meas(5, "gemm.b.x", k_cube, 0, 0, "NVIDIA H200", "9.0", 2000, "c2"), "timeout"));
  auto none = on_gpu(query(k_cube), rows);
  EXPECT_EQ(none.kind, Selection::Kind::unranked);
  EXPECT_EQ(none.best(), nullptr);
  EXPECT_EQ(none.excluded.size(), 3u);
}

TEST(Selection, AnUnstableFigureNeverWinsATie) {
  auto fast = meas(1, "gemm.a.x", k_cube, 99.5, 0.5);
  fast.unstable = true;
  std::vector<Measurement> rows = {fast, meas(2, "gemm.b.x", k_cube, 100.0, 0.5), meas(3, "gemm.c.x", k_cube, 140.0)};
  auto sel = on_gpu(query(k_cube), rows);
  EXPECT_EQ(sel.best()->instance, "gemm.b.x");
  EXPECT_EQ(sel.ranking[1].instance, "gemm.a.x");
  EXPECT_TRUE(sel.ranking[1].tie_with_best);
  EXPECT_LT(sel.ranking[1].slowdown, 1.0);
  ASSERT_FALSE(sel.notes.empty());
  EXPECT_NE(sel.notes[0].find("unstable"), std::string::npos);
  EXPECT_NE(sel.notes[0].find("gemm.b.x ranks first"), std::string::npos) << sel.notes[0];

  // Faster beyond the noise it still wins, and the answer says its figure is unstable.
  rows[0].median_us = 60.0;
  auto clear = on_gpu(query(k_cube), rows);
  EXPECT_EQ(clear.best()->instance, "gemm.a.x");
  ASSERT_FALSE(clear.notes.empty());
  EXPECT_NE(clear.notes[0].find("unstable"), std::string::npos);
}

TEST(Selection, TheAnswerNamesItsDriverAndTheOthersPresent) {
  std::vector<Measurement> rows = {meas(1, "gemm.a.x", k_cube, 100.0), meas(2, "gemm.b.x", k_cube, 150.0)};
  std::vector<DriverSeen> drivers = {{"NVIDIA H200", "570.9"}, {"NVIDIA H200", "580.1"}, {"NVIDIA H100", "560.0"}};
  auto sel = select_best(query(k_cube), SelectionInputs{.on_gpu = rows, .drivers = drivers});
  EXPECT_EQ(sel.evidence.drivers, std::vector<std::string>{"580.1"});
  EXPECT_EQ(sel.evidence.other_drivers, std::vector<std::string>{"570.9"});
  ASSERT_EQ(sel.notes.size(), 1u);
  EXPECT_NE(sel.notes[0].find("driver 570.9 also exist"), std::string::npos) << sel.notes[0];
  EXPECT_NE(sel.notes[0].find("uses driver 580.1"), std::string::npos) << sel.notes[0];
}

// Figures timed on two GPUs of one model (a host of several, where each GPU takes its own
// share of the cases) are ranked together, and the answer says which GPU timed how many and
// at what SM clocks; one GPU, or figures that name none, say nothing.
TEST(Selection, TheAnswerSaysWhenItsFiguresCameFromSeveralGpusOfTheModel) {
  auto on = [](Measurement m, std::string uuid, double mhz) {
    m.gpu_uuid = std::move(uuid);
    m.sm_clock_mhz = mhz;
    return m;
  };
  std::vector<Measurement> rows = {on(meas(1, "gemm.a.x", k_cube, 100.0), "GPU-bbbb", 1755),
                                   on(meas(2, "gemm.b.x", k_cube, 150.0), "GPU-aaaa", 1980),
                                   on(meas(3, "gemm.c.x", k_cube, 170.0), "GPU-bbbb", 1830.4),
                                   meas(4, "gemm.d.x", k_cube, 190.0)};
  auto sel = on_gpu(query(k_cube), rows);
  ASSERT_EQ(sel.notes.size(), 1u);
  EXPECT_EQ(sel.notes[0],
            "the ranked figures were measured on 2 GPUs of NVIDIA H200: GPU-aaaa (1 figure, SM clock 1980 MHz), "
            "GPU-bbbb (2 figures, SM clock 1755-1830 MHz); GPUs of one model can differ beyond a figure's noise, so "
            "instances timed on different GPUs compare less surely than on one (GET /api/v1/gpus/agreement, kport gpus "
            "--gpu MODEL: whether they agree)");
  std::vector<Measurement> one = {on(meas(1, "gemm.a.x", k_cube, 100.0), "GPU-aaaa", 1980),
                                  on(meas(2, "gemm.b.x", k_cube, 150.0), "GPU-aaaa", 1975),
                                  meas(3, "gemm.c.x", k_cube, 170.0)};
  EXPECT_TRUE(on_gpu(query(k_cube), one).notes.empty());
  // A failed figure is not ranked, so its GPU is not counted.
  std::vector<Measurement> failing = {on(meas(1, "gemm.a.x", k_cube, 100.0), "GPU-aaaa", 1980),
                                      on(failed(meas(2, "gemm.b.x", k_cube, 150.0)), "GPU-bbbb", 1755)};
  EXPECT_TRUE(on_gpu(query(k_cube), failing).notes.empty());
  // Without clocks, the counts alone.
  std::vector<Measurement> unclocked = {on(meas(1, "gemm.a.x", k_cube, 100.0), "GPU-aaaa", 0),
                                        on(meas(2, "gemm.b.x", k_cube, 150.0), "GPU-bbbb", 0)};
  auto plain = on_gpu(query(k_cube), unclocked);
  ASSERT_EQ(plain.notes.size(), 1u);
  EXPECT_EQ(plain.notes[0].substr(0, plain.notes[0].find(';')),
            "the ranked figures were measured on 2 GPUs of NVIDIA H200: GPU-aaaa (1 figure), GPU-bbbb (1 figure)");
}

// Provisional: raw microseconds of another GPU are not compared; the ratio to the vendor
// baseline measured there is. And only the caller's candidates are ranked.
TEST(Selection, UnmeasuredGpuIsProvisionalRankedByRatioOnTheNearestArch) {
  auto a100_mma = meas(1, "gemm.mma_sync.x", k_cube, 300.0, 0.1, "NVIDIA A100", "8.0");
  auto h200_mma = meas(3, "gemm.mma_sync.x", k_cube, 150.0, 0.1, "NVIDIA H200", "9.0");
  auto h200_simt = meas(5, "gemm.simt.x", k_cube, 120.0, 0.1, "NVIDIA H200", "9.0");
  // simt is faster in microseconds but measured against a faster baseline: it is
  // further from the vendor library than mma_sync is.
  h200_mma.ratio = 1.1;
  h200_simt.ratio = 0.4;
  std::vector<Measurement> elsewhere = {a100_mma, meas(2, "gemm.simt.x", k_cube, 900.0, 0.1, "NVIDIA A100", "8.0"),
                                        h200_mma, meas(4, "gemm.wgmma_tma.x", k_cube, 100.0, 0.1, "NVIDIA H200", "9.0"),
                                        h200_simt};
  std::vector<BuildCandidate> builds = {
      {"gemm.mma_sync.x", "mma_sync"}, {"gemm.simt.x", "simt"}, {"gemm.tcgen05.x", "tcgen05"}};
  auto sel = select_best(
      query(k_cube, "NVIDIA B200", "10.0", "sm_100a"),
      SelectionInputs{.elsewhere = elsewhere, .candidates = builds, .candidates_basis = "build for sm_100a"});
  EXPECT_EQ(sel.kind, Selection::Kind::provisional);
  EXPECT_EQ(sel.ranked_by, "ratio_to_baseline");
  EXPECT_EQ(sel.evidence_gpu_model, "NVIDIA H200");
  ASSERT_EQ(sel.ranking.size(), 3u);
  // wgmma_tma is not a candidate for sm_100a, so it is never recommended there.
  EXPECT_EQ(sel.ranking[0].instance, "gemm.mma_sync.x");
  EXPECT_EQ(sel.ranking[1].instance, "gemm.simt.x");
  EXPECT_NEAR(sel.ranking[1].slowdown, 1.1 / 0.4, 1e-9);
  EXPECT_EQ(sel.ranking[2].instance, "gemm.tcgen05.x");
  EXPECT_FALSE(sel.ranking[2].ranked);
  EXPECT_EQ(sel.ranking[2].evidence, nullptr);
  EXPECT_NE(sel.reason.find("no measurement on NVIDIA B200"), std::string::npos) << sel.reason;
  EXPECT_NE(sel.reason.find("relative to the vendor baseline"), std::string::npos) << sel.reason;
  EXPECT_NE(sel.reason.find("sm_100a"), std::string::npos);
}

TEST(Selection, ProvisionalSkipsAnArchWhoseFiguresLackABaseline) {
  auto h200 = meas(1, "gemm.mma_sync.x", k_cube, 150.0, 0.1, "NVIDIA H200", "9.0");
  h200.ratio.reset();
  std::vector<Measurement> elsewhere = {h200, meas(2, "gemm.mma_sync.x", k_cube, 300.0, 0.1, "NVIDIA A100", "8.0")};
  std::vector<BuildCandidate> builds = {{"gemm.mma_sync.x", "mma_sync"}};
  auto sel = select_best(query(k_cube, "NVIDIA B200", "10.0", "sm_100a"),
                         SelectionInputs{.elsewhere = elsewhere, .candidates = builds});
  EXPECT_EQ(sel.kind, Selection::Kind::provisional);
  EXPECT_EQ(sel.evidence_gpu_model, "NVIDIA A100");
}

TEST(Selection, NoEvidenceAtAllIsUnrankedWithTheCandidatesAndNoBest) {
  std::vector<BuildCandidate> builds = {{"gemm.tcgen05.a", "tcgen05"}, {"gemm.tcgen05.b", "tcgen05"}};
  auto sel = select_best(query(k_cube, "NVIDIA B200", "10.0", "sm_100a"),
                         SelectionInputs{.candidates = builds, .candidates_basis = "apply to sm_100a by its features"});
  EXPECT_EQ(sel.kind, Selection::Kind::unranked);
  EXPECT_EQ(sel.best(), nullptr);
  EXPECT_EQ(sel.ranked_by, "");
  ASSERT_EQ(sel.ranking.size(), 2u);
  EXPECT_FALSE(sel.ranking[0].ranked);
  EXPECT_NE(sel.reason.find("unranked"), std::string::npos);
  EXPECT_NE(sel.reason.find("no best"), std::string::npos);
  EXPECT_TRUE(sel.evidence.result_ids.empty());
}

TEST(Selection, IncomparableShapeOnGpuFallsBackToProvisional) {
  std::vector<Measurement> rows = {meas(1, "attention.a.x", "b=4,h=16,l=4096,d=64,causal=0", 100.0)};
  std::vector<BuildCandidate> builds = {{"attention.a.x", "a"}};
  auto sel =
      select_best(query("b=4,h=16,l=4096,d=128,causal=0"),
                  SelectionInputs{.on_gpu = rows, .candidates = builds, .rules = &test::kport_rules("attention")});
  EXPECT_EQ(sel.kind, Selection::Kind::unranked);
  EXPECT_NE(sel.reason.find("nothing comparable"), std::string::npos);
}

// ---- provisional candidates -------------------------------------------------------

namespace {

std::vector<InstanceInfo> gemm_instances() {
  return {{"gemm.simt.64x64", "gemm", "simt", {"simt"}, std::vector<std::string>{"fp32", "fp16", "bf16"}},
          {"gemm.mma_sync.128x128", "gemm", "mma_sync", {"mma_sync"}, std::vector<std::string>{"fp16"}},
          {"gemm.mma_sync_bf16.128x128",
           "gemm",
           "mma_sync_bf16",
           {"mma_sync", "mma_sync_bf16"},
           std::vector<std::string>{"bf16"}},
          {"gemm.wgmma_tma.128x256", "gemm", "wgmma_tma", {"wgmma", "tma"}, std::vector<std::string>{"fp16", "bf16"}},
          {"gemm.tcgen05.128x256", "gemm", "tcgen05", {"tcgen05", "tma"}, std::vector<std::string>{"fp16", "bf16"}},
          {"rmsnorm.simt.x", "rmsnorm", "simt", {"simt"}, std::vector<std::string>{"fp32"}}};
}

const std::vector<std::string> k_sm100a = {"simt", "mma_sync", "mma_sync_bf16", "tma", "tcgen05"};

std::vector<std::string> names(const Candidates& c) {
  std::vector<std::string> out;
  for (const auto& b : c.list) out.push_back(b.instance);
  return out;
}

}  // namespace

TEST(ProvisionalCandidates, BeforeTheFirstBuildThePlannerPicksByTheTargetsFeatures) {
  auto all = gemm_instances();
  auto c = provisional_candidates({"gemm", "bf16", "sm_100a", k_sm100a, false, {}, {}}, all);
  ASSERT_TRUE(c.ok()) << c.error().message;
  // No wgmma on sm_100a: the Hopper-only instance is never offered to a B200.
  EXPECT_EQ(names(*c),
            (std::vector<std::string>{"gemm.mma_sync_bf16.128x128", "gemm.simt.64x64", "gemm.tcgen05.128x256"}));
  EXPECT_NE(c->basis.find("apply to sm_100a"), std::string::npos);
}

TEST(ProvisionalCandidates, AnApplicableVariantWithNoKnownInstanceIsNamedNotHidden) {
  // The harness of the first build lists gemm.tcgen05 with its features but, not having
  // built it, none of its instances.
  std::vector<InstanceInfo> all;
  for (auto& i : gemm_instances())
    if (i.variant != "tcgen05") all.push_back(i);
  CandidateQuery q{"gemm", "bf16", "sm_100a", k_sm100a, false, {}, {}};
  q.variants = {{"tcgen05", {"tcgen05", "tma"}}, {"wgmma_tma", {"wgmma", "tma"}}};
  auto c = provisional_candidates(q, all);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(names(*c), (std::vector<std::string>{"gemm.mma_sync_bf16.128x128", "gemm.simt.64x64"}));
  EXPECT_EQ(c->without_instances, (std::vector<std::string>{"gemm.tcgen05"}));  // wgmma does not apply

  auto sel = select_best(
      SelectionQuery{"NVIDIA B200", "10.0", "sm_100a", *Shape::parse(k_cube), "bf16"},
      SelectionInputs{.candidates = c->list, .candidates_basis = c->basis, .candidates_missing = c->without_instances});
  EXPECT_EQ(sel.kind, Selection::Kind::unranked);
  ASSERT_EQ(sel.notes.size(), 1u);
  EXPECT_NE(sel.notes[0].find("gemm.tcgen05 applies to sm_100a but no instance of it is known yet"), std::string::npos)
      << sel.notes[0];
}

// gemm_fp8 on a Blackwell target before its first build: the only variant that applies there
// (tcgen05) has no known instance, and the Hopper one does not apply. No candidate to name,
// said as such (the unranked answer names the variant that applies), not that none applies.
TEST(ProvisionalCandidates, WhenOnlyVariantsWithNoKnownInstanceApplyTheAnswerSaysSo) {
  std::vector<InstanceInfo> all = {
      {"gemm_fp8.wgmma_tma.128x128", "gemm_fp8", "wgmma_tma", {"wgmma", "tma"}, std::vector<std::string>{"e4m3"}}};
  CandidateQuery q{"gemm_fp8", "e4m3", "sm_100a", k_sm100a, false, {}, {}};
  q.variants = {{"tcgen05", {"tcgen05", "tma"}}, {"wgmma_tma", {"wgmma", "tma"}}};
  auto c = provisional_candidates(q, all);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->list.empty());
  EXPECT_EQ(c->without_instances, (std::vector<std::string>{"gemm_fp8.tcgen05"}));
  auto sel = select_best(
      SelectionQuery{"NVIDIA B200", "10.0", "sm_100a", *Shape::parse("k=16384,m=4096,n=7168,scale=2"), "e4m3"},
      SelectionInputs{.candidates = c->list, .candidates_basis = c->basis, .candidates_missing = c->without_instances});
  EXPECT_EQ(sel.kind, Selection::Kind::unranked);
  EXPECT_EQ(sel.best(), nullptr);
  EXPECT_NE(sel.reason.find("unranked: no instances that apply to sm_100a by its features (no build for it yet) "
                            "are known yet"),
            std::string::npos)
      << sel.reason;
  ASSERT_EQ(sel.notes.size(), 1u);
  EXPECT_NE(sel.notes[0].find("gemm_fp8.tcgen05 applies to sm_100a but no instance of it is known yet"),
            std::string::npos)
      << sel.notes[0];
  // Where nothing applies at all, that is what it says.
  q.variants = {{"wgmma_tma", {"wgmma", "tma"}}};
  auto none = provisional_candidates(q, all);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no gemm_fp8 variant applies to sm_100a"), std::string::npos)
      << none.error().message;
}

TEST(ProvisionalCandidates, AfterABuildOnlyWhatBuiltAndRunsTheDtype) {
  auto all = gemm_instances();
  auto c = provisional_candidates(
      {"gemm", "fp32", "sm_90a", {"simt", "mma_sync", "wgmma", "tma"}, true, {"simt", "mma_sync", "wgmma_tma"}, {}},
      all);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(names(*c), std::vector<std::string>{"gemm.simt.64x64"}) << "only simt runs fp32";
  EXPECT_EQ(c->basis, "build for sm_90a");
}

TEST(ProvisionalCandidates, UnlistedDtypesCountOnlyWithAPassingResult) {
  std::vector<InstanceInfo> all = {{"gemm.old.a", "gemm", "old", {}, std::nullopt},
                                   {"gemm.old.b", "gemm", "old", {}, std::nullopt}};
  auto c = provisional_candidates({"gemm", "bf16", "sm_90a", {}, true, {"old"}, {"gemm.old.b"}}, all);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(names(*c), std::vector<std::string>{"gemm.old.b"});
}

TEST(ProvisionalCandidates, UnknownFamilyDtypeOrNoneForTheTargetIsAClearError) {
  auto all = gemm_instances();
  auto family = provisional_candidates({"softmax", "fp16", "sm_90a", {}, false, {}, {}}, all);
  ASSERT_FALSE(family.ok());
  EXPECT_EQ(family.error().code, Errc::not_found);
  auto dtype = provisional_candidates({"gemm", "fp64", "sm_100a", k_sm100a, false, {}, {}}, all);
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.error().code, Errc::unprocessable);
  EXPECT_NE(dtype.error().message.find("gemm runs bf16, fp16, fp32"), std::string::npos) << dtype.error().message;
  // sm_90a built only mma_sync, which does not run fp32.
  auto none = provisional_candidates({"gemm", "fp32", "sm_90a", {}, true, {"mma_sync"}, {}}, all);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Errc::unprocessable);
  EXPECT_NE(none.error().message.find("runs dtype 'fp32'"), std::string::npos) << none.error().message;
  auto nothing = provisional_candidates({"gemm", "fp16", "sm_50", {}, false, {}, {}}, all);
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.error().message.find("no gemm variant applies to sm_50"), std::string::npos)
      << nothing.error().message;
}

}  // namespace kport::porting

namespace kport::porting {

TEST(Selection, TheNearestTimedShapeAnswersNotANearerShapeThatWasOnlyChecked) {
  // rows=1024,cols=4097 was checked (passed, no timing); rows=32768,cols=4096 was timed.
  Measurement checked = meas(1, "rmsnorm.vec16.regs_v4", "rows=1024,cols=4097", 10.0);
  checked.median_us = 0;
  checked.ratio.reset();
  std::vector<Measurement> rows = {checked, meas(2, "rmsnorm.vec16.regs_v4", "rows=32768,cols=4096", 140.0),
                                   meas(3, "rmsnorm.simt.block256", "rows=32768,cols=4096", 400.0)};
  auto sel = on_gpu(query("rows=1000,cols=3072"), rows);
  EXPECT_EQ(sel.kind, Selection::Kind::measured);
  ASSERT_TRUE(sel.matched_shape);
  EXPECT_EQ(sel.matched_shape->canonical(), Shape::parse("rows=32768,cols=4096")->canonical());
  ASSERT_NE(sel.best(), nullptr);
  EXPECT_EQ(sel.best()->instance, "rmsnorm.vec16.regs_v4");

  // With only checked shapes comparable, the answer is unranked and says why.
  auto only_checked = on_gpu(query("rows=1000,cols=3072"), std::vector<Measurement>{checked});
  EXPECT_EQ(only_checked.kind, Selection::Kind::unranked);
  EXPECT_EQ(only_checked.best(), nullptr);
  EXPECT_NE(only_checked.reason.find("not timed"), std::string::npos) << only_checked.reason;
}

}  // namespace kport::porting
