// Which cases check/bench run, and the registry they are drawn from.
#include <gtest/gtest.h>

#include "kport/kernels/registry.h"
#include "case_selection.h"

using namespace kport::harness;
using kport::kernels::Instance;
using kport::kernels::Problem;

namespace {

std::string accept(const Problem&) { return ""; }
cudaError_t no_launch(const Problem&, cudaStream_t) { return cudaSuccess; }

const Instance k_gemm_a{Family::gemm, "simt",  "gemm.fake.a", {"simt"}, {DType::bf16, DType::f16, DType::f32},
                        "{}",         &accept, &no_launch};
const Instance k_gemm_b{Family::gemm, "mma_sync", "gemm.fake.a_wide", {"mma_sync"}, {DType::f16},
                        "{}",         &accept,    &no_launch};
const Instance k_softmax{Family::softmax,           "vec16", "softmax.fake.v4", {"simt"},
                         {DType::bf16, DType::f32}, "{}",    &accept,           &no_launch};
KPORT_REGISTER_KERNEL(k_softmax);  // this test binary's registry holds one instance

const std::vector<const Instance*> k_all = {&k_gemm_a, &k_gemm_b, &k_softmax};

Options options(std::vector<std::string> args) {
  Options o;
  const auto err = parse_args(args, o);
  EXPECT_FALSE(err) << (err ? err->message : "");
  return o;
}

}  // namespace

TEST(Registry, FindsRegisteredInstancesAndNamesEnums) {
  ASSERT_EQ(kport::kernels::registry().size(), 1u);
  EXPECT_EQ(kport::kernels::find_instance("softmax.fake.v4"), &k_softmax);
  EXPECT_EQ(kport::kernels::find_instance("gemm.fake.a"), nullptr);
  EXPECT_STREQ(kport::kernels::dtype_name(DType::bf16), "bf16");
  EXPECT_STREQ(kport::kernels::dtype_name(DType::f16), "fp16");
  EXPECT_STREQ(kport::kernels::family_name(Family::attention), "attention");
  EXPECT_EQ(kport::kernels::dtype_size(DType::f32), 4);
}

TEST(Selection, OneCase) {
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(
      options({"check", "--instance", "gemm.fake.a", "--dtype", "fp32", "--shape", "m=3,n=4,k=5"}), k_all, cases));
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].instance, &k_gemm_a);
  EXPECT_EQ(cases[0].dtype, DType::f32);
  EXPECT_EQ(cases[0].shape.k, 5);
}

TEST(Selection, UnknownInstanceListsWhatIsBuilt) {
  std::vector<Case> cases;
  const auto err =
      select_cases(options({"check", "--instance", "nope", "--dtype", "bf16", "--shape", "m=1,n=1,k=1"}), k_all, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "unknown_instance");
  EXPECT_NE(err->message.find("gemm.fake.a_wide"), std::string::npos);
}

TEST(Selection, CheckAllCoversEveryDtypeAndGridShape) {
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(options({"check", "--all"}), k_all, cases));
  const std::size_t gemm_grid = check_grid(Family::gemm).size();
  const std::size_t softmax_grid = check_grid(Family::softmax).size();
  EXPECT_EQ(cases.size(), 3 * gemm_grid + 1 * gemm_grid + 2 * softmax_grid);
}

TEST(Selection, BenchAllDefaultsToBf16AndTheBenchGrid) {
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(options({"bench", "--all"}), k_all, cases));
  for (const Case& c : cases) {
    const DType expected = c.instance == &k_gemm_b ? DType::f16 : DType::bf16;  // f16 only
    EXPECT_EQ(c.dtype, expected);
  }
  EXPECT_EQ(cases.size(), 2 * bench_grid(Family::gemm).size() + bench_grid(Family::softmax).size());
}

TEST(Selection, FilterInstanceAndShape) {
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(
      options({"check", "--all", "--instance", "gemm.fake.a", "--dtype", "bf16", "--shape", "m=7,n=8,k=9"}), k_all,
      cases));
  ASSERT_EQ(cases.size(), 1u);  // exact name: gemm.fake.a_wide is not included
  ASSERT_FALSE(select_cases(
      options({"check", "--all", "--filter", "fake.a", "--dtype", "fp16", "--shape", "m=7,n=8,k=9"}), k_all, cases));
  EXPECT_EQ(cases.size(), 2u);
  // A shape of one family applies to that family only.
  ASSERT_FALSE(select_cases(options({"check", "--all", "--shape", "rows=3,cols=5"}), k_all, cases));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].instance, &k_softmax);
  const auto err = select_cases(options({"check", "--all", "--shape", "m=1,n=2"}), k_all, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "bad_shape");
}

TEST(Selection, NothingSelectedIsAnError) {
  std::vector<Case> cases;
  const auto err = select_cases(options({"check", "--all", "--filter", "attention"}), k_all, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "no_cases");
  EXPECT_NE(err->message.find("attention"), std::string::npos);
}

TEST(Selection, CasesNameExactlyWhatRunsAcrossInstancesInOrder) {
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(options({"bench", "--case", "softmax.fake.v4:fp32:rows=3,cols=5", "--case",
                                     "gemm.fake.a:bf16:m=7,n=8,k=9", "--case", "gemm.fake.a_wide:fp16:m=1,n=2,k=3"}),
                            k_all, cases));
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].instance, &k_softmax);
  EXPECT_EQ(cases[0].dtype, DType::f32);
  EXPECT_EQ(cases[0].shape.cols, 5);
  EXPECT_EQ(cases[1].instance, &k_gemm_a);
  EXPECT_EQ(cases[1].shape.n, 8);
  EXPECT_EQ(cases[2].instance, &k_gemm_b);
  EXPECT_EQ(cases[2].dtype, DType::f16);
}

TEST(Selection, ACaseWithAnUnknownInstanceDtypeOrShapeIsAnError) {
  std::vector<Case> cases;
  auto err = select_cases(options({"check", "--case", "gemm.nope:bf16:m=1,n=1,k=1"}), k_all, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "unknown_instance");
  err = select_cases(options({"check", "--case", "gemm.fake.a:int4:m=1,n=1,k=1"}), k_all, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "unknown_dtype");
  err = select_cases(options({"check", "--case", "gemm.fake.a:bf16:rows=1,cols=1"}), k_all, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "bad_shape");
}

TEST(Selection, TheBenchGridIsEveryDtypeWhenAsked) {
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(options({"bench", "--all", "--dtype", "all"}), k_all, cases));
  EXPECT_EQ(cases.size(), 3 * bench_grid(Family::gemm).size() + 1 * bench_grid(Family::gemm).size() +
                              2 * bench_grid(Family::softmax).size());
}
