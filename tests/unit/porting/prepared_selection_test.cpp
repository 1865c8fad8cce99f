// PreparedSelection answers every shape as select_best does over the same rows: random
// histories (re-measures, newer commits, failures, unstable figures, several drivers,
// untimed shapes) asked at random shapes, exact and not.
#include "kport/porting/prepared_selection.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "kport_families.h"

namespace kport::porting {
namespace {

std::string describe(const Measurement& m) {
  std::ostringstream o;
  o << m.result_id << '|' << m.instance << '|' << m.variant << '|' << m.target << '|' << m.gpu_model << '|' << m.arch
    << '|' << m.driver << '|' << m.commit << '|' << m.commit_ms << '|' << m.status << '|' << m.shape.canonical() << '|'
    << m.median_us << '|' << m.stddev_us << '|' << m.samples << '|' << m.ratio.value_or(-1) << '|' << m.unstable << '|'
    << m.runs << '|' << m.measured_at_ms << '|' << m.gpu_uuid << '|' << m.sm_clock_mhz;
  return o.str();
}

// Every field of a Selection, so that two answers compare whole.
std::string describe(const Selection& s) {
  std::ostringstream o;
  o << kind_name(s.kind) << "\nreason " << s.reason << "\nranked_by " << s.ranked_by << "\nbasis " << s.candidates_basis
    << "\nmatched " << (s.matched_shape ? s.matched_shape->canonical() : "-") << " exact " << s.exact_shape << " d "
    << s.shape_distance << "\nevidence " << s.evidence_gpu_model << ' ' << s.evidence_arch << '\n';
  o << "method " << s.method << " by " << s.ranked_by << '\n';
  for (const auto& n : s.notes) o << "note " << n << '\n';
  if (const auto& r = s.nearest_shape_regret)
    o << "regret " << r->shapes << ' ' << r->median << ' ' << r->p90 << ' ' << r->max << '\n';
  const auto& e = s.evidence;
  for (const auto& c : e.commits) o << "commit " << c << '\n';
  for (const auto& d : e.drivers) o << "driver " << d << '\n';
  for (const auto& d : e.other_drivers) o << "other " << d << '\n';
  for (auto id : e.result_ids) o << "id " << id << '\n';
  o << "samples " << e.samples << ' ' << e.newest_ms << ' ' << e.oldest_ms << '\n';
  for (const auto& r : s.ranking)
    o << "rank " << r.instance << ' ' << r.variant << ' ' << r.tie_with_best << ' ' << r.slowdown << ' ' << r.ranked
      << ' ' << (r.estimate_us ? std::to_string(*r.estimate_us) : "-") << ' '
      << (r.evidence ? describe(*r.evidence) : "-") << '\n';
  for (const auto& x : s.excluded)
    o << "excl " << x.instance << ' ' << x.variant << ' ' << x.reason << ' ' << describe(x.evidence) << '\n';
  return o.str();
}

std::vector<Measurement> history(std::mt19937_64& rng, int n) {
  const char* shapes[] = {"m=2048,n=2048,k=2048", "m=4096,n=4096,k=4096", "m=8192,n=8192,k=8192",
                          "m=4096,n=4096,k=512",  "m=128,n=8192,k=8192",  "m=1000,n=1000,k=1000"};
  const char* instances[] = {"gemm.simt.a", "gemm.simt.b", "gemm.mma_sync.a", "gemm.wgmma_tma.a", "gemm.wgmma_tma.b"};
  std::vector<Measurement> rows;
  for (int i = 0; i < n; ++i) {
    Measurement m;
    m.result_id = i + 1;
    m.instance = instances[rng() % 5];
    m.variant = m.instance.substr(5, m.instance.rfind('.') - 5);
    m.target = "sm_90a";
    m.gpu_model = "NVIDIA H200";
    m.arch = "9.0";
    m.driver = rng() % 4 == 0 ? "570.1" : "580.1";
    const auto c = rng() % 3;
    m.commit = std::string(40, static_cast<char>('a' + c));
    m.commit_ms = 1'700'000'000'000 + static_cast<std::int64_t>(c) * 1000;
    m.shape = *Shape::parse(shapes[rng() % 6]);
    const auto roll = rng() % 10;
    m.status = roll == 0 ? "failed" : roll == 1 ? "crashed" : "passed";
    if (m.status == "passed" && roll != 2) {
      m.median_us = 100.0 + static_cast<double>(rng() % 40);
      m.stddev_us = 0.5 + static_cast<double>(rng() % 3);
      m.samples = 50;
      m.ratio = 120.0 / m.median_us;
    }
    m.unstable = rng() % 7 == 0;
    m.runs = 1 + static_cast<std::int64_t>(rng() % 2);
    m.measured_at_ms = m.commit_ms + i;
    // Two GPUs of the model, one of them at a lower clock, and results that name none.
    const auto gpu = rng() % 3;
    if (gpu > 0) {
      m.gpu_uuid = gpu == 1 ? "GPU-aaaa" : "GPU-bbbb";
      m.sm_clock_mhz = gpu == 1 ? 1980 : 1755 + static_cast<double>(rng() % 3) * 10;
    }
    rows.push_back(std::move(m));
  }
  return rows;
}

}  // namespace

// By problem size (no SM count) and by waves of tiles (gemm.simt.b publishes no geometry).
TEST(PreparedSelection, AnswersEveryShapeAsSelectBestDoes) {
  std::mt19937_64 rng(20261201);
  const std::vector<InstanceGeometry> tiles = {{"gemm.simt.a", {{{"m", 64}, {"n", 64}}, {{"k", 16}}}},
                                               {"gemm.mma_sync.a", {{{"m", 128}, {"n", 128}}, {{"k", 32}}}},
                                               {"gemm.wgmma_tma.a", {{{"m", 128}, {"n", 256}}, {{"k", 64}}}},
                                               {"gemm.wgmma_tma.b", {{{"m", 128}, {"n", 128}}, {{"k", 64}}}}};
  for (int round = 0; round < 40; ++round) {
    const bool waves = round % 2 == 1;
    auto rows = history(rng, 1 + static_cast<int>(rng() % 60));
    std::vector<DriverSeen> drivers{{"NVIDIA H200", "580.1"}, {"NVIDIA H200", "570.1"}, {"NVIDIA H100", "560.0"}};
    PreparedSelection prepared("NVIDIA H200", rows, drivers, waves ? 132 : 0,
                               waves ? tiles : std::vector<InstanceGeometry>{}, 0, test::kport_rules("gemm"));
    for (int q = 0; q < 50; ++q) {
      std::string text = q % 5 == 0
                             ? rows[rng() % rows.size()].shape.canonical()
                             : "m=" + std::to_string(1 + rng() % 9000) + ",n=" + std::to_string(1 + rng() % 9000) +
                                   ",k=" + std::to_string(1 + rng() % 9000);
      auto shape = *Shape::parse(text);
      SelectionQuery query{"NVIDIA H200", "9.0", "", shape, "bf16"};
      SelectionInputs in;
      in.on_gpu = rows;
      in.drivers = drivers;
      in.rules = &test::kport_rules("gemm");
      if (waves) {
        in.sm_count = 132;
        in.geometry = tiles;
      }
      auto want = select_best(query, in);
      auto got = prepared.answer(shape);
      ASSERT_TRUE(got.has_value()) << text;
      ASSERT_EQ(describe(*got), describe(want)) << "round " << round << " shape " << text;
      // From another timed shape, moved() ranks as the answer does, without its texts.
      const auto match = *prepared.match(shape);
      PreparedSelection::Moved moved;
      const bool applies = want.kind == Selection::Kind::measured && !want.exact_shape;
      ASSERT_EQ(prepared.moved(shape, match, moved), applies) << text;
      if (applies) {
        EXPECT_EQ(moved.method, want.method);
        ASSERT_EQ(moved.places.size(), want.ranking.size());
        for (std::size_t i = 0; i < moved.places.size(); ++i) {
          const auto& p = moved.places[i];
          const auto& r = want.ranking[i];
          EXPECT_EQ(p.m, &prepared.figures(match.shape)[p.figure]);
          EXPECT_EQ(describe(*p.m), describe(*r.evidence)) << i;
          EXPECT_EQ(p.cost, r.estimate_us.value_or(-1)) << i;
          EXPECT_EQ(p.slowdown, r.slowdown) << i;
          EXPECT_EQ(p.tie_with_best, r.tie_with_best) << i;
        }
        ASSERT_EQ(moved.commits.size(), want.evidence.commits.size());
        for (std::size_t i = 0; i < moved.commits.size(); ++i)
          EXPECT_EQ(moved.places[moved.commits[i]].m->commit, want.evidence.commits[i]);
        ASSERT_EQ(moved.drivers.size(), want.evidence.drivers.size());
        for (std::size_t i = 0; i < moved.drivers.size(); ++i)
          EXPECT_EQ(moved.places[moved.drivers[i]].m->driver, want.evidence.drivers[i]);
        // Its notes, in the answer's order, from the words select_best writes them with.
        std::vector<std::string> notes;
        if (moved.tie_shape < prepared.shapes().size())
          notes.push_back(tie_note(moved.tie_first, prepared.canonical()[moved.tie_shape]));
        if (moved.unstable != UnstableBest::none)
          notes.push_back(unstable_note(moved.unstable,
                                        moved.places[moved.unstable == UnstableBest::moved ? 1 : 0].m->instance,
                                        moved.places[0].m->instance));
        if (moved.commits.size() > 1)
          notes.push_back(commits_note("NVIDIA H200", moved.commits.size(), want.evidence.commits.front()));
        std::vector<std::string_view> used(want.evidence.drivers.begin(), want.evidence.drivers.end());
        std::vector<std::string_view> other(want.evidence.other_drivers.begin(), want.evidence.other_drivers.end());
        if (auto note = drivers_note("NVIDIA H200", used, other); !note.empty()) notes.push_back(note);
        std::vector<const Measurement*> ranked;
        for (const auto& m : prepared.figures(match.shape))
          if (m.ranks()) ranked.push_back(&m);
        if (auto note = gpus_note("NVIDIA H200", ranked); !note.empty()) notes.push_back(note);
        if (!prepared.regret_note().empty()) notes.push_back(prepared.regret_note());
        EXPECT_EQ(notes, want.notes) << text;
        const auto reason = stand_in_note(prepared.canonical()[match.shape], moved.method, prepared.sm_count());
        EXPECT_EQ(reason.before + shape.canonical() + reason.after, want.reason);
        continue;
      }
      // At a measured shape, the question's own fields alone, as answer() has them.
      if (prepared.match(shape)->distance != 0) continue;
      auto part = prepared.answer_query_part(shape, *prepared.match(shape));
      EXPECT_EQ(part.kind, want.kind);
      EXPECT_EQ(part.reason, want.reason);
      EXPECT_EQ(part.notes, want.notes);
      EXPECT_EQ(part.exact_shape, want.exact_shape);
      EXPECT_EQ(part.shape_distance, want.shape_distance);
      EXPECT_EQ(part.nearest_shape_regret.has_value(), want.nearest_shape_regret.has_value());
      EXPECT_TRUE(part.ranking.empty());
    }
  }
}

TEST(PreparedSelection, AnIncomparableShapeIsLeftToTheProvisionalRule) {
  std::mt19937_64 rng(7);
  PreparedSelection prepared("NVIDIA H200", history(rng, 20), {});
  EXPECT_FALSE(prepared.match(*Shape::parse("rows=4096,cols=4096")).has_value());
  PreparedSelection empty("NVIDIA H200", {}, {});
  EXPECT_FALSE(empty.answer(*Shape::parse("m=1,n=1,k=1")).has_value());
}

TEST(PreparedSelection, ShapesWithoutATimedFigureAnswerOnlyWhenNothingTimedIsComparable) {
  std::vector<Measurement> rows(2);
  rows[0].result_id = 1;
  rows[0].instance = "attention.simt.a";
  rows[0].gpu_model = "NVIDIA H200";
  rows[0].shape = *Shape::parse("b=1,h=8,l=1000,d=64,causal=1");
  rows[0].status = "failed";
  rows[1] = rows[0];
  rows[1].result_id = 2;
  rows[1].shape = *Shape::parse("b=1,h=8,l=1000,d=128,causal=1");
  rows[1].status = "passed";
  rows[1].median_us = 50;
  PreparedSelection prepared("NVIDIA H200", rows, {}, 0, {}, 0, test::kport_rules("attention"));
  auto shape = *Shape::parse("b=2,h=8,l=2000,d=64,causal=1");
  auto got = prepared.answer(shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->kind, Selection::Kind::unranked);
  SelectionInputs in;
  in.on_gpu = rows;
  in.rules = &test::kport_rules("attention");
  EXPECT_EQ(describe(*got), describe(select_best(SelectionQuery{"NVIDIA H200", "9.0", "", shape, "attention"}, in)));
}

}  // namespace kport::porting
