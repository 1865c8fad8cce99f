// The repro commands a result shows (reproduce.h), and the seed's round trip through the
// API: unsigned 64-bit in JSON, its bit pattern in the store.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "codec.h"
#include "reproduce.h"

namespace kport::coordinator {
namespace {
namespace json = boost::json;

const std::string k_sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

db::ResultRecord timed_result() {
  db::ResultRecord r;
  r.id = 7;
  r.target = "sm_90a";
  r.instance = "gemm.wgmma_tma.128x256x64_s3";
  r.dtype = "bf16";
  r.shape = "m=4096,n=4096,k=4096";
  r.seed = static_cast<std::int64_t>(0xFEDCBA9876543210ull);
  r.median_us = 512.0;
  json::object repro{{"harness", "kport-harness-sm_90a"},
                     {"harness_sha256", k_sha},
                     {"target", "sm_90a"},
                     {"check", json::array{"check", "--instance", r.instance, "--dtype", "bf16", "--shape", r.shape,
                                           "--seed", "18364758544493064720", "--timeout-s", "60"}},
                     {"bench", json::array{"bench", "--instance", r.instance, "--dtype", "bf16", "--shape", r.shape,
                                           "--seed", "18364758544493064720", "--timeout-s", "60", "--time-cap-ms",
                                           "500", "--max-duty", "0.5", "--l2-flush", "write"}}};
  r.env_json = json::serialize(json::object{{"reproduce", repro}});
  return r;
}

TEST(Reproduce, CommandsDownloadTheHarnessBySha256AndReplayTheRecordedArguments) {
  auto p = reproduction(timed_result(), "http://kport.example:8080");
  EXPECT_EQ(p.download_url, "http://kport.example:8080/api/v1/artifacts/" + k_sha);
  const std::string fetch = "curl -fsSLo kport-harness-sm_90a http://kport.example:8080/api/v1/artifacts/" + k_sha +
                            " && chmod +x kport-harness-sm_90a && ./kport-harness-sm_90a ";
  EXPECT_EQ(p.check, fetch +
                         "check --instance gemm.wgmma_tma.128x256x64_s3 --dtype bf16 --shape m=4096,n=4096,k=4096 "
                         "--seed 18364758544493064720 --timeout-s 60");
  EXPECT_EQ(p.bench,
            fetch +
                "bench --instance gemm.wgmma_tma.128x256x64_s3 --dtype bf16 --shape m=4096,n=4096,k=4096 "
                "--seed 18364758544493064720 --timeout-s 60 --time-cap-ms 500 --max-duty 0.5 --l2-flush write");
  EXPECT_TRUE(p.missing.empty());
  auto j = to_json(p);
  EXPECT_TRUE(j.at("exact").as_bool());
  EXPECT_EQ(j.at("bench_args").as_array().size(), 17u);
  EXPECT_EQ(j.at("harness_sha256").as_string(), k_sha);
}

TEST(Reproduce, WithoutAKnownServerTheShellVariableNamesTheCoordinator) {
  // The dashboard's form: the command still runs, against $KPORT_SERVER (the CLI's variable).
  std::string cmd = reproduce_command(timed_result(), false);
  EXPECT_EQ(cmd.rfind("curl -fsSLo kport-harness-sm_90a \"${KPORT_SERVER:-http://127.0.0.1:8080}/api/v1/artifacts/", 0),
            0u)
      << cmd;
  EXPECT_NE(cmd.find("\"${KPORT_SERVER:-http://127.0.0.1:8080}/api/v1/artifacts/" + k_sha + "\""), std::string::npos)
      << cmd;
  EXPECT_NE(reproduce_command(timed_result(), true).find("./kport-harness-sm_90a bench "), std::string::npos);
}

TEST(Reproduce, AResultWithoutRecordedArgumentsSaysWhatIsMissing) {
  db::ResultRecord r = timed_result();
  r.env_json = "{}";
  r.seed = -1;  // the bit pattern of 2^64 - 1
  auto p = reproduction(r, "http://h");
  EXPECT_EQ(p.check,
            "kport-harness-sm_90a check --instance gemm.wgmma_tma.128x256x64_s3 --dtype bf16 "
            "--shape m=4096,n=4096,k=4096 --seed 18446744073709551615");
  EXPECT_EQ(p.bench,
            "kport-harness-sm_90a bench --instance gemm.wgmma_tma.128x256x64_s3 --dtype bf16 "
            "--shape m=4096,n=4096,k=4096");
  EXPECT_TRUE(p.download_url.empty());
  ASSERT_EQ(p.missing.size(), 3u);
  EXPECT_NE(p.missing[0].find("harness_sha256"), std::string::npos);
  EXPECT_NE(p.missing[2].find("sampling flags"), std::string::npos);
  EXPECT_FALSE(to_json(p).at("exact").as_bool());
  // Not timed: no bench command at all.
  r.median_us.reset();
  EXPECT_TRUE(reproduction(r, "http://h").bench.empty());
  EXPECT_TRUE(to_json(reproduction(r, "http://h")).at("bench").is_null());
}

TEST(Reproduce, ArgumentsARunnerSentAreQuotedForTheShell) {
  db::ResultRecord r = timed_result();
  r.env_json = json::serialize(json::object{
      {"reproduce", json::object{{"harness", "kport-harness-sm_90a; rm -rf ~"},
                                 {"harness_sha256", k_sha},
                                 {"check", json::array{"check", "--instance", "x$(reboot)", "--shape", "it's"}}}}});
  auto p = reproduction(r, "http://h");
  EXPECT_EQ(p.harness, "kport-harness-sm_90a");  // a name that is not one is replaced
  EXPECT_NE(p.check.find("./kport-harness-sm_90a check --instance 'x$(reboot)' --shape 'it'\\''s'"), std::string::npos)
      << p.check;
  EXPECT_EQ(shell_quote("m=1,n=2,k=3"), "m=1,n=2,k=3");
  EXPECT_EQ(shell_quote(""), "''");
  // Malformed arguments (not strings, or another command) fall back and say so.
  r.env_json = R"({"reproduce":{"check":["bench","--instance"],"bench":[1,2]}})";
  auto q = reproduction(r, "http://h");
  EXPECT_EQ(q.check_args.front(), "check");
  bool said = false;
  for (const auto& m : q.missing) said |= m.find("well-formed") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(ResultSeed, TheFull64BitSeedIsKeptAsItsBitPatternAndShownUnsigned) {
  for (std::uint64_t seed :
       {std::uint64_t{0}, std::uint64_t{42}, std::uint64_t{0x7fffffffffffffff}, std::uint64_t{0x8000000000000000},
        std::uint64_t{0xFEDCBA9876543210}, std::uint64_t{0xffffffffffffffff}}) {
    // The runner sends the number as the harness printed it (JSON unsigned).
    auto body =
        json::parse(R"({"family":"gemm","variant":"v","instance":"gemm.v.a","dtype":"bf16","shape":"m=1,n=1,k=1",)"
                    R"("status":"passed","seed":)" +
                    std::to_string(seed) + "}")
            .as_object();
    Fields f(body, "result");
    db::ResultRecord r = result_from_json(f);
    ASSERT_TRUE(f.ok()) << f.error().message;
    ASSERT_TRUE(r.seed.has_value());
    EXPECT_EQ(static_cast<std::uint64_t>(*r.seed), seed);  // the stored INTEGER is its bit pattern
    auto shown = to_json(r).at("numerics").at("seed");
    EXPECT_EQ(json::serialize(shown), std::to_string(seed));  // shown unsigned, digits the harness's --seed reads
  }
}

TEST(ResultSeed, ANegativeOrFractionalSeedIsRejectedWithTheField) {
  for (const char* bad : {"-1", "1.5", "\"12\"", "18446744073709551616"}) {
    // 2^64 fits no JSON integer Boost reads: it parses as a double, and is refused as one.
    auto v =
        json::parse(std::string(R"({"family":"gemm","variant":"v","instance":"i","dtype":"bf16","shape":"m=1,n=1,k=1",)"
                                R"("status":"passed","seed":)") +
                    bad + "}");
    Fields f(v.as_object(), "result");
    result_from_json(f);
    ASSERT_FALSE(f.ok()) << bad;
    EXPECT_NE(f.error().message.find("'result.seed'"), std::string::npos) << f.error().message;
  }
}

}  // namespace
}  // namespace kport::coordinator
