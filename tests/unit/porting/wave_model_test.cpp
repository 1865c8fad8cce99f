#include "kport/porting/wave_model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "kport/porting/manifest.h"
#include "kport/porting/op_shape.h"
#include "kport/porting/prepared_selection.h"
#include "kport/porting/selection.h"
#include "kport_families.h"

namespace kport::porting {
namespace {

Shape shape(const char* text) { return *Shape::parse(text); }

using test::kport_families;
using test::kport_rules;

std::optional<Geometry> from(const GeometryKeys& keys, const std::map<std::string, std::int64_t>& config) {
  return geometry_from_config(keys, [&](std::string_view key) -> std::optional<std::int64_t> {
    auto it = config.find(std::string(key));
    if (it == config.end()) return std::nullopt;
    return it->second;
  });
}

// An instance of kport's family `family` publishing `config`.
std::optional<Geometry> from(const char* family, const std::map<std::string, std::int64_t>& config) {
  const OpFamily* f = kport_families().find(family);
  EXPECT_NE(f, nullptr) << family;
  return from(f ? f->geometry : GeometryKeys{}, config);
}

Measurement meas(std::int64_t id, std::string instance, std::string text, double median) {
  Measurement m;
  m.result_id = id;
  m.instance = instance;
  m.variant = "wgmma_tma";
  m.gpu_model = "NVIDIA H200";
  m.arch = "9.0";
  m.target = "sm_90a";
  m.driver = "580.1";
  m.commit = "c1";
  m.commit_ms = 1000;
  m.shape = shape(text.c_str());
  m.median_us = median;
  m.stddev_us = 0.05;
  m.samples = 50;
  m.measured_at_ms = 1000 + id;
  return m;
}

}  // namespace

TEST(WaveModel, GeometryComesFromTheConfigKeysEachFamilyDeclares) {
  auto g = from("gemm", {{"bm", 128}, {"bn", 256}, {"bk", 64}, {"stages", 4}});
  ASSERT_TRUE(g);
  ASSERT_EQ(g->tiles.size(), 2u);
  EXPECT_EQ(g->tiles[1].dim, "n");
  EXPECT_EQ(g->tiles[1].size, 256);
  EXPECT_EQ(g->steps.at(0).dim, "k");
  // The SIMT kernels spell their tiles block_m/block_n/block_k.
  EXPECT_TRUE(from("gemm", {{"block_m", 64}, {"block_n", 64}, {"block_k", 16}}));
  auto a = from("attention", {{"head_dim", 128}, {"br", 128}, {"bc", 176}});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->tiles.at(0).dim, "l");
  EXPECT_EQ(a->steps.at(0).size, 176);
  // The row-wise families publish where they leave their own code: path bounds, no tiles.
  auto rows = from("softmax", {{"load_bytes", 16}, {"max_row_bytes", 65536}, {"row_align_bytes", 16}});
  ASSERT_TRUE(rows);
  EXPECT_FALSE(has_waves(*rows));
  ASSERT_EQ(rows->paths.size(), 1u);
  EXPECT_EQ(rows->paths[0].dim, "cols");
  EXPECT_EQ(rows->paths[0].max_bytes, 65536);
  EXPECT_EQ(rows->paths[0].align_bytes, 16);
  // gemm_fp8 publishes gemm's tile keys: its answers from another shape go by waves too
  // (by problem size they missed the fastest fp8 instance by up to 38 % on the H200).
  auto fp8 = from("gemm_fp8", {{"bm", 128}, {"bn", 64}, {"bk", 128}, {"promote_every_k", 128}});
  ASSERT_TRUE(fp8);
  EXPECT_EQ(fp8->tiles.at(1).size, 64);
  // The scaling mode is matched, never counted as work: scale=0 must not zero the product.
  const double w = wave_work(*fp8, shape("m=96,n=7168,k=2048,scale=0"), 132, kport_rules("gemm_fp8"));
  EXPECT_GT(w, 0);
  EXPECT_DOUBLE_EQ(w, wave_work(*fp8, shape("m=96,n=7168,k=2048,scale=2"), 132, kport_rules("gemm_fp8")));
  EXPECT_DOUBLE_EQ(w, wave_work(*fp8, shape("m=96,n=7168,k=2048"), 132, kport_rules("gemm_fp8")));
  // Missing or non-positive tiles: no geometry, never a guess.
  EXPECT_FALSE(from("rmsnorm", {{"load_bytes", 16}}));
  EXPECT_FALSE(from("gemm", {{"bm", 128}, {"bn", 128}}));
  EXPECT_FALSE(from("gemm", {{"bm", 0}, {"bn", 128}, {"bk", 64}}));
  EXPECT_FALSE(from("gemm", {{"bm", 0}, {"block_m", 128}, {"bn", 128}, {"bk", 64}})) << "the first key present is read";
  // Keys are read by the family's declaration only: gemm's tiles mean nothing to a row
  // family, and a family that declares nothing moves by problem size.
  EXPECT_FALSE(from("rmsnorm", {{"bm", 128}, {"bn", 128}, {"bk", 64}}));
  EXPECT_FALSE(from(GeometryKeys{}, {{"bm", 128}, {"bn", 128}, {"bk", 64}, {"max_row_bytes", 65536}}));
}

// Another library's family tells the selection its tiles by its own keys: a grouped gemm
// over g groups (tile_m, tile_n, tile_k) and a layernorm whose blocks take rows_per_cta
// rows each, walking the columns cols_per_step at a time and leaving its own code past
// max_cols_bytes.
TEST(WaveModel, AForeignFamilysDeclaredKeysGiveItsGeometry) {
  GeometryKeys grouped{{{"m", {"tile_m"}, {}, {}, {}, {}},
                        {"n", {"tile_n"}, {}, {}, {}, {}},
                        {"k", {}, {"tile_k"}, {"splits"}, {}, {}}}};
  EXPECT_FALSE(geometry_problem(grouped, {"g", "m", "n", "k"}));
  auto g = from(grouped, {{"tile_m", 128}, {"tile_n", 256}, {"tile_k", 64}, {"bm", 7}});
  ASSERT_TRUE(g);
  ASSERT_EQ(g->tiles.size(), 2u);
  EXPECT_EQ(g->tiles[0].dim, "m");
  EXPECT_EQ(g->tiles[0].size, 128);
  EXPECT_EQ(g->tiles[1].size, 256);
  EXPECT_EQ(g->steps.at(0).size, 64);
  EXPECT_EQ(g->split, 1);
  // g is no tile's dimension: the groups multiply the blocks, as batch does. 8 groups of
  // 1x56 tiles are 448 blocks, 4 waves over 132 SMs, each of 128 steps of K.
  EXPECT_DOUBLE_EQ(wave_work(*g, shape("g=8,m=96,n=14336,k=8192"), 132, ShapeRules{}), 4 * 128);
  EXPECT_EQ(from(grouped, {{"tile_m", 128}, {"tile_n", 256}, {"tile_k", 64}, {"splits", 4}})->split, 4);
  EXPECT_FALSE(from(grouped, {{"tile_m", 128}, {"tile_n", 256}})) << "no step: no tiling";

  GeometryKeys layernorm{{{"rows", {"rows_per_cta"}, {}, {}, {}, {}},
                          {"cols", {}, {"cols_per_step"}, {}, {"max_cols_bytes"}, {"row_align_bytes", "vec_bytes"}}}};
  EXPECT_FALSE(geometry_problem(layernorm, {"rows", "cols"}));
  auto ln =
      from(layernorm, {{"rows_per_cta", 4}, {"cols_per_step", 1024}, {"max_cols_bytes", 32768}, {"vec_bytes", 16}});
  ASSERT_TRUE(ln);
  EXPECT_TRUE(has_waves(*ln));
  ASSERT_EQ(ln->paths.size(), 1u);
  EXPECT_EQ(ln->paths[0].dim, "cols");
  EXPECT_EQ(ln->paths[0].max_bytes, 32768);
  EXPECT_EQ(ln->paths[0].align_bytes, 16) << "the second alternative, the first being absent";
  // 4096 rows in blocks of 4 are 1024 blocks, 8 waves over 132 SMs, each of 8 steps of 1024 columns.
  EXPECT_DOUBLE_EQ(wave_work(*ln, shape("rows=4096,cols=8192"), 132, ShapeRules{}), 8 * 8);
  EXPECT_FALSE(own_path(*ln, shape("rows=4096,cols=32768"), 2));
  // Without its tile keys it still has its path bounds.
  auto bounds = from(layernorm, {{"max_cols_bytes", 32768}});
  ASSERT_TRUE(bounds);
  EXPECT_FALSE(has_waves(*bounds));
  EXPECT_EQ(bounds->paths.size(), 1u);
}

TEST(WaveModel, AGeometryDeclarationThatDoesNotHoldNamesItsKey) {
  const std::vector<std::string> dims = {"rows", "cols"};
  auto problem = [&](GeometryKeys keys) {
    auto p = geometry_problem(keys, dims);
    return p ? p->key + ": " + p->what : std::string("none");
  };
  EXPECT_EQ(problem({{{"rowz", {"rows_per_cta"}, {}, {}, {}, {}}}}),
            "rowz: 'rowz' is not a dimension of the family (rows, cols)");
  EXPECT_EQ(problem({{{"rows", {"a"}, {}, {}, {}, {}}, {"rows", {"b"}, {}, {}, {}, {}}}}),
            "rows: dimension 'rows' is declared twice");
  EXPECT_EQ(problem({{{"rows", {}, {}, {}, {}, {}}}}),
            "rows: declares no config key: give one of tile, step, split, max_bytes, align_bytes, max, "
            "run_min_bytes, run_max_bytes, run_align_bytes, run_multiple");
  EXPECT_EQ(problem({{{"rows", {"rows per cta"}, {}, {}, {}, {}}}}),
            "rows.tile: 'rows per cta' is not a config key (letters, digits and '_', 64 at most)");
  EXPECT_EQ(problem({{{"cols", {}, {""}, {}, {}, {}}}}),
            "cols.step: '' is not a config key (letters, digits and '_', 64 at most)");
  EXPECT_EQ(problem({{{"cols", {}, {}, {}, {}, {"a", "b", "c", "d", "e", "f", "g", "h", "i"}}}}),
            "cols.align_bytes: names more than 8 config keys");
  EXPECT_EQ(problem({{{"cols", {"tc"}, {}, {"split_k"}, {}, {}}}}),
            "cols.split: a split shares the steps along 'cols' among blocks: declare its 'step' too");
  EXPECT_EQ(problem({{{"rows", {}, {"a"}, {"s"}, {}, {}}, {"cols", {}, {"b"}, {"t"}, {}, {}}}}),
            "cols.split: only one dimension may be split ('rows' is)");
  EXPECT_EQ(problem({}), "none");
  // kport's own declarations hold, and check_family names the field of a family's own.
  for (const auto& f : kport_families().all()) {
    EXPECT_FALSE(f.geometry.empty()) << f.name;
    EXPECT_TRUE(check_family(f).ok()) << f.name;
  }
  OpFamily ln = *kport_families().find("rmsnorm");
  ln.name = "layernorm";
  ln.geometry.dims.push_back({"width", {"w"}, {}, {}, {}, {}});
  auto st = check_family(ln);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "field 'geometry.width' of family layernorm: 'width' is not a dimension of the family (rows, cols)");
}

TEST(WaveModel, PathBoundsAreInBytesOfTheDtype) {
  Geometry vec16;
  vec16.paths.push_back({"cols", 65536, 16});
  EXPECT_EQ(element_bytes("bf16"), 2);
  EXPECT_EQ(element_bytes("fp32"), 4);
  EXPECT_EQ(element_bytes("fp8_e4m3"), 1);
  EXPECT_EQ(element_bytes("int4"), 0);
  // 32000 fp16 columns are 64,000 bytes: its own kernel; 131072 are 256 KB: the fallback.
  EXPECT_TRUE(own_path(vec16, shape("rows=1,cols=32000"), 2));
  EXPECT_FALSE(own_path(vec16, shape("rows=1,cols=131072"), 2));
  EXPECT_FALSE(own_path(vec16, shape("rows=1,cols=32000"), 4));  // 128,000 bytes in fp32
  EXPECT_FALSE(own_path(vec16, shape("rows=8,cols=1001"), 2));   // not whole 16-byte vectors
  EXPECT_TRUE(own_path(vec16, shape("rows=8,cols=1004"), 4));
  EXPECT_TRUE(own_path(vec16, shape("rows=1,cols=131072"), 0));  // dtype unknown: no claim
  std::vector<InstanceGeometry> all = {
      {"softmax.vec16.regs_v2", vec16}, {"softmax.vec16.regs_v8", vec16}, {"softmax.simt.block256", Geometry{}}};
  EXPECT_EQ(path_changes(all, shape("rows=1,cols=32000"), shape("rows=1,cols=131072"), 2), 2);
  EXPECT_EQ(path_changes(all, shape("rows=1,cols=32000"), shape("rows=64,cols=32768"), 2), 0);
  EXPECT_EQ(path_changes(all, shape("rows=1,cols=32000"), shape("rows=1,cols=131072"), 4), 0);
}

// The H200 at 323250a: softmax fp16 rows=1, cols=32000 was answered from rows=1,
// cols=131072, where the vec16 instances run the simt kernel, so the tie there named simt
// (8x slower at 32000). A shape where vec16 runs its own kernel answers instead.
TEST(WaveModel, AShapeOnTheSamePathsAnswersBeforeANearerOneOnAFallback) {
  std::vector<Measurement> rows = {meas(1, "softmax.simt.block256", "rows=1,cols=131072", 60.0),
                                   meas(2, "softmax.vec16.regs_v2", "rows=1,cols=131072", 60.1),
                                   meas(3, "softmax.simt.block256", "rows=4096,cols=32768", 400.0),
                                   meas(4, "softmax.vec16.regs_v2", "rows=4096,cols=32768", 290.0)};
  Geometry vec16;
  vec16.paths.push_back({"cols", 65536, 16});
  std::vector<InstanceGeometry> geometry = {{"softmax.vec16.regs_v2", vec16}};
  SelectionQuery q{"NVIDIA H200", "9.0", "sm_90a", shape("rows=1,cols=32000"), "fp16"};
  auto plain = select_best(q, SelectionInputs{.on_gpu = rows});
  EXPECT_EQ(plain.matched_shape->canonical(), "cols=131072,rows=1");
  EXPECT_EQ(plain.best()->instance, "softmax.simt.block256");
  auto bounded = select_best(q, SelectionInputs{.on_gpu = rows, .sm_count = 132, .geometry = geometry});
  EXPECT_EQ(bounded.matched_shape->canonical(), "cols=32768,rows=4096");
  EXPECT_EQ(bounded.best()->instance, "softmax.vec16.regs_v2");
  EXPECT_EQ(bounded.method, "problem_size");  // bounds alone move no figure by waves
  // In fp32 the same 32000 columns are past the bound too: the nearest shape, on the same
  // paths, answers.
  SelectionQuery fp32{"NVIDIA H200", "9.0", "sm_90a", shape("rows=1,cols=32000"), "fp32"};
  EXPECT_EQ(select_best(fp32, SelectionInputs{.on_gpu = rows, .sm_count = 132, .geometry = geometry})
                .matched_shape->canonical(),
            "cols=131072,rows=1");
  // The prepared rows answer the same.
  PreparedSelection prepared("NVIDIA H200", rows, {}, 132, geometry, element_bytes("fp16"));
  auto m = prepared.match(shape("rows=1,cols=32000"));
  ASSERT_TRUE(m);
  EXPECT_EQ(prepared.canonical()[m->shape], "cols=32768,rows=4096");
  EXPECT_EQ(prepared.answer(shape("rows=1,cols=32000"))->best()->instance, "softmax.vec16.regs_v2");
}

TEST(WaveModel, WorkCountsWavesOfTilesOverTheSmsAndTheStepsOfEach) {
  Geometry narrow{{{"m", 128}, {"n", 128}}, {{"k", 64}}}, wide{{{"m", 128}, {"n", 256}}, {{"k", 64}}};
  // M = 96, N = 28672: 224 tiles of 128x128 make two waves over 132 SMs, 112 of 128x256 one.
  EXPECT_DOUBLE_EQ(wave_work(narrow, shape("m=96,n=28672,k=8192"), 132, kport_rules("gemm")), 2 * 128);
  EXPECT_DOUBLE_EQ(wave_work(wide, shape("m=96,n=28672,k=8192"), 132, kport_rules("gemm")), 1 * 128);
  // A partial tile costs a whole one; batch and heads multiply the blocks; the head dim
  // and causal flag must match exactly and do not.
  Geometry attention{{{"l", 128}}, {{"l", 128}}};
  EXPECT_DOUBLE_EQ(wave_work(attention, shape("b=2,h=16,l=1000,d=128,causal=1"), 132, kport_rules("attention")),
                   2 * 8);  // 256 blocks
  EXPECT_DOUBLE_EQ(wave_work(attention, shape("b=4,h=16,l=1024,d=128,causal=1"), 132, kport_rules("attention")), 4 * 8);
  // A shape without the geometry's dimensions, or an unknown SM count: no work figure.
  EXPECT_EQ(wave_work(narrow, shape("rows=8,cols=8"), 132, ShapeRules{}), 0);
  EXPECT_EQ(wave_work(narrow, shape("m=96,n=28672,k=8192"), 0, kport_rules("gemm")), 0);
}

TEST(WaveModel, ASplitTileIsThatManyBlocksEachWalkingItsShareOfK) {
  auto g = from("gemm", {{"bm", 128}, {"bn", 128}, {"bk", 64}, {"split_k", 2}});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->split, 2);
  EXPECT_EQ(from("gemm", {{"bm", 128}, {"bn", 128}, {"bk", 64}})->split, 1);
  // M = 128, N = 8192: 64 tiles of 128x128 are 128 blocks, one wave over 132 SMs, each of
  // 64 of K = 8192's 128 steps; at N = 8704, 68 tiles are 136 blocks: two waves.
  EXPECT_DOUBLE_EQ(wave_work(*g, shape("m=128,n=8192,k=8192"), 132, kport_rules("gemm")), 1 * 64);
  EXPECT_DOUBLE_EQ(wave_work(*g, shape("m=128,n=8704,k=8192"), 132, kport_rules("gemm")), 2 * 64);
  // An odd number of steps: the larger share counts (65 of 129).
  EXPECT_DOUBLE_EQ(wave_work(*g, shape("m=128,n=8192,k=8256"), 132, kport_rules("gemm")), 65);
  // Unsplit, the same tiles are 64 blocks of all 128 steps.
  Geometry whole{{{"m", 128}, {"n", 128}}, {{"k", 64}}};
  EXPECT_DOUBLE_EQ(wave_work(whole, shape("m=128,n=8192,k=8192"), 132, kport_rules("gemm")), 128);
}

// gemm.gemv splits K over the grid until the GPU is full (split_k 0): its work is all the
// tiles' steps spread over the SMs, so it moves with N x K and not with M (one tile of up to
// 8 rows), where by problem size a batch of 4 would cost 4 times a batch of 1.
TEST(WaveModel, ASplitThatFillsTheGpuSpreadsEveryStepOverTheSms) {
  auto g = from("gemm", {{"bm", 8}, {"bn", 256}, {"bk", 4}, {"split_k", 0}});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->split, 0);
  // 16 column tiles x 3584 steps of K = 14336, over 132 SMs: ceil(57344 / 132).
  EXPECT_DOUBLE_EQ(wave_work(*g, shape("m=1,n=4096,k=14336"), 132, kport_rules("gemm")), 435);
  EXPECT_DOUBLE_EQ(wave_work(*g, shape("m=4,n=4096,k=14336"), 132, kport_rules("gemm")), 435);
  // Twice N and twice K: four times the work (ceil(229376 / 132)).
  EXPECT_DOUBLE_EQ(wave_work(*g, shape("m=4,n=8192,k=28672"), 132, kport_rules("gemm")), 1738);
  // The H200's 42.3 us at 1x4096x14336 moved to 4x8192x28672 (measured there: 155.6 us).
  EXPECT_NEAR(
      estimate_at(&*g, 132, shape("m=1,n=4096,k=14336"), 42.3, shape("m=4,n=8192,k=28672"), kport_rules("gemm")),
      42.3 * 1738 / 435, 1e-9);
  // A negative split is no geometry a kernel has: no work figure.
  Geometry bad = *g;
  bad.split = -1;
  EXPECT_EQ(wave_work(bad, shape("m=4,n=8192,k=28672"), 132, kport_rules("gemm")), 0);
}

// gemm declares `max_m` as the largest m an instance runs: the gemv (8 rows) is no
// candidate at 12 rows, however fast its figure at 4 rows moves there. At 4 rows it is.
TEST(WaveModel, AnInstanceIsNoCandidateBeyondItsLimit) {
  auto gemv = from("gemm", {{"max_m", 8}, {"bm", 8}, {"bn", 256}, {"bk", 4}, {"split_k", 0}});
  ASSERT_TRUE(gemv);
  ASSERT_EQ(gemv->limits.size(), 1u);
  EXPECT_EQ(gemv->limits[0].dim, "m");
  EXPECT_EQ(gemv->limits[0].size, 8);
  EXPECT_TRUE(runs_within(*gemv, shape("m=8,n=4096,k=4096"), 4));
  EXPECT_FALSE(runs_within(*gemv, shape("m=9,n=4096,k=4096"), 4));
  EXPECT_TRUE(runs_within(*gemv, shape("rows=100,cols=4096"), 4)) << "a shape without m limits nothing";
  // A limit alone is a geometry too (no tiles: moved by problem size).
  auto only = from("gemm", {{"max_m", 8}});
  ASSERT_TRUE(only);
  EXPECT_FALSE(has_waves(*only));
  EXPECT_TRUE(from("gemm", {{"bm", 128}, {"bn", 128}, {"bk", 64}})->limits.empty());
  // attention's b and h are limited (each on a grid axis), not tiled: they still multiply
  // the blocks, so the limits change no estimate.
  auto attention = from("attention", {{"br", 128}, {"bc", 128}, {"max_b", 65535}, {"max_h", 65535}});
  ASSERT_TRUE(attention);
  EXPECT_EQ(attention->limits.size(), 2u);
  EXPECT_TRUE(runs_within(*attention, shape("b=512,h=128,l=256,d=128"), 2));
  EXPECT_FALSE(runs_within(*attention, shape("b=65536,h=1,l=256,d=128"), 2));
  EXPECT_EQ(limit_reason(*attention, shape("b=1,h=70000,l=256,d=128"), 2), "runs h up to 65535, not 70000");
  // attention.simt names its tile and step in words; they are its geometry too, so its figure
  // moves with l squared as the others' do (by problem size, l=8192 at half the heads of
  // l=4096 at twice the batch would have cost it the same).
  auto simt = from("attention", {{"queries_per_block", 32}, {"keys_per_tile", 32}, {"max_b", 65535}, {"max_h", 65535}});
  ASSERT_TRUE(simt);
  ASSERT_TRUE(has_waves(*simt));
  EXPECT_DOUBLE_EQ(estimate_at(&*simt, 132, shape("b=4,h=16,l=4096,d=128,causal=1"), 100.0,
                               shape("b=1,h=32,l=8192,d=128,causal=1"), kport_rules("attention")),
                   200.0);
  const Geometry tiles_only{{{"l", 128}}, {{"l", 128}}};
  EXPECT_DOUBLE_EQ(wave_work(*attention, shape("b=4,h=32,l=4096,d=128"), 132, kport_rules("attention")),
                   wave_work(tiles_only, shape("b=4,h=32,l=4096,d=128"), 132, kport_rules("attention")));

  std::vector<Measurement> rows = {meas(1, "gemm.gemv.m8_splitk", "m=4,n=4096,k=4096", 10.0),
                                   meas(2, "gemm.wgmma_tma.128x128x64_s6", "m=4,n=4096,k=4096", 30.0)};
  std::vector<InstanceGeometry> geometry = {{"gemm.gemv.m8_splitk", *gemv},
                                            {"gemm.wgmma_tma.128x128x64_s6", {{{"m", 128}, {"n", 128}}, {{"k", 64}}}}};
  SelectionInputs in{.on_gpu = rows, .sm_count = 132, .geometry = geometry};
  in.rules = &kport_rules("gemm");
  auto six = select_best(SelectionQuery{"NVIDIA H200", "9.0", "sm_90a", shape("m=6,n=4096,k=4096"), "fp32"}, in);
  ASSERT_NE(six.best(), nullptr);
  EXPECT_EQ(six.best()->instance, "gemm.gemv.m8_splitk");
  auto twelve = select_best(SelectionQuery{"NVIDIA H200", "9.0", "sm_90a", shape("m=12,n=4096,k=4096"), "fp32"}, in);
  ASSERT_NE(twelve.best(), nullptr);
  EXPECT_EQ(twelve.best()->instance, "gemm.wgmma_tma.128x128x64_s6");
  ASSERT_EQ(twelve.ranking.size(), 1u);
  bool said = false;
  for (const auto& e : twelve.excluded)
    said = said || (e.instance == "gemm.gemv.m8_splitk" && e.reason == "runs m up to 8, not 12");
  EXPECT_TRUE(said);
}

// grouped_gemm_fp8 declares `run_multiple` on m and n: the 256-row grouped tile runs each
// group's m only in multiples of 256 and, storing D by TMA, n in multiples of 8 (counted in
// rows and columns, not bytes of the fp8 inputs). Off them it is no candidate, and says so.
TEST(WaveModel, AnInstanceIsNoCandidateOffTheMultipleItRuns) {
  auto tall =
      from("grouped_gemm_fp8", {{"bm", 256}, {"bn", 128}, {"bk", 128}, {"run_m_multiple", 256}, {"run_n_multiple", 8}});
  ASSERT_TRUE(tall);
  ASSERT_EQ(tall->multiples.size(), 2u);
  EXPECT_EQ(tall->multiples[0].dim, "m");
  EXPECT_EQ(tall->multiples[0].size, 256);
  EXPECT_TRUE(tall->byte_limits.empty());
  EXPECT_TRUE(runs_within(*tall, shape("g=4,m=512,n=4096,k=7168,scale=2"), 1));
  EXPECT_FALSE(runs_within(*tall, shape("g=4,m=384,n=4096,k=7168,scale=2"), 1));
  EXPECT_EQ(limit_reason(*tall, shape("g=4,m=384,n=4096,k=7168,scale=2"), 1), "runs m in multiples of 256, not 384");
  EXPECT_EQ(limit_reason(*tall, shape("g=4,m=512,n=4100,k=7168,scale=2"), 1), "runs n in multiples of 8, not 4100");
  // A multiple of 1 is none; a multiple alone is a geometry (moved by problem size).
  EXPECT_TRUE(from("gemm_fp8", {{"bm", 128}, {"bn", 128}, {"bk", 128}, {"run_n_multiple", 1}})->multiples.empty());
  auto only = from("gemm_fp8", {{"run_n_multiple", 8}});
  ASSERT_TRUE(only);
  EXPECT_FALSE(has_waves(*only));

  std::vector<Measurement> rows = {
      meas(1, "grouped_gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd", "g=4,m=512,n=4096,k=7168,scale=2", 50.0),
      meas(2, "grouped_gemm_fp8.wgmma_tma.128x128x128_s6", "g=4,m=512,n=4096,k=7168,scale=2", 60.0)};
  std::vector<InstanceGeometry> geometry = {
      {"grouped_gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd", *tall},
      {"grouped_gemm_fp8.wgmma_tma.128x128x128_s6", {{{"m", 128}, {"n", 128}}, {{"k", 128}}}}};
  SelectionInputs in{.on_gpu = rows, .sm_count = 132, .geometry = geometry};
  in.rules = &kport_rules("grouped_gemm_fp8");
  auto off =
      select_best(SelectionQuery{"NVIDIA H200", "9.0", "sm_90a", shape("g=4,m=384,n=4096,k=7168,scale=2"), "e4m3"}, in);
  ASSERT_NE(off.best(), nullptr);
  EXPECT_EQ(off.best()->instance, "grouped_gemm_fp8.wgmma_tma.128x128x128_s6");
  bool said = false;
  for (const auto& e : off.excluded)
    said = said || (e.instance == "grouped_gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd" &&
                    e.reason == "runs m in multiples of 256, not 384");
  EXPECT_TRUE(said);
}

// The cluster row kernels take rows over 32 KB, up to what 16 CTAs hold, in whole 16-byte
// vectors, and no other: outside those bytes (in the question's dtype) they are no
// candidate, however fast their figure at a longer row moves there. The answer says why,
// and the prepared answers take the same path (moved() declines, answer() agrees).
TEST(WaveModel, ARowKernelIsNoCandidateOutsideTheBytesItRuns) {
  auto cluster =
      from("softmax", {{"run_min_row_bytes", 32784}, {"run_max_row_bytes", 524288}, {"run_row_align_bytes", 16}});
  ASSERT_TRUE(cluster);
  EXPECT_FALSE(has_waves(*cluster));
  EXPECT_TRUE(cluster->paths.empty()) << "outside its bytes it runs nothing, not a fallback";
  ASSERT_EQ(cluster->byte_limits.size(), 1u);
  EXPECT_EQ(cluster->byte_limits[0].dim, "cols");
  EXPECT_EQ(cluster->byte_limits[0].min_bytes, 32784);
  EXPECT_EQ(cluster->byte_limits[0].max_bytes, 524288);
  EXPECT_EQ(cluster->byte_limits[0].align_bytes, 16);
  EXPECT_FALSE(runs_within(*cluster, shape("rows=2048,cols=8192"), 4)) << "32 KB of fp32";
  EXPECT_TRUE(runs_within(*cluster, shape("rows=2048,cols=8196"), 4));
  EXPECT_FALSE(runs_within(*cluster, shape("rows=2048,cols=16384"), 2)) << "32 KB of bf16";
  EXPECT_TRUE(runs_within(*cluster, shape("rows=2048,cols=16392"), 2));
  EXPECT_FALSE(runs_within(*cluster, shape("rows=2048,cols=16393"), 2)) << "not whole vectors";
  EXPECT_TRUE(runs_within(*cluster, shape("rows=8,cols=262144"), 2));
  EXPECT_FALSE(runs_within(*cluster, shape("rows=8,cols=262152"), 2)) << "more than 16 CTAs hold";
  EXPECT_TRUE(runs_within(*cluster, shape("rows=2048,cols=8192"), 0)) << "an unknown dtype size limits nothing";
  EXPECT_EQ(limit_reason(*cluster, shape("rows=2048,cols=16384"), 2),
            "runs cols of 32784 to 524288 bytes in multiples of 16, not 16384 (32768 bytes)");
  EXPECT_EQ(limit_reason(*cluster, shape("rows=2048,cols=16392"), 2), "");
  Geometry aligned;
  aligned.byte_limits.push_back({"n", 0, 16});
  EXPECT_EQ(limit_reason(aligned, shape("m=4,n=4100,k=4096"), 2),
            "runs n in multiples of 16 bytes, not 4100 (8200 bytes)");
  Geometry least;
  least.byte_limits.push_back({"cols", 0, 0, 32784});
  EXPECT_EQ(limit_reason(least, shape("rows=1,cols=16"), 4), "runs cols of 32784 bytes or more, not 16 (64 bytes)");

  auto vec16 = from("softmax", {{"max_row_bytes", 65536}, {"row_align_bytes", 16}});
  ASSERT_TRUE(vec16);
  std::vector<Measurement> rows = {meas(1, "softmax.cluster.b256_s32k", "rows=2048,cols=16392", 20.0),
                                   meas(2, "softmax.vec16.regs_v8", "rows=2048,cols=16392", 25.0)};
  rows[0].variant = "cluster";
  rows[1].variant = "vec16";
  const std::vector<InstanceGeometry> geometry = {{"softmax.cluster.b256_s32k", *cluster},
                                                  {"softmax.vec16.regs_v8", *vec16}};
  SelectionInputs in{.on_gpu = rows, .sm_count = 132, .geometry = geometry};
  in.rules = &kport_rules("softmax");
  auto longer = select_best(SelectionQuery{"NVIDIA H200", "9.0", "sm_90a", shape("rows=2048,cols=16400"), "bf16"}, in);
  ASSERT_NE(longer.best(), nullptr);
  EXPECT_EQ(longer.best()->instance, "softmax.cluster.b256_s32k");
  const SelectionQuery at32k{"NVIDIA H200", "9.0", "sm_90a", shape("rows=2048,cols=16384"), "bf16"};
  auto short_row = select_best(at32k, in);
  ASSERT_NE(short_row.best(), nullptr);
  EXPECT_EQ(short_row.best()->instance, "softmax.vec16.regs_v8");
  ASSERT_EQ(short_row.ranking.size(), 1u);
  bool said = false;
  for (const auto& e : short_row.excluded)
    said = said || (e.instance == "softmax.cluster.b256_s32k" &&
                    e.reason == "runs cols of 32784 to 524288 bytes in multiples of 16, not 16384 (32768 bytes)");
  EXPECT_TRUE(said);
  // fp32 at the same columns is 64 KB a row: the cluster instance runs it.
  auto fp32 = select_best(SelectionQuery{"NVIDIA H200", "9.0", "sm_90a", shape("rows=2048,cols=16384"), "fp32"}, in);
  ASSERT_NE(fp32.best(), nullptr);
  EXPECT_EQ(fp32.best()->instance, "softmax.cluster.b256_s32k");

  PreparedSelection prepared("NVIDIA H200", rows, {}, 132, geometry, element_bytes("bf16"), kport_rules("softmax"));
  const auto match = prepared.match(at32k.shape);
  ASSERT_TRUE(match);
  PreparedSelection::Moved moved;
  EXPECT_FALSE(prepared.moved(at32k.shape, *match, moved)) << "an answer that leaves an instance out is written whole";
  auto whole = prepared.answer(at32k.shape, *match);
  ASSERT_NE(whole.best(), nullptr);
  EXPECT_EQ(whole.best()->instance, "softmax.vec16.regs_v8");
  ASSERT_EQ(whole.excluded.size(), short_row.excluded.size());
  EXPECT_TRUE(prepared.moved(shape("rows=2048,cols=16400"), *prepared.match(shape("rows=2048,cols=16400")), moved));

  // Where every instance timed at the nearest shape runs nothing, the answer says so and
  // names none (not "failed or was not timed").
  const std::vector<Measurement> cluster_only = {rows[0]};
  SelectionInputs only_cluster{.on_gpu = cluster_only, .sm_count = 132, .geometry = geometry};
  only_cluster.rules = &kport_rules("softmax");
  auto none = select_best(at32k, only_cluster);
  EXPECT_EQ(none.best(), nullptr);
  EXPECT_EQ(none.kind, Selection::Kind::unranked);
  EXPECT_EQ(none.reason,
            "no instance timed on NVIDIA H200 at cols=16392,rows=2048 runs cols=16384,rows=2048: those timed there "
            "are outside what they run at all (see excluded); none can be recommended, ask for a measurement "
            "(POST /api/v1/best/requests); nearest measured shape cols=16392,rows=2048 stands in for "
            "cols=16384,rows=2048");
  ASSERT_EQ(none.excluded.size(), 1u);
}

TEST(WaveModel, AnEstimateScalesTheMeasuredFigureByTheWorkRatio) {
  Geometry narrow{{{"m", 128}, {"n", 128}}, {{"k", 64}}};
  auto at = shape("m=64,n=14336,k=4096"), to = shape("m=96,n=28672,k=8192");
  // One wave of 64 steps there, two waves of 128 steps here: four times the time.
  EXPECT_DOUBLE_EQ(estimate_at(&narrow, 132, at, 44.0, to, kport_rules("gemm")), 176.0);
  // No geometry: by problem size (m*n*k grows 6x), the same factor for every instance.
  EXPECT_DOUBLE_EQ(estimate_at(nullptr, 132, at, 44.0, to, kport_rules("gemm")), 264.0);
  EXPECT_DOUBLE_EQ(estimate_at(&narrow, 0, at, 44.0, to, kport_rules("gemm")), 264.0);
}

// The H200's figures at the nearest measured shape (m=64,n=14336,k=4096): the 128x128 tile
// 44.0 us, the 128x256 tile 48.5 us. Asked for M = 96, N = 28672, K = 8192, the nearest
// shape alone names 128x128, which was 18 % slower there; moved by their waves, 128x256
// wins.
TEST(WaveModel, AnAnswerFromAnotherShapeRanksByTheWavesEachTileNeedsThere) {
  std::vector<Measurement> rows = {meas(1, "gemm.wgmma_tma.128x128x64_s6", "m=64,n=14336,k=4096", 44.0),
                                   meas(2, "gemm.wgmma_tma.128x256x64_s4", "m=64,n=14336,k=4096", 48.5)};
  std::vector<InstanceGeometry> geometry = {{"gemm.wgmma_tma.128x128x64_s6", {{{"m", 128}, {"n", 128}}, {{"k", 64}}}},
                                            {"gemm.wgmma_tma.128x256x64_s4", {{{"m", 128}, {"n", 256}}, {{"k", 64}}}}};
  SelectionQuery q{"NVIDIA H200", "9.0", "sm_90a", shape("m=96,n=28672,k=8192"), "bf16"};

  auto plain = select_best(q, SelectionInputs{.on_gpu = rows});
  ASSERT_NE(plain.best(), nullptr);
  EXPECT_EQ(plain.best()->instance, "gemm.wgmma_tma.128x128x64_s6");
  EXPECT_EQ(plain.method, "problem_size");

  auto waves = select_best(q, SelectionInputs{.on_gpu = rows, .sm_count = 132, .geometry = geometry});
  ASSERT_NE(waves.best(), nullptr);
  EXPECT_EQ(waves.method, "wave_model");
  EXPECT_EQ(waves.ranked_by, "estimate_us");
  EXPECT_EQ(waves.best()->instance, "gemm.wgmma_tma.128x256x64_s4");
  ASSERT_TRUE(waves.best()->estimate_us);
  EXPECT_DOUBLE_EQ(*waves.best()->estimate_us, 48.5 * 2);        // one wave, twice the K steps
  EXPECT_DOUBLE_EQ(*waves.ranking.at(1).estimate_us, 44.0 * 4);  // two waves, twice the K steps
  EXPECT_NEAR(waves.ranking.at(1).slowdown, 176.0 / 97.0, 1e-12);
  EXPECT_NE(waves.reason.find("132 SMs"), std::string::npos) << waves.reason;
  // The evidence stays the measurement it was moved from.
  EXPECT_EQ(waves.best()->evidence->shape.canonical(), "k=4096,m=64,n=14336");

  // At the measured shape itself nothing is estimated.
  SelectionQuery there{"NVIDIA H200", "9.0", "sm_90a", shape("m=64,n=14336,k=4096"), "bf16"};
  auto exact = select_best(there, SelectionInputs{.on_gpu = rows, .sm_count = 132, .geometry = geometry});
  EXPECT_EQ(exact.method, "measured_shape");
  EXPECT_EQ(exact.ranked_by, "median_us");
  EXPECT_EQ(exact.best()->instance, "gemm.wgmma_tma.128x128x64_s6");
  EXPECT_FALSE(exact.best()->estimate_us);
}

// grouped_gemm_fp8's masked layout: `valid` (mean valid rows of a group) bounds `m` in the
// work (kernels/kport.json's full_at). Measured at 64 valid rows of 256, where a 128-row and a
// 256-row tile each take one tile row a group; asked at 200, the 128-row tile takes two and
// the 256-row tile still one, so the 256-row tile's figure stands while the other doubles.
// A contiguous figure at the same g, m, n, k (every row of 256, much faster per row) never
// answers a masked question.
TEST(WaveModel, AMaskedShapeIsAnsweredFromAnotherValidWithTheRowsItBounds) {
  const ShapeRules rules = kport_rules("grouped_gemm_fp8");
  Geometry short_tile{{{"m", 128}, {"n", 128}}, {{"k", 128}}}, tall_tile{{{"m", 256}, {"n", 128}}, {{"k", 128}}};
  // 8 groups x 1 tile row x 32 column tiles = 256 blocks: two waves of 56 steps.
  EXPECT_DOUBLE_EQ(wave_work(short_tile, shape("g=8,m=256,n=4096,k=7168,scale=2,valid=64"), 132, rules), 2 * 56);
  EXPECT_DOUBLE_EQ(wave_work(short_tile, shape("g=8,m=256,n=4096,k=7168,scale=2,valid=200"), 132, rules), 4 * 56);
  EXPECT_DOUBLE_EQ(wave_work(tall_tile, shape("g=8,m=256,n=4096,k=7168,scale=2,valid=200"), 132, rules), 2 * 56);
  // valid multiplies nothing; by problem size the rows count as min(m, valid).
  EXPECT_DOUBLE_EQ(problem_size(shape("g=8,m=256,n=4096,k=7168,scale=2,valid=64"), rules), 8.0 * 64 * 4096 * 7168);
  EXPECT_DOUBLE_EQ(problem_size(shape("g=8,m=256,n=4096,k=7168,scale=2"), rules), 8.0 * 256 * 4096 * 7168);

  std::vector<Measurement> rows = {
      meas(1, "grouped_gemm_fp8.wgmma_tma.short", "g=8,m=256,n=4096,k=7168,scale=2,valid=64", 40.0),
      meas(2, "grouped_gemm_fp8.wgmma_tma.tall", "g=8,m=256,n=4096,k=7168,scale=2,valid=64", 50.0),
      meas(3, "grouped_gemm_fp8.wgmma_tma.short", "g=8,m=256,n=4096,k=7168,scale=2", 10.0),
      meas(4, "grouped_gemm_fp8.wgmma_tma.tall", "g=8,m=256,n=4096,k=7168,scale=2", 12.0)};
  std::vector<InstanceGeometry> geometry = {{"grouped_gemm_fp8.wgmma_tma.short", short_tile},
                                            {"grouped_gemm_fp8.wgmma_tma.tall", tall_tile}};
  SelectionQuery q{"NVIDIA H200", "9.0", "sm_90a", shape("g=8,m=256,n=4096,k=7168,scale=2,valid=200"), "e4m3"};
  auto sel = select_best(q, SelectionInputs{.on_gpu = rows, .sm_count = 132, .geometry = geometry, .rules = &rules});
  ASSERT_NE(sel.best(), nullptr);
  EXPECT_EQ(sel.kind, Selection::Kind::measured);
  EXPECT_EQ(sel.method, "wave_model");
  ASSERT_TRUE(sel.matched_shape);
  EXPECT_EQ(sel.matched_shape->canonical(), "g=8,k=7168,m=256,n=4096,scale=2,valid=64");
  EXPECT_EQ(sel.best()->instance, "grouped_gemm_fp8.wgmma_tma.tall");
  EXPECT_DOUBLE_EQ(*sel.best()->estimate_us, 50.0);
  EXPECT_DOUBLE_EQ(*sel.ranking.at(1).estimate_us, 80.0);
  // The contiguous question is answered from the contiguous figures.
  SelectionQuery full{"NVIDIA H200", "9.0", "sm_90a", shape("g=8,m=256,n=4096,k=7168,scale=2"), "e4m3"};
  auto contiguous =
      select_best(full, SelectionInputs{.on_gpu = rows, .sm_count = 132, .geometry = geometry, .rules = &rules});
  ASSERT_NE(contiguous.best(), nullptr);
  EXPECT_TRUE(contiguous.exact_shape);
  EXPECT_EQ(contiguous.best()->instance, "grouped_gemm_fp8.wgmma_tma.short");
}

// How sure an answer from another shape is follows the method that answers: measured at
// two shapes where the tiles' waves differ, each answered from the other by the wave model
// names the faster there, where the nearest shape's winner would be 20 % off.
TEST(WaveModel, HowSureScoresTheSameMethodOnTheGpusOwnShapes) {
  std::vector<Measurement> rows = {meas(1, "gemm.wgmma_tma.128x128x64_s6", "m=64,n=14336,k=4096", 44.0),
                                   meas(2, "gemm.wgmma_tma.128x256x64_s4", "m=64,n=14336,k=4096", 48.5),
                                   meas(3, "gemm.wgmma_tma.128x128x64_s6", "m=64,n=28672,k=4096", 88.0),
                                   meas(4, "gemm.wgmma_tma.128x256x64_s4", "m=64,n=28672,k=4096", 50.0),
                                   meas(5, "gemm.wgmma_tma.128x128x64_s6", "m=64,n=4096,k=4096", 25.0),
                                   meas(6, "gemm.wgmma_tma.128x256x64_s4", "m=64,n=4096,k=4096", 42.0)};
  std::vector<InstanceGeometry> geometry = {{"gemm.wgmma_tma.128x128x64_s6", {{{"m", 128}, {"n", 128}}, {{"k", 64}}}},
                                            {"gemm.wgmma_tma.128x256x64_s4", {{{"m", 128}, {"n", 256}}, {{"k", 64}}}}};
  SelectionQuery q{"NVIDIA H200", "9.0", "sm_90a", shape("m=64,n=20000,k=4096"), "bf16"};
  auto plain = select_best(q, SelectionInputs{.on_gpu = rows});
  ASSERT_TRUE(plain.nearest_shape_regret);
  EXPECT_GT(plain.nearest_shape_regret->max, 0.5);  // 28672 answered from 14336: 128x128, 76 % off
  auto waves = select_best(q, SelectionInputs{.on_gpu = rows, .sm_count = 132, .geometry = geometry});
  ASSERT_TRUE(waves.nearest_shape_regret);
  EXPECT_EQ(waves.nearest_shape_regret->shapes, 3);
  EXPECT_DOUBLE_EQ(waves.nearest_shape_regret->max, 0.0);
}

}  // namespace kport::porting
