#include "kport/porting/op_shape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "kport/porting/manifest.h"

namespace kport::porting {
namespace {

// kport's own families, as the coordinator knows them: from kernels/kport.json.
const FamilySet& kport_families() {
  static const FamilySet k = [] {
    auto m = load_manifest(std::filesystem::path(KPORT_KERNELS_DIR) / "kport.json");
    EXPECT_TRUE(m.ok()) << m.error().message;
    return FamilySet(m.ok() ? op_families_of(*m) : std::vector<OpFamily>{});
  }();
  return k;
}

Result<OpShape> op_shape(std::string_view family, std::string_view text) {
  return porting::op_shape(kport_families(), family, text);
}

OpFamily layernorm() {
  OpFamily f;
  f.name = "layernorm";
  f.dims = {OpDim{"rows", std::nullopt, 1, k_max_dim}, OpDim{"cols", std::nullopt, 1, k_max_dim}};
  f.dtypes = {"bf16", "e4m3"};
  f.bytes = "2*rows*cols*bytes_per_elem";
  f.library = "norm-lib";
  return f;
}

}  // namespace

TEST(OpShape, SpellsTheShapeInTheFamilysOwnOrderAndCanonicalizesTheKey) {
  auto g = op_shape("gemm", "k=3000,n=3000,m=3000");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->text, "m=3000,n=3000,k=3000");
  EXPECT_EQ(g->shape.canonical(), "k=3000,m=3000,n=3000");
  auto r = op_shape("rmsnorm", "cols=8192,rows=4096");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "rows=4096,cols=8192");
}

TEST(OpShape, AttentionWithoutCausalIsTheNonCausalShapeTheHarnessReports) {
  auto a = op_shape("attention", "b=4,h=16,l=4096,d=128");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->text, "b=4,h=16,l=4096,d=128,causal=0");
  EXPECT_TRUE(a->shape == op_shape("attention", "causal=0,d=128,l=4096,h=16,b=4")->shape);
  EXPECT_FALSE(a->shape == op_shape("attention", "b=4,h=16,l=4096,d=128,causal=1")->shape);
}

// grouped_gemm's shapes are spelled g,m,n,k as the harness prints them, every key
// required, and its work is the g gemms' together.
TEST(OpShape, GroupedGemmIsSpelledGroupsFirstAndCountsEveryGroupsWork) {
  auto s = op_shape("grouped_gemm", "k=7168,n=4096,m=8192,g=4");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->text, "g=4,m=8192,n=4096,k=7168");
  const OpFamily* f = kport_families().find("grouped_gemm");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->bound(), Bound::compute);
  EXPECT_DOUBLE_EQ(*f->flops_at(s->shape, "bf16"), 2.0 * 4 * 8192 * 4096 * 7168);
  EXPECT_DOUBLE_EQ(*f->bytes_at(s->shape, "bf16"), 4.0 * (8192.0 * 7168 + 7168.0 * 4096 + 8192.0 * 4096) * 2);
  EXPECT_EQ(f->dtypes, std::vector<std::string>{"bf16"});
  auto missing = op_shape("grouped_gemm", "m=128,n=8,k=8");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "shape has no 'g' (grouped_gemm shapes are g,m,n,k,valid)");
  auto zero = op_shape("grouped_gemm", "g=0,m=128,n=8,k=8");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("'g' is out of range"), std::string::npos) << zero.error().message;
}

// grouped_gemm_fp8 is spelled g,m,n,k,scale; scale defaults to 0 (one scale for A, one per
// group for B), and its work and bytes are gemm_fp8's once per group.
TEST(OpShape, GroupedGemmFp8IsSpelledGroupsFirstWithItsScaleMode) {
  auto s = op_shape("grouped_gemm_fp8", "scale=2,k=7168,n=4096,m=8192,g=4");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->text, "g=4,m=8192,n=4096,k=7168,scale=2");
  auto tensor = op_shape("grouped_gemm_fp8", "g=4,m=8192,n=4096,k=7168");
  ASSERT_TRUE(tensor.ok()) << tensor.error().message;
  EXPECT_EQ(tensor->text, "g=4,m=8192,n=4096,k=7168,scale=0");
  EXPECT_FALSE(tensor->shape == s->shape);  // the scaling mode is part of the problem
  const OpFamily* f = kport_families().find("grouped_gemm_fp8");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->bound(), Bound::compute);
  EXPECT_EQ(f->dtypes, (std::vector<std::string>{"e4m3", "e5m2"}));
  EXPECT_DOUBLE_EQ(*f->flops_at(s->shape, "e4m3"), 2.0 * 4 * 8192 * 4096 * 7168);
  EXPECT_DOUBLE_EQ(*f->bytes_at(s->shape, "e4m3"), 4.0 * (8192.0 * 7168 + 4096.0 * 7168 + 2.0 * 8192 * 4096));
  // scale=3, gemm_fp8's power-of-two block scales also as UE8M0 bytes, per group for B.
  auto ue8m0 = op_shape("grouped_gemm_fp8", "g=4,m=128,n=8,k=128,scale=3");
  ASSERT_TRUE(ue8m0.ok()) << ue8m0.error().message;
  EXPECT_EQ(ue8m0->text, "g=4,m=128,n=8,k=128,scale=3");
  auto bad_scale = op_shape("grouped_gemm_fp8", "g=4,m=128,n=8,k=128,scale=4");
  ASSERT_FALSE(bad_scale.ok());
  EXPECT_NE(bad_scale.error().message.find("'scale' is out of range"), std::string::npos) << bad_scale.error().message;
}

// The grouped gemms' `valid` (the masked layout's mean valid rows per group) is left out of the
// text at its default, every row valid: a contiguous shape keeps the text the harness has
// always printed, given with valid or not; a masked one names it, and its work is its valid
// rows'. Each layout's rule on m is its own.
TEST(OpShape, TheGroupedGemmsValidIsWrittenOnlyForTheMaskedLayout) {
  for (const char* text : {"g=4,m=8192,n=4096,k=7168", "valid=1073741824,g=4,m=8192,n=4096,k=7168"}) {
    auto s = op_shape("grouped_gemm", text);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->text, "g=4,m=8192,n=4096,k=7168") << text;
    EXPECT_EQ(s->shape.canonical(), "g=4,k=7168,m=8192,n=4096") << text;
  }
  auto masked = op_shape("grouped_gemm", "g=8,m=256,n=4096,k=7168,valid=64");
  ASSERT_TRUE(masked.ok()) << masked.error().message;
  EXPECT_EQ(masked->text, "g=8,m=256,n=4096,k=7168,valid=64");
  const OpFamily* f = kport_families().find("grouped_gemm");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->flops_at(masked->shape, "bf16"), 2.0 * 8 * 64 * 4096 * 7168);
  EXPECT_DOUBLE_EQ(*f->bytes_at(masked->shape, "bf16"), 8.0 * (64.0 * 7168 + 7168.0 * 4096 + 64.0 * 4096) * 2);
  // A stored contiguous result's shape, as the harness prints it, counts every row.
  EXPECT_DOUBLE_EQ(*f->flops_at(*Shape::parse("g=4,m=8192,n=4096,k=7168"), "bf16"), 2.0 * 4 * 8192 * 4096 * 7168);
  // m off the 128-row tile: refused contiguous, taken masked.
  auto unaligned = unmet_requirement(*f, op_shape("grouped_gemm", "g=4,m=100,n=64,k=64")->shape);
  ASSERT_TRUE(unaligned);
  EXPECT_NE(unaligned->find("m=100 is not a multiple of 128, which grouped_gemm needs when valid=1073741824"),
            std::string::npos)
      << *unaligned;
  EXPECT_FALSE(unmet_requirement(*f, op_shape("grouped_gemm", "g=4,m=100,n=64,k=64,valid=37")->shape));
  auto fp8 = op_shape("grouped_gemm_fp8", "g=32,m=128,n=7168,k=2048,scale=2,valid=16");
  ASSERT_TRUE(fp8.ok()) << fp8.error().message;
  EXPECT_EQ(fp8->text, "g=32,m=128,n=7168,k=2048,scale=2,valid=16");
  EXPECT_EQ(op_shape("grouped_gemm_fp8", "g=4,m=128,n=8,k=128")->text, "g=4,m=128,n=8,k=128,scale=0");
  EXPECT_DOUBLE_EQ(*kport_families().find("grouped_gemm_fp8")->flops_at(fp8->shape, "e4m3"),
                   2.0 * 32 * 16 * 7168 * 2048);
  // Masked and contiguous shapes are never stand-ins for each other (their keys differ);
  // two masked ones are as far apart as their valids, and valid bounds m.
  const ShapeRules rules = f->shape_rules();
  EXPECT_EQ(masked->shape.distance(op_shape("grouped_gemm", "g=8,m=256,n=4096,k=7168")->shape, rules),
            std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(masked->shape.distance(op_shape("grouped_gemm", "g=8,m=256,n=4096,k=7168,valid=32")->shape, rules),
                   std::log(2.0));
  EXPECT_EQ(rules.caps(), (std::vector<ShapeRules::Cap>{{"valid", "m"}}));
  EXPECT_EQ(rules.extent(masked->shape, "m"), 64);
  EXPECT_EQ(rules.extent(*Shape::parse("g=8,m=256,n=4096,k=7168"), "m"), 256);
  EXPECT_EQ(kport_families().find("grouped_gemm_fp8")->shape_rules().caps(),
            (std::vector<ShapeRules::Cap>{{"valid", "m"}}));
}

// `valid` at m is every row of a group: the contiguous layout's case, answered and queued as the
// shape without valid, as the harness reads it; above m no layout has that many valid rows.
TEST(OpShape, TheGroupedGemmsValidAtMIsTheContiguousShapeAndAboveMIsRefused) {
  for (const char* family : {"grouped_gemm", "grouped_gemm_fp8"}) {
    const std::string scale = std::string(family) == "grouped_gemm" ? "" : ",scale=1";
    auto full = op_shape(family, "g=4,m=8192,n=4096,k=7168" + scale + ",valid=8192");
    ASSERT_TRUE(full.ok()) << full.error().message;
    EXPECT_EQ(full->text, "g=4,m=8192,n=4096,k=7168" + scale) << family;
    EXPECT_EQ(full->shape, op_shape(family, "g=4,m=8192,n=4096,k=7168" + scale)->shape) << family;
    auto over = op_shape(family, "g=4,m=8192,n=4096,k=7168" + scale + ",valid=8193");
    ASSERT_FALSE(over.ok()) << family;
    EXPECT_EQ(over.error().code, Errc::invalid_argument);
    EXPECT_EQ(over.error().message,
              "shape value 8193 of 'valid' is above m=8192, its largest (valid=m is the same case as leaving valid "
              "out)");
    auto masked = op_shape(family, "g=4,m=8192,n=4096,k=7168" + scale + ",valid=8191");
    ASSERT_TRUE(masked.ok());
    EXPECT_EQ(masked->text, "g=4,m=8192,n=4096,k=7168" + scale + ",valid=8191");
  }
  // A declaration's full_at names another of its dimensions and comes with a default.
  OpFamily f = layernorm();
  f.dims[1].full_at = "cols";
  f.dims[1].default_value = 1;
  EXPECT_EQ(check_family(f).error().message,
            "field 'dims[1]' of family layernorm: full_at 'cols' of 'cols' must name another dimension of layernorm");
  f.dims[1].full_at = "depth";
  EXPECT_FALSE(check_family(f).ok());
  f.dims[1].full_at = "rows";
  EXPECT_TRUE(check_family(f).ok());
  f.dims[1].default_value.reset();
  EXPECT_EQ(check_family(f).error().message,
            "field 'dims[1]' of family layernorm: 'cols' has a full_at but no default");
}

TEST(OpShape, ShapesTheFamilyCannotRunAreRefusedNamingTheKey) {
  struct Bad {
    const char* family;
    const char* text;
    const char* names;
  };
  for (const Bad& b :
       {Bad{"gemm", "m=1,n=2", "'k'"}, Bad{"gemm", "m=1,n=2,k=3,rows=4", "'rows'"}, Bad{"gemm", "m=0,n=2,k=3", "'m'"},
        Bad{"gemm", "m=1,n=2,k=2000000000", "'k'"}, Bad{"attention", "b=1,h=1,l=1,d=64,causal=2", "'causal'"},
        Bad{"softmax", "rows=1", "'cols'"}, Bad{"gemm", "m=1;n=2", "1;n=2"}}) {
    auto s = op_shape(b.family, b.text);
    ASSERT_FALSE(s.ok()) << b.family << " " << b.text;
    EXPECT_EQ(s.error().code, Errc::invalid_argument);
    EXPECT_NE(s.error().message.find(b.names), std::string::npos) << s.error().message;
  }
}

TEST(OpShape, AnUnknownFamilyIsRefusedListingTheKnownOnes) {
  auto s = op_shape("conv2d", "n=1");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::invalid_argument);
  EXPECT_EQ(s.error().message,
            "op 'conv2d' is not one of gemm, attention, gemm_fp8, grouped_gemm, grouped_gemm_fp8, rmsnorm, softmax");
  EXPECT_EQ(kport_families().all().size(), 7u);
  auto none = FamilySet().family("gemm");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "op 'gemm' is not known: no op family is known yet");
}

TEST(OpShape, AFamilyALibraryDeclaresIsShapedByItsOwnDims) {
  std::vector<OpFamily> all = kport_families().all();
  all.push_back(layernorm());
  const FamilySet known(all);
  auto s = porting::op_shape(known, "layernorm", "cols=4096,rows=128");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->text, "rows=128,cols=4096");
  auto bad = porting::op_shape(known, "layernorm", "rows=128,cols=4096,k=2");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "shape key 'k' is not a dimension of layernorm (layernorm shapes are rows,cols)");
  EXPECT_EQ(known.names(), "gemm, attention, gemm_fp8, grouped_gemm, grouped_gemm_fp8, rmsnorm, softmax, layernorm");
}

TEST(OpShape, ALaterDeclarationOfANameReplacesTheEarlierInItsPlace) {
  OpFamily first = layernorm(), second = layernorm();
  second.dims.push_back(OpDim{"groups", 1, 1, 64});
  second.library = "newer-lib";
  OpFamily other = layernorm();
  other.name = "swiglu";
  const FamilySet known({first, other, second});
  ASSERT_EQ(known.all().size(), 2u);
  EXPECT_EQ(known.all()[0].library, "newer-lib");
  EXPECT_EQ(known.all()[1].name, "swiglu");
  auto s = porting::op_shape(known, "layernorm", "rows=1,cols=2");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->text, "rows=1,cols=2,groups=1");
  EXPECT_EQ(porting::op_shape(known, "layernorm", "rows=1,cols=2,groups=65").error().message,
            "shape value 65 of 'groups' is out of range (1 .. 64)");
}

TEST(OpFamily, BoundAndWorkComeFromTheDeclaration) {
  const OpFamily* gemm = kport_families().find("gemm");
  const OpFamily* softmax = kport_families().find("softmax");
  const OpFamily* attention = kport_families().find("attention");
  ASSERT_TRUE(gemm && softmax && attention);
  EXPECT_EQ(gemm->bound(), Bound::compute);
  EXPECT_EQ(softmax->bound(), Bound::memory);
  EXPECT_DOUBLE_EQ(*gemm->flops_at(*Shape::parse("m=2,n=3,k=4"), "bf16"), 48.0);
  EXPECT_DOUBLE_EQ(*gemm->bytes_at(*Shape::parse("m=2,n=3,k=4"), "fp32"), (8 + 12 + 6) * 4.0);
  EXPECT_DOUBLE_EQ(*softmax->bytes_at(*Shape::parse("rows=2,cols=8"), "bf16"), 64.0);
  EXPECT_FALSE(softmax->flops_at(*Shape::parse("rows=2,cols=8"), "bf16")) << "softmax states no flops";
  // Causal attention does half the work, as the harness counts it.
  EXPECT_DOUBLE_EQ(*attention->flops_at(*Shape::parse("b=1,h=1,l=4,d=2,causal=1"), "bf16"), 64.0);
  OpFamily ln = layernorm();
  EXPECT_EQ(ln.bound(), Bound::memory) << "only bytes stated: memory-bound";
  EXPECT_DOUBLE_EQ(*ln.bytes_at(*Shape::parse("rows=4,cols=8"), "e4m3"), 64.0);
  EXPECT_FALSE(ln.bytes_at(*Shape::parse("rows=4,cols=8"), "int4")) << "an unknown dtype has no element size";
  ln.bound_hint = Bound::compute;
  EXPECT_EQ(ln.bound(), Bound::compute);
}

TEST(OpFamily, DtypeSizesAreOneTable) {
  EXPECT_EQ(dtype_bytes("bf16"), 2);
  EXPECT_EQ(dtype_bytes("fp32"), 4);
  EXPECT_EQ(dtype_bytes("fp64"), 8);
  EXPECT_EQ(dtype_bytes("e4m3"), 1);
  EXPECT_EQ(dtype_bytes("e5m2"), 1);
  EXPECT_EQ(dtype_bytes("fp8_e4m3"), 1);
  EXPECT_EQ(dtype_bytes("int4"), 0);
  EXPECT_EQ(manifest_dtypes().size(), known_dtypes().size());
}

TEST(OpFamily, ADeclarationThatDoesNotHoldIsRefusedNamingTheField) {
  EXPECT_TRUE(check_family(layernorm()).ok());
  auto refusal = [](OpFamily f) {
    auto st = check_family(f);
    EXPECT_FALSE(st.ok());
    return st.ok() ? std::string("(valid)") : st.error().message;
  };
  OpFamily f = layernorm();
  f.name = "layer-norm";
  EXPECT_EQ(refusal(f), "family name 'layer-norm' must be a name of letters, digits and '_' (64 at most)");
  f = layernorm();
  f.dims.clear();
  EXPECT_EQ(refusal(f), "field 'dims' of family layernorm must list 1 to 16 dimensions");
  f = layernorm();
  f.dims.push_back(f.dims[0]);
  EXPECT_EQ(refusal(f), "field 'dims[2]' of family layernorm: dimension 'rows' is listed twice");
  f = layernorm();
  f.dims[1].default_value = 0;
  EXPECT_EQ(refusal(f), "field 'dims[1]' of family layernorm: the default 0 of 'cols' is out of its range (1 .. 2^30)");
  f = layernorm();
  f.dtypes = {"bf16", "fp4"};
  EXPECT_EQ(refusal(f),
            "field 'dtypes[1]' of family layernorm: 'fp4' is not a dtype kport knows (bf16, fp16, fp32, fp64, e4m3, "
            "e5m2, int8)");
  f = layernorm();
  f.flops = "2*rows*k";
  EXPECT_EQ(refusal(f),
            "field 'flops' of family layernorm: '2*rows*k' at column 8: unknown name 'k' (the names are rows, cols, "
            "bytes_per_elem)");
  f = layernorm();
  f.example = "rows=1";
  EXPECT_EQ(refusal(f),
            "field 'example' of family layernorm: 'rows=1': shape has no 'cols' (layernorm shapes are rows,cols)");
}

TEST(OpFamily, ARequirementRulesOutAShapeForEveryInstanceAndSaysWhy) {
  const OpFamily* fp8 = kport_families().find("gemm_fp8");
  ASSERT_NE(fp8, nullptr);
  auto unmet = [&](std::string_view text) {
    auto s = porting::op_shape(*fp8, text);
    EXPECT_TRUE(s.ok()) << text;
    return s.ok() ? unmet_requirement(*fp8, s->shape) : std::optional<std::string>("(no shape)");
  };
  // Per-tensor and row-wise scales need K a multiple of 16, block scales of 128.
  EXPECT_EQ(unmet("m=64,n=7168,k=2048,scale=2"), std::nullopt);
  EXPECT_EQ(unmet("m=1,n=4097,k=400"), std::nullopt);
  EXPECT_EQ(unmet("m=64,n=7168,k=400,scale=1"), std::nullopt);
  auto block = unmet("m=64,n=7168,k=400,scale=2");
  ASSERT_TRUE(block);
  EXPECT_EQ(block->substr(0, block->find(':')), "k=400 is not a multiple of 128, which gemm_fp8 needs when scale=2");
  EXPECT_NE(block->find("a block scale covers"), std::string::npos) << *block;
  auto any = unmet("m=64,n=7168,k=100");
  ASSERT_TRUE(any);
  EXPECT_EQ(any->substr(0, any->find(':')), "k=100 is not a multiple of 16, which gemm_fp8 needs");
  // A family that declares none rules out nothing.
  const OpFamily* gemm = kport_families().find("gemm");
  ASSERT_NE(gemm, nullptr);
  auto odd = porting::op_shape(*gemm, "m=3,n=5,k=7");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(unmet_requirement(*gemm, odd->shape), std::nullopt);
}

TEST(OpFamily, ARequirementThatDoesNotHoldIsRefusedNamingTheField) {
  auto refusal = [](const ShapeRequirement& r) {
    OpFamily f = layernorm();
    f.requirements = {r};
    auto st = check_family(f);
    return st.ok() ? std::string("(valid)") : st.error().message;
  };
  EXPECT_EQ(refusal({"cols", 8, {{"rows", 1}}, "vectors of 8"}), "(valid)");
  EXPECT_EQ(refusal({"colz", 8, {}, ""}),
            "field 'requires[0].dim' of family layernorm: 'colz' is not one of the family's dims");
  EXPECT_EQ(refusal({"cols", 1, {}, ""}),
            "field 'requires[0].multiple' of family layernorm: must be an integer in 2 .. 2^30");
  EXPECT_EQ(refusal({"cols", 8, {{"cols", 8}}, ""}),
            "field 'requires[0].when.cols' of family layernorm: a requirement of 'cols' cannot depend on it");
  EXPECT_EQ(refusal({"cols", 8, {{"batch", 1}}, ""}),
            "field 'requires[0].when.batch' of family layernorm: 'batch' is not one of the family's dims");
  EXPECT_EQ(refusal({"cols", 8, {}, std::string(201, 'x')}),
            "field 'requires[0].why' of family layernorm: must be 200 bytes at most");
}

}  // namespace kport::porting
