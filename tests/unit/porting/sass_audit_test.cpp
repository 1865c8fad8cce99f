// The SASS audit: the line grammar of cuobjdump's disassembly, the rules per feature,
// and what an audit that could not run says. The fixture tests read real `cuobjdump
// -sass` output of the kernel library (fixtures/sass/, see its README).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <sstream>

#include "kport/porting/sass_audit.h"

namespace kport::porting {
namespace {

TEST(SassOpcode, ReadsTheBaseOfAnInstructionLine) {
  EXPECT_EQ(sass_opcode("        /*0120*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24 ;"), "HGMMA");
  EXPECT_EQ(sass_opcode("/*0a80*/  @P0 STL [R1+0x4], R3 ;  /* 0x0000040301000387 */"), "STL");
  EXPECT_EQ(sass_opcode("/*0a90*/  @!UP1 LDL.64 R4, [R1] ;"), "LDL");
  EXPECT_EQ(sass_opcode("/*0010*/  EXIT ;"), "EXIT");
  EXPECT_EQ(sass_opcode("/*1f40*/  UTCHMMA gdesc[UR8], gdesc[UR10], tmem[UR4], tmem[UR12], idesc[UR13], UPT ;"),
            "UTCHMMA");
}

TEST(SassOpcode, EncodingsHeadersAndLabelsAreNotInstructions) {
  EXPECT_EQ(sass_opcode("                                                 /* 0x000fe20000000800 */"), "");
  EXPECT_EQ(sass_opcode("\t\tFunction : _Z4gemmPf"), "");
  EXPECT_EQ(sass_opcode(".L_x_12:"), "");
  EXPECT_EQ(sass_opcode("/*0120*/"), "");
  EXPECT_EQ(sass_opcode("/* HGMMA in a comment */"), "");
  EXPECT_EQ(sass_opcode(""), "");
}

const char* k_two_targets = R"(
Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit

	code for sm_90a
		Function : _Z4gemmPf
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
                                                                          /* 0x000fe20000000800 */
        /*0010*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;
        /*0020*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24 ;
        /*0030*/              @P0  STL [R1], R24 ;
        /*0040*/                   EXIT ;

Fatbin elf code:
================
arch = sm_80
	code for sm_80
		Function : _Z4gemmPf
        /*0000*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0010*/                   EXIT ;
)";

TEST(SassAudit, CountsOnlyTheBuildsTarget) {
  auto a = audit_sass(k_two_targets, "sm_90a", {"wgmma", "tma"});
  ASSERT_TRUE(a.audited) << a.reason;
  EXPECT_EQ(a.functions, (std::vector<std::string>{"_Z4gemmPf"}));
  EXPECT_EQ(a.instructions, 5);
  EXPECT_EQ(a.count("wgmma"), 2);
  EXPECT_EQ(a.count("mma_sync"), 0) << "the sm_80 section's HMMA is another target's code";
  EXPECT_EQ(a.count("local_store"), 1);
  EXPECT_EQ(a.opcodes.at("HGMMA"), 2);
  EXPECT_TRUE(a.passed());
  EXPECT_EQ(a.required, (std::vector<std::string>{"wgmma"}));
}

TEST(SassAudit, MissingPathInstructionFailsWithAMessage) {
  auto a = audit_sass(k_two_targets, "sm_80", {"wgmma"});
  ASSERT_TRUE(a.audited);
  EXPECT_FALSE(a.passed());
  EXPECT_EQ(a.missing, (std::vector<std::string>{"wgmma"}));
  EXPECT_EQ(a.message("sm_80"),
            "declares wgmma but its sm_80 machine code has no HGMMA (or another *GMMA) instruction");
}

TEST(SassAudit, NoCodeForTheTargetIsNotAuditedNeverPassed) {
  auto a = audit_sass(k_two_targets, "sm_100a", {"tcgen05"});
  EXPECT_FALSE(a.audited);
  EXPECT_FALSE(a.passed());
  EXPECT_NE(a.reason.find("no sm_100a instructions"), std::string::npos) << a.reason;
  EXPECT_NE(a.reason.find("sm_90a, sm_80"), std::string::npos) << a.reason;
  auto j = boost::json::parse(a.to_json()).as_object();
  EXPECT_FALSE(j.at("audited").as_bool());
  EXPECT_FALSE(j.contains("passed")) << "an audit that did not run neither passes nor fails";

  auto none = sass_not_audited("no cuobjdump next to /usr/local/cuda/bin/nvcc or on PATH");
  EXPECT_EQ(
      boost::json::parse(none.to_json()),
      boost::json::parse(R"({"audited":false,"reason":"no cuobjdump next to /usr/local/cuda/bin/nvcc or on PATH"})"));
  EXPECT_EQ(audit_sass("", "sm_90a", {}).audited, false);
}

TEST(SassAudit, NvdisasmOutputWithoutSectionHeadersIsTheTargets) {
  auto a = audit_sass(
      ".text._Z1kv:\n        /*0000*/  LDSM.16.M88.4 R4, [R2] ;\n        /*0010*/  HMMA.16816.F32 R8, R4, R6, R8 ;\n",
      "sm_80", {"mma_sync", "ldmatrix"}, "nvdisasm");
  ASSERT_TRUE(a.audited);
  EXPECT_EQ(a.functions, (std::vector<std::string>{"_Z1kv"}));
  EXPECT_TRUE(a.passed());
  EXPECT_EQ(a.count("ldmatrix"), 1);
  EXPECT_EQ(a.count("mma_sync"), 1);
  auto j = boost::json::parse(a.to_json()).as_object();
  EXPECT_EQ(j.at("tool").as_string(), "nvdisasm");
  EXPECT_TRUE(j.at("passed").as_bool());
  EXPECT_EQ(j.at("counts").at("ldmatrix").to_number<int>(), 1);
}

}  // namespace
}  // namespace kport::porting

namespace kport::porting {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(KPORT_SASS_FIXTURES) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::vector<std::string> k_wgmma_features = {"wgmma", "tma", "mbarrier", "setmaxnreg"};
const std::vector<std::string> k_mma_features = {"mma_sync", "mma_sync_bf16", "ldmatrix", "cp_async"};
const std::vector<std::string> k_tcgen05_features = {"tcgen05", "tmem", "tma", "mbarrier"};

TEST(SassFixtures, HopperWgmmaKernelShowsHgmmaAndTma) {
  auto a = audit_sass(fixture("kport_gemm_wgmma_tma_sm_90a__gemm_wgmma_tma_sm90.sass"), "sm_90a", k_wgmma_features);
  ASSERT_TRUE(a.audited) << a.reason;
  ASSERT_EQ(a.functions.size(), 1u);
  EXPECT_NE(a.functions[0].find("gemm_wgmma_tma_kernel"), std::string::npos);
  EXPECT_EQ(a.instructions, 536);
  EXPECT_EQ(a.opcodes.at("HGMMA"), 4);
  EXPECT_EQ(a.count("wgmma"), 4);
  EXPECT_EQ(a.count("tma"), 5) << "3 UTMALDG loads, 2 UTMASTG stores";
  EXPECT_EQ(a.count("local_load") + a.count("local_store"), 0);
  EXPECT_TRUE(a.passed());
}

TEST(SassFixtures, BlackwellTcgen05KernelShowsUtcForms) {
  auto a = audit_sass(fixture("kport_gemm_tcgen05_sm_100a__gemm_tcgen05_sm100.sass"), "sm_100a", k_tcgen05_features);
  ASSERT_TRUE(a.audited) << a.reason;
  EXPECT_EQ(a.instructions, 512);
  EXPECT_EQ(a.count("tcgen05"), 4) << "UTCHMMA only; UTCBAR and UTCATOMSWS are not MMAs";
  EXPECT_EQ(a.opcodes.at("UTCHMMA"), 4);
  EXPECT_EQ(a.opcodes.at("UTCBAR"), 2);
  EXPECT_EQ(a.opcodes.at("UTCATOMSWS"), 3);
  EXPECT_EQ(a.count("tma"), 5);
  EXPECT_TRUE(a.passed());
  // The same code does not prove a wgmma path.
  EXPECT_FALSE(
      audit_sass(fixture("kport_gemm_tcgen05_sm_100a__gemm_tcgen05_sm100.sass"), "sm_100a", {"wgmma"}).passed());
}

TEST(SassFixtures, MmaSyncKernelShowsHmmaAndLdsm) {
  auto a = audit_sass(fixture("kport_gemm_mma_sync_sm_90a__gemm_mma_sync_sm80.sass"), "sm_90a", k_mma_features);
  ASSERT_TRUE(a.audited) << a.reason;
  EXPECT_EQ(a.instructions, 872);
  EXPECT_EQ(a.count("mma_sync"), 32);
  EXPECT_EQ(a.count("ldmatrix"), 12);
  EXPECT_EQ(a.required, (std::vector<std::string>{"mma_sync", "ldmatrix"}));
  EXPECT_TRUE(a.passed());
}

TEST(SassFixtures, PlainCodeForATensorCoreVariantFails) {
  // A wgmma variant whose machine code came out as the simt path.
  auto a = audit_sass(fixture("kport_softmax_simt_sm_90a__softmax_simt.sass"), "sm_90a", k_wgmma_features);
  ASSERT_TRUE(a.audited) << a.reason;
  EXPECT_EQ(a.instructions, 216);
  EXPECT_FALSE(a.passed());
  EXPECT_EQ(a.missing, (std::vector<std::string>{"wgmma"}));
  EXPECT_TRUE(audit_sass(fixture("kport_softmax_simt_sm_90a__softmax_simt.sass"), "sm_90a", {"simt"}).passed());
}

TEST(SassFixtures, SpillingKernelCountsLocalMemory) {
  auto a = audit_sass(fixture("spill__sm_90a.sass"), "sm_90a", {"simt"});
  ASSERT_TRUE(a.audited) << a.reason;
  EXPECT_EQ(a.functions, (std::vector<std::string>{"_Z12spill_kernelPKiPfi"}));
  EXPECT_EQ(a.count("local_load"), 29);
  EXPECT_EQ(a.count("local_store"), 64);
  EXPECT_EQ(a.opcodes.at("LDL"), 29);
  EXPECT_EQ(a.opcodes.at("STL"), 64);
  EXPECT_TRUE(a.passed()) << "spills are counted and diffed, not a missing path";
}

TEST(SassFixtures, AFatObjectIsAuditedPerTarget) {
  std::string fat = fixture("kport_gemm_wgmma_tma_sm_90a__gemm_wgmma_tma_sm90.sass") +
                    fixture("kport_gemm_tcgen05_sm_100a__gemm_tcgen05_sm100.sass");
  auto hopper = audit_sass(fat, "sm_90a", k_wgmma_features);
  auto blackwell = audit_sass(fat, "sm_100a", k_tcgen05_features);
  EXPECT_EQ(hopper.instructions, 536);
  EXPECT_EQ(hopper.count("tcgen05"), 0);
  EXPECT_EQ(blackwell.instructions, 512);
  EXPECT_EQ(blackwell.count("wgmma"), 0);
  EXPECT_TRUE(hopper.passed());
  EXPECT_TRUE(blackwell.passed());
  EXPECT_FALSE(audit_sass(fat, "sm_120a", {"simt"}).audited);
}

}  // namespace
}  // namespace kport::porting
