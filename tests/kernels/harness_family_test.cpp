// The host side of a family a library declares (kport/kernels/family_def.h) and of a
// library's override of kport's own family: shapes, counts, grids, tolerances, selection, and
// the refusal of a broken definition. Its own binary: the registrations here would change
// kport's families for the other harness tests.
#include <gtest/gtest.h>

#include "case_selection.h"
#include "declared_family.h"
#include "kport/kernels/family_def.h"
#include "shapes.h"
#include "tolerance.h"

using namespace kport::harness;
using namespace kport::kernels;

namespace {

double rope_flops(const FamilyArgs& a) { return 6.0 * double(a.dim("tokens")) * double(a.dim("heads")) * a.dim("d"); }
void no_reference(const FamilyArgs&, const float* const*, double* const*) {}

const FamilyDef k_rope{
    .name = "rope",
    .dims = {{"tokens"}, {"heads"}, {"d", 128, 2, 256}},
    .dtypes = {DType::bf16, DType::e4m3},
    .tensors = {{"x", TensorRole::input, {"tokens", "heads", "d"}},
                {"pos", TensorRole::input, {"tokens"}, TensorType::f32, 0.0f, 4096.0f},
                {"y", TensorRole::output, {"tokens", "heads", "d"}}},
    .reference = &no_reference,
    .flops = &rope_flops,
    .tolerances = {{DType::e4m3, 0.1, 0.25}},
    .bench_grid = {"tokens=4096,heads=32", "tokens=1,heads=8,d=64"},
};
KPORT_REGISTER_FAMILY(k_rope);

const FamilyOverride k_gemm_override{
    .family = "gemm",
    .bench_grid = {"m=64,n=64,k=64"},
    .tolerances = {{DType::bf16, 2e-2, 5e-2}},
};
KPORT_OVERRIDE_FAMILY(k_gemm_override);

std::string accept(const Problem&) { return ""; }
cudaError_t no_launch(const Problem&, cudaStream_t) { return cudaSuccess; }
const Instance k_rope_simt{Family::declared, "simt",     "rope.simt", {"simt"}, {DType::bf16}, "{}",
                           &accept,          &no_launch, &k_rope};

}  // namespace

TEST(DeclaredFamily, ParsesItsShapesWithDefaultsInCanonicalOrder) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::declared, "heads=8,tokens=3", s, &k_rope));
  EXPECT_EQ(s.dims, (std::vector<long long>{3, 8, 128}));
  EXPECT_EQ(shape_string(s), "tokens=3,heads=8,d=128");
  EXPECT_EQ(shape_json(s).dump(), R"({"tokens":3,"heads":8,"d":128})");
  EXPECT_EQ(output_elements(s), 3.0 * 8 * 128);
  const auto err = parse_shape(Family::declared, "tokens=3,heads=8,d=512", s, &k_rope);
  ASSERT_TRUE(err);
  EXPECT_EQ(
      err->message,
      "shape 'tokens=3,heads=8,d=512' for rope: d must be between 2 and 256 (expected e.g. tokens=4096,heads=32)");
  EXPECT_TRUE(parse_shape(Family::declared, "tokens=3", s, nullptr)) << "a declared shape needs its def";
}

TEST(DeclaredFamily, CountsWorkAndBytesByItsTensors) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::declared, "tokens=10,heads=2,d=4", s, &k_rope));
  EXPECT_EQ(flop_count(s, DType::bf16), 6.0 * 10 * 2 * 4);
  // x and y in the case's dtype, pos in fp32 whatever the case.
  EXPECT_EQ(byte_count(s, DType::bf16), 2.0 * 80 + 4.0 * 10 + 2.0 * 80);
  EXPECT_EQ(byte_count(s, DType::e4m3), 1.0 * 80 + 4.0 * 10 + 1.0 * 80);
  const Problem p = make_problem(s, DType::e4m3);
  EXPECT_EQ(p.family, Family::declared);
  EXPECT_EQ(p.declared.def, &k_rope);
  EXPECT_EQ(p.declared.dim("heads"), 2);
  EXPECT_EQ(p.declared.dim("batch"), -1);
  EXPECT_EQ(p.declared.dtype, DType::e4m3);
}

TEST(DeclaredFamily, GridsAndTolerancesAreTheDefsOrTheLibrarysOverride) {
  std::vector<std::string> check;
  for (const Shape& s : check_grid(Family::declared, &k_rope)) check.push_back(shape_string(s));
  EXPECT_EQ(check, (std::vector<std::string>{"tokens=4096,heads=32,d=128", "tokens=1,heads=8,d=64"}))
      << "without a check grid of its own, the family checks its bench grid";
  const Tolerance fp8 = tolerance_for(Family::declared, DType::e4m3, &k_rope);
  EXPECT_EQ(fp8.normwise, 0.1);
  EXPECT_EQ(fp8.max_abs_rel, 0.25);
  const Tolerance bf16 = tolerance_for(Family::declared, DType::bf16, &k_rope);  // kport's default
  EXPECT_EQ(bf16.normwise, 1.2e-2);
  EXPECT_EQ(bf16.lse_abs, 0.0);

  // The override of kport's gemm: its bench grid, and its check grid's bench part, are the
  // library's; kport's edge shapes stay; bf16 is judged by the library's bound, fp16 by kport's.
  ASSERT_EQ(bench_grid(Family::gemm).size(), 1u);
  EXPECT_EQ(shape_string(bench_grid(Family::gemm)[0]), "m=64,n=64,k=64");
  EXPECT_EQ(shape_string(check_grid(Family::gemm)[0]), "m=64,n=64,k=64");
  EXPECT_GT(check_grid(Family::gemm).size(), 1u);
  EXPECT_EQ(tolerance_for(Family::gemm, DType::bf16).normwise, 2e-2);
  EXPECT_EQ(tolerance_for(Family::gemm, DType::f16).normwise, 3e-3);
  EXPECT_GT(bench_grid(Family::softmax).size(), 2u) << "a family not overridden keeps kport's grid";
}

TEST(DeclaredFamily, SelectionRunsItLikeKportsFamilies) {
  Options o;
  ASSERT_FALSE(parse_args({"bench", "--all"}, o));
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(o, {&k_rope_simt}, cases));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(shape_string(cases[1].shape), "tokens=1,heads=8,d=64");
  ASSERT_FALSE(parse_args({"check", "--all", "--shape", "tokens=2,heads=x"}, o));
  const auto err = select_cases(o, {&k_rope_simt}, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "bad_shape");
  EXPECT_NE(err->message.find("for rope: 'x' is not an integer"), std::string::npos) << err->message;
}

TEST(DeclaredFamily, ASoundRegistryPasses) { EXPECT_FALSE(check_declared_families({&k_rope_simt})); }

// Each broken definition, registered alone beside the sound ones, is refused with its reason.
TEST(DeclaredFamily, ABrokenDefinitionIsRefusedWithWhatToFix) {
  const auto refused = [](const FamilyDef& bad, const std::string& why) {
    family_registry().push_back(&bad);
    const auto err = check_declared_families({});
    family_registry().pop_back();
    ASSERT_TRUE(err) << why;
    EXPECT_EQ(err->code, "bad_family");
    EXPECT_EQ(err->exit_code, k_exit_cuda);
    EXPECT_NE(err->message.find(why), std::string::npos) << err->message;
  };
  FamilyDef bad = k_rope;
  bad.name = "gemm";
  refused(bad, "the name is one of kport's own families");
  bad = k_rope;
  refused(bad, "two FamilyDefs have this name");
  bad.name = "rope2";
  bad.dims.push_back({"heads"});
  refused(bad, "dim 'heads' is declared twice");
  bad = k_rope, bad.name = "rope2";
  bad.tensors[0].extent.push_back("batch");
  refused(bad, "tensor 'x' spans 'batch', which is not one of its dims");
  bad = k_rope, bad.name = "rope2";
  bad.tensors.pop_back();
  refused(bad, "it has no output tensor");
  bad = k_rope, bad.name = "rope2";
  bad.reference = nullptr;
  refused(bad, "it has no reference");
  bad = k_rope, bad.name = "rope2";
  bad.check_grid = {"tokens=1,heads=0"};
  refused(bad, "its check grid: shape 'tokens=1,heads=0' for rope2: heads must be between 1 and");

  const Instance fp16{Family::declared, "simt", "rope.fp16", {}, {DType::f16}, "{}", &accept, &no_launch, &k_rope};
  const auto err = check_declared_families({&fp16});
  ASSERT_TRUE(err);
  EXPECT_NE(err->message.find("instance 'rope.fp16' runs fp16, which is not among the family's dtypes"),
            std::string::npos);
  const Instance orphan{Family::declared, "simt", "rope.orphan", {}, {DType::bf16}, "{}", &accept, &no_launch};
  ASSERT_TRUE(check_declared_families({&orphan}));
}
