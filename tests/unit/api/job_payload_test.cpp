// A job's payload: its purpose read once, and what to run.
#include "kport/api/job_payload.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace json = boost::json;
using namespace kport;

TEST(JobPayload, AnEmptyPayloadIsAPlainCheck) {
  for (const char* text : {"", "{}"}) {
    auto p = api::parse_job_payload(std::string_view(text));
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->purpose, api::JobPurpose::check);
    EXPECT_TRUE(p->instances.empty());
    EXPECT_FALSE(p->cases);
  }
}

TEST(JobPayload, ReadsEachPurpose) {
  auto rv = api::parse_job_payload(std::string_view(
      R"({"revalidate":{"gpu_model":"NVIDIA H200","driver":"600.1","previous_driver":"580.1"},"instances":["a"]})"));
  ASSERT_TRUE(rv.ok()) << rv.error().message;
  EXPECT_EQ(rv->purpose, api::JobPurpose::revalidate);
  EXPECT_EQ(rv->revalidate->previous_driver, "580.1");
  EXPECT_EQ(rv->instances, std::vector<std::string>{"a"});
  auto rm = api::parse_job_payload(std::string_view(R"({"remeasure":true,"instances":["a","b"]})"));
  ASSERT_TRUE(rm.ok());
  EXPECT_EQ(rm->purpose, api::JobPurpose::remeasure);
  auto mr = api::parse_job_payload(std::string_view(
      R"({"cases":[{"family":"gemm","dtype":"bf16","shape":"m=1,n=2,k=3"}],"bench":true,
          "best_request":{"gpu_model":"NVIDIA H200","op":"gemm","dtype":"bf16","shape":"k=3,m=1,n=2"}})"));
  ASSERT_TRUE(mr.ok()) << mr.error().message;
  EXPECT_EQ(mr->purpose, api::JobPurpose::measure_request);
  ASSERT_TRUE(mr->cases);
  EXPECT_EQ((*mr->cases)[0].shape, "m=1,n=2,k=3");
  EXPECT_EQ(mr->bench, true);
}

TEST(JobPayload, RoundTripsAndKeepsFieldsOfNoMeaningToKport) {
  const json::object in = json::parse(R"({"operator_note":["gemm.simt"],"revalidate":{"gpu_model":"G","driver":"2",
      "previous_driver":"1"},"cases":[{"family":"gemm","dtype":"fp32","shape":"m=1"}],"instances":["x"],"filter":"simt",
      "bench":false,"repo_url":"/srv/kernels.git","kernels_dir":"kernels"})")
                              .as_object();
  auto p = api::parse_job_payload(in);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(api::to_json(*p), in);
  EXPECT_EQ(p->extra.at("operator_note"), (json::array{"gemm.simt"}));
  auto again = api::parse_job_payload(api::to_json(*p));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(api::to_json(*again), in);
}

// A bisection's probe names the variants its build compiles; a re-measure, the harness it
// times interleaved with its own.
TEST(JobPayload, VariantsAndThePairedHarnessAreTyped) {
  const json::object in =
      json::parse(
          R"({"variants":["gemm.simt","gemm.mma"],"remeasure":true,"paired":{"commit":"abc","harness_sha256":"ff"}})")
          .as_object();
  auto p = api::parse_job_payload(in);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->variants, (std::vector<std::string>{"gemm.simt", "gemm.mma"}));
  ASSERT_TRUE(p->paired);
  EXPECT_EQ(p->paired->commit, "abc");
  EXPECT_EQ(p->paired->harness_sha256, "ff");
  EXPECT_TRUE(p->extra.empty());
  EXPECT_EQ(api::to_json(*p), in);
  auto bad = api::parse_job_payload(std::string_view(R"({"paired":{"commit":"abc"}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'payload.paired.harness_sha256' is required"), std::string::npos)
      << bad.error().message;
}

TEST(JobPayload, AWrongTypeNamesTheField) {
  auto p = api::parse_job_payload(std::string_view(R"({"cases":[{"family":"gemm","dtype":16,"shape":"m=1"}]})"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("'payload.cases[0].dtype' must be a string"), std::string::npos)
      << p.error().message;
  p = api::parse_job_payload(std::string_view(R"({"bench":"yes"})"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("'payload.bench' must be true or false"), std::string::npos) << p.error().message;
  p = api::parse_job_payload(std::string_view(R"({"revalidate":{"driver":"1"}})"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("'payload.revalidate.gpu_model' is required"), std::string::npos)
      << p.error().message;
}

TEST(JobPayload, TwoPurposesAtOnceAreRefused) {
  auto p = api::parse_job_payload(std::string_view(
      R"({"remeasure":true,"best_request":{"gpu_model":"G","op":"gemm","dtype":"bf16","shape":"m=1"}})"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("more than one"), std::string::npos) << p.error().message;
}

// A build split over several GPUs: each shard names the families it runs, the last one
// those it leaves to the others.
TEST(JobPayload, AShardsFamiliesAreTypedAndItsIndexBelowItsCount) {
  const json::object in =
      json::parse(R"({"families":["gemm","attention"],"shard":{"index":0,"count":2},"bench":true})").as_object();
  auto p = api::parse_job_payload(in);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->families, (std::vector<std::string>{"gemm", "attention"}));
  EXPECT_TRUE(p->families_except.empty());
  ASSERT_TRUE(p->shard);
  EXPECT_EQ(p->shard->index, 0);
  EXPECT_EQ(p->shard->count, 2);
  EXPECT_TRUE(p->extra.empty());
  EXPECT_EQ(api::to_json(*p), in);
  const json::object rest =
      json::parse(R"({"families_except":["gemm","attention"],"shard":{"index":1,"count":2}})").as_object();
  auto r = api::parse_job_payload(rest);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->families_except, (std::vector<std::string>{"gemm", "attention"}));
  EXPECT_EQ(api::to_json(*r), rest);
  for (const char* bad : {R"({"shard":{"index":2,"count":2}})", R"({"shard":{"index":0}})",
                          R"({"shard":{"index":-1,"count":2}})", R"({"families":"gemm"})"}) {
    auto b = api::parse_job_payload(std::string_view(bad));
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.error().message.find(std::string_view(bad).substr(2, 5)), std::string::npos)
        << bad << ": " << b.error().message;
  }
}
