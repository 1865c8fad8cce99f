// ptxas -v parsing and the instruction audit, on text captured from nvcc 13.0.
#include <gtest/gtest.h>

#include "kport/porting/build_driver.h"
#include "kport/porting/resource_diff.h"
#include "kport/porting/resources.h"

namespace kport::porting {
namespace {

const char* k_ptxas = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z4gemmPf' for 'sm_90a'
ptxas info    : Function properties for _Z4gemmPf
    8 bytes stack frame, 48 bytes spill stores, 40 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Function properties for _Z6helperv
    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z7softmaxPf' for 'sm_90a'
ptxas info    : Function properties for _Z7softmaxPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 256 bytes smem, 380 bytes cmem[0]
ptxas info    : Compile time = 1.2 ms
)";

TEST(Ptxas, ParsesEveryEntryAndTakesTheWorst) {
  auto u = parse_ptxas_verbose(k_ptxas);
  ASSERT_EQ(u.entries.size(), 2u);
  EXPECT_EQ(u.entries[0].name, "_Z4gemmPf");
  EXPECT_EQ(u.entries[0].registers, 255);
  EXPECT_EQ(u.entries[0].spill_stores_bytes, 48);
  EXPECT_EQ(u.entries[0].spill_loads_bytes, 40);
  EXPECT_EQ(u.entries[0].stack_frame_bytes, 8) << "a device function's frame is not the entry's";
  EXPECT_EQ(u.entries[0].shared_mem_bytes, 1024);
  EXPECT_EQ(u.entries[0].constant_mem_bytes, 408) << "all constant banks";
  EXPECT_EQ(u.entries[1].registers, 32);
  EXPECT_EQ(u.registers, 255);
  EXPECT_EQ(u.shared_mem_bytes, 1024);
  EXPECT_EQ(u.spill_stores_bytes, 48);
}

TEST(Ptxas, WithoutSmemOrCmemFieldsReadsZero) {
  auto u = parse_ptxas_verbose(
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers\n");
  ASSERT_EQ(u.entries.size(), 1u);
  EXPECT_EQ(u.registers, 168);
  EXPECT_EQ(u.shared_mem_bytes, 0);
  EXPECT_EQ(u.constant_mem_bytes, 0);
}

TEST(Ptxas, EmptyOrUnrelatedOutputHasNoEntries) {
  EXPECT_TRUE(parse_ptxas_verbose("").entries.empty());
  EXPECT_TRUE(parse_ptxas_verbose("x.cu(3): error: oops\n").entries.empty());
}

const char* k_hopper_ptx = R"(
.version 9.0
.target sm_90a
// wgmma.mma_async in a comment does not count
.visible .entry k() {
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%f1}, %rd1, %rd2, 1, 1, 1, 0, 0;
  wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%f1}, %rd3, %rd4, 1, 1, 1, 0, 0;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd5, {%r2, %r3}], [%r4];
}
)";

TEST(Audit, HopperVariantWithWgmmaPasses) {
  auto a = audit_ptx(k_hopper_ptx, {"wgmma", "tma", "mbarrier"});
  EXPECT_TRUE(a.passed());
  EXPECT_EQ(a.counts.at("wgmma"), 2);
  EXPECT_EQ(a.counts.at("tma"), 1);
  EXPECT_EQ(a.required, (std::vector<std::string>{"wgmma"}));
  EXPECT_NE(a.to_json("ptx").find("\"passed\":true"), std::string::npos);
}

TEST(Audit, DeclaredFeatureWithoutItsInstructionFails) {
  // The sm_90a variant whose wgmma path a preprocessor guard compiled out.
  auto a = audit_ptx(".target sm_90a\n.entry k() {\n  fma.rn.f32 %f1, %f2, %f3, %f4;\n}\n", {"wgmma", "tma"});
  EXPECT_FALSE(a.passed());
  EXPECT_EQ(a.missing, (std::vector<std::string>{"wgmma"}));
  EXPECT_NE(a.message().find("declares wgmma but its generated PTX has no wgmma.mma_async"), std::string::npos);
}

TEST(Audit, Tcgen05AndMmaSyncRules) {
  EXPECT_FALSE(audit_ptx("  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {..};\n", {"tcgen05"}).passed());
  EXPECT_TRUE(
      audit_ptx("  tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, 1;\n", {"tcgen05", "tmem"}).passed());
  auto ampere = audit_ptx("  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {..};\n", {"mma_sync", "cp_async"});
  EXPECT_TRUE(ampere.passed());
  EXPECT_EQ(ampere.counts.at("mma_sync"), 1);
  EXPECT_TRUE(audit_ptx("", {"simt"}).passed()) << "a portable variant demands nothing";
}

TEST(Diagnostics, DropsPtxasChatterKeepsErrors) {
  std::string out = std::string(k_ptxas) + "x.cu(3): error: identifier \"y\" is undefined\n";
  auto d = compiler_diagnostics(out);
  EXPECT_EQ(d, "x.cu(3): error: identifier \"y\" is undefined\n");
  EXPECT_NE(compiler_diagnostics(std::string(100, 'e'), 10).find("more bytes"), std::string::npos);
}

}  // namespace
}  // namespace kport::porting

namespace kport::porting {
namespace {

TEST(ResourceDiff, NamesEveryFigureThatMoved) {
  ResourceFigures parent{"ok", 168, 0, 0, 1024, 0, {}};
  ResourceFigures now{"ok", 200, 48, 40, 1024, 16, {}};
  auto c = resource_changes(parent, now);
  EXPECT_EQ(c, (std::vector<std::string>{"registers 168 -> 200", "spills 0/0 -> 48/40 B (stores/loads)",
                                         "stack frame 0 -> 16 B"}));
}

TEST(ResourceDiff, UnchangedOrUnknownFiguresAreQuiet) {
  ResourceFigures a{"ok", 64, 0, 0, 0, 0, {}};
  EXPECT_TRUE(resource_changes(a, a).empty());
  ResourceFigures unknown{"compile_error", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, {}};
  EXPECT_EQ(resource_changes(a, unknown), (std::vector<std::string>{"status ok -> compile_error"}));
}

TEST(ResourceDiff, LostPathInstructionsAndNewLocalMemoryAreFlagged) {
  ResourceFigures parent{"ok", 168, 0, 0, 1024, 0, {{"wgmma", 24}, {"local_load", 0}, {"local_store", 0}, {"tma", 4}}};
  ResourceFigures now{"ok", 168, 0, 0, 1024, 0, {{"wgmma", 0}, {"local_load", 6}, {"local_store", 3}, {"tma", 2}}};
  EXPECT_EQ(resource_changes(parent, now),
            (std::vector<std::string>{"SASS lost wgmma (HGMMA) 24 -> 0", "SASS local loads (LDL) 0 -> 6",
                                      "SASS local stores (STL) 0 -> 3"}));
  EXPECT_TRUE(resource_changes(now, parent).empty()) << "regaining the path or losing spills is not a regression";
  ResourceFigures unaudited{"ok", 168, 0, 0, 1024, 0, {}};
  EXPECT_TRUE(resource_changes(parent, unaudited).empty()) << "a side without a SASS audit compares nothing";
  EXPECT_TRUE(resource_changes(unaudited, now).empty());
}

}  // namespace
}  // namespace kport::porting
