// The coordinator's answers as the runner reads them (answers.h): each malformed answer
// of issue 14 is an Error naming what was wrong, never an exception.
#include "kport/runner/answers.h"

#include <gtest/gtest.h>

namespace kport::runner {
namespace {

const std::string k_sha(40, 'a');

std::string claim_with(const std::string& fields) {
  return R"({"job":{"id":7,"pipeline":3,"kind":"check","commit":")" + k_sha + R"(","target":"sm_90a","attempt":2)" +
         fields + "}}";
}

// The claim with one field replaced by `value` (JSON text), or removed when value is empty.
std::string claim_replacing(const std::string& key, const std::string& value) {
  boost::json::object job{{"id", 7},         {"pipeline", 3},      {"kind", "check"},
                          {"commit", k_sha}, {"target", "sm_90a"}, {"attempt", 2}};
  if (value.empty())
    job.erase(key);
  else
    job[key] = boost::json::parse(value);
  return boost::json::serialize(boost::json::object{{"job", job}});
}

void expect_malformed(const Result<std::optional<ClaimedJob>>& r, const std::string& says) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::unavailable);
  EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
}

TEST(RunnerAnswers, AGoodClaimReadsIntoTypedFields) {
  auto r = parse_claim(claim_with(R"(,"depends_on":5,"payload":{"bench":false})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  const auto& j = **r;
  EXPECT_EQ(j.id, 7);
  EXPECT_EQ(j.pipeline, 3);
  EXPECT_EQ(j.kind, "check");
  EXPECT_EQ(j.commit, k_sha);
  EXPECT_EQ(j.target, "sm_90a");
  EXPECT_EQ(j.attempt, 2);
  EXPECT_EQ(j.depends_on, std::optional<std::int64_t>(5));
  EXPECT_FALSE(j.payload.at("bench").as_bool());
}

TEST(RunnerAnswers, NoJobIsNotAnError) {
  for (const char* body : {R"({"job":null})", R"({})"}) {
    auto r = parse_claim(body);
    ASSERT_TRUE(r.ok()) << body;
    EXPECT_FALSE(r->has_value());
  }
}

TEST(RunnerAnswers, ClaimWhoseJobKindIsANumberIsAnErrorNamingTheField) {
  std::optional<Lease> lease;
  expect_malformed(parse_claim(claim_replacing("kind", "3"), &lease),
                   "claim answer: field 'job.kind' must be a string");
  // The id and attempt were readable: the runner can give the job back.
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->job, 7);
  EXPECT_EQ(lease->attempt, 2);
}

TEST(RunnerAnswers, ClaimWhoseIdIsAStringIsAnError) {
  std::optional<Lease> lease;
  expect_malformed(parse_claim(claim_replacing("id", R"("7")"), &lease), "field 'job.id' must be an integer");
  EXPECT_FALSE(lease.has_value());  // nothing to give back by
}

TEST(RunnerAnswers, ClaimWhoseAttemptIsFractionalIsAnError) {
  expect_malformed(parse_claim(claim_replacing("attempt", "1.5")), "field 'job.attempt' must be an integer");
  expect_malformed(parse_claim(claim_replacing("attempt", "1e30")), "job.attempt");
  expect_malformed(parse_claim(claim_replacing("attempt", "-1")), "job.attempt");
  // An integral double is the integer it holds.
  auto r = parse_claim(claim_replacing("attempt", "3.0"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)->attempt, 3);
}

TEST(RunnerAnswers, ClaimWithoutCommitIsAnError) {
  expect_malformed(parse_claim(claim_replacing("commit", "")), "field 'job.commit' is required (a string)");
  expect_malformed(parse_claim(claim_replacing("commit", R"("<img src=x>")")),
                   "field 'job.commit' must be a git commit id (7 to 64 hex digits)");
  expect_malformed(parse_claim(claim_replacing("target", R"("../../etc")")),
                   "field 'job.target' must be an nvcc target such as sm_90a");
  expect_malformed(parse_claim(claim_replacing("payload", "[1]")), "field 'job.payload' must be an object");
  expect_malformed(parse_claim(claim_replacing("depends_on", R"("5")")), "job.depends_on");
  expect_malformed(parse_claim(R"({"job":[1,2]})"), "field 'job' must be an object or null, not an array");
}

TEST(RunnerAnswers, HtmlBodySentWith200IsAnErrorThatQuotesIt) {
  const std::string html = "<html><body><h1>502 Bad Gateway</h1></body></html>";
  expect_malformed(parse_claim(html), "claim answer: not JSON");
  expect_malformed(parse_claim(html), "<html><body><h1>502 Bad Gateway");
  auto hb = parse_heartbeat(html);
  ASSERT_FALSE(hb.ok());
  EXPECT_NE(hb.error().message.find("heartbeat answer: not JSON"), std::string::npos) << hb.error().message;
  EXPECT_FALSE(parse_ack(html, "complete").ok());
  EXPECT_FALSE(parse_build_artifacts(html).ok());
  EXPECT_FALSE(parse_registration(html).ok());
  expect_malformed(parse_claim(""), "empty body");
  expect_malformed(parse_claim("[]"), "expected a JSON object, got an array");
  // Control bytes are escaped in the quote, so a log line stays one line.
  expect_malformed(parse_claim(std::string("\x01\n<x", 4)), "\\x01\\x0a<x");
}

TEST(RunnerAnswers, RegisterAnswerWithNumericTokenIsAnError) {
  auto r = parse_registration(R"({"token":12345,"runner":{"id":1}})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::unavailable);
  EXPECT_NE(r.error().message.find("register answer: field 'token' must be a string"), std::string::npos)
      << r.error().message;
  EXPECT_FALSE(parse_registration(R"({"token":""})").ok());
  EXPECT_FALSE(parse_registration(R"({"token":"t","runner":{"id":"one"}})").ok());
  EXPECT_FALSE(parse_registration(R"({"token":"t","heartbeat_interval_ms":0})").ok());

  auto good = parse_registration(R"({"token":"kpr_abc","runner":{"id":4},"heartbeat_interval_ms":2500})");
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->token, "kpr_abc");
  EXPECT_EQ(good->runner_id, 4);
  EXPECT_EQ(good->heartbeat_interval, std::chrono::milliseconds(2500));
}

TEST(RunnerAnswers, HeartbeatAnswerReadsCancel) {
  auto yes = parse_heartbeat(R"({"cancel_requested":true,"lease_expires_ms":1})");
  ASSERT_TRUE(yes.ok());
  EXPECT_TRUE(yes->cancel_requested);
  auto plain = parse_heartbeat(R"({})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->cancel_requested);
  auto wrong = parse_heartbeat(R"({"cancel_requested":"yes"})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, Errc::unavailable);
  EXPECT_NE(wrong.error().message.find("heartbeat answer: field 'cancel_requested' must be true or false"),
            std::string::npos)
      << wrong.error().message;
}

TEST(RunnerAnswers, AcknowledgementsAreEmptyOrAnObject) {
  EXPECT_TRUE(parse_ack("", "complete").ok());
  EXPECT_TRUE(parse_ack(R"({"ok":true})", "complete").ok());
  EXPECT_FALSE(parse_ack("OK", "complete").ok());
  EXPECT_FALSE(parse_ack("42", "complete").ok());
}

TEST(RunnerAnswers, BuildsLookupNamesArtifactsBySha256Only) {
  const std::string sha(64, 'c');
  auto r = parse_build_artifacts(R"({"items":[{"artifact":null},{"status":"ok"},{"artifact":")" + sha + R"("}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front(), sha);
  auto traversal = parse_build_artifacts(R"({"items":[{"artifact":"../../../bin/sh"}]})");
  ASSERT_FALSE(traversal.ok());
  EXPECT_NE(traversal.error().message.find("items[0].artifact must be a sha256"), std::string::npos)
      << traversal.error().message;
  EXPECT_FALSE(parse_build_artifacts(R"({"items":[{"artifact":5}]})").ok());
  EXPECT_FALSE(parse_build_artifacts(R"({"items":{}})").ok());
  EXPECT_FALSE(parse_build_artifacts(R"({"items":[7]})").ok());
}

TEST(RunnerAnswers, RepositoriesLookupFindsTheUrl) {
  auto r = parse_repository_url(
      R"({"items":[{"name":"other","url":"file:///o.git"},{"name":"lib","url":"file:///r.git"}]})", "lib");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->value_or(""), "file:///r.git");
  // Every entry is a kport::api::RepositoryInfo: one that does not read fails the lookup, named.
  auto odd = parse_repository_url(R"({"items":[{"name":7},{"name":"lib","url":"file:///r.git"}]})", "lib");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().message, "repositories answer: field 'items[0].name' must be a string");
  auto missing = parse_repository_url(R"([{"name":"other","url":"x"}])", "lib");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_FALSE(parse_repository_url(R"({"items":[{"name":"lib","url":3}]})", "lib").ok());
  EXPECT_FALSE(parse_repository_url(R"("text")", "lib").ok());
}

}  // namespace
}  // namespace kport::runner
