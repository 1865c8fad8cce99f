// Measure requests: the request `kport best-request` writes, and the answers the
// coordinator writes and the CLI reads (a request, the answer to asking, the listing),
// each with one mapping in the order the wire always had, and a field that does not read
// named in the error.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "kport/api/best_request.h"

namespace json = boost::json;
using namespace kport;

namespace {

template <typename T>
void expect_refused(const Result<T>& r, const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(r.error().message, message);
}

std::vector<std::string> keys_of(const json::object& o) {
  std::vector<std::string> keys;
  for (const auto& kv : o) keys.emplace_back(kv.key());
  return keys;
}

const api::MeasureRequestInput k_key{"NVIDIA H200", "gemm", "bf16", "k=2048,m=2048,n=2048"};
const std::string k_url = "/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=k%3D2048%2Cm%3D2048%2Cn%3D2048";

api::MeasureRequestInfo measured_request() {
  api::MeasureRequestInfo r;
  r.key = k_key;
  r.id = 3;
  r.state = "measured";
  r.job = 17;
  r.job_status = "succeeded";
  r.pipeline = 5;
  r.target = "sm_90a";
  r.commit = "0123456789abcdef0123456789abcdef01234567";
  r.requests = 2;
  r.asked = 9;
  r.created = "2026-12-01T08:00:00Z";
  r.updated = "2026-12-01T08:05:00Z";
  r.measured = api::MeasuredBest{"gemm.mma_sync.128x128", {41, 42}};
  r.answer = k_url;
  return r;
}

TEST(MeasureRequestInput, RoundTripsTheFourFieldsInOrder) {
  const json::object wire = api::to_json(k_key);
  EXPECT_EQ(json::serialize(wire),
            R"({"gpu":"NVIDIA H200","op":"gemm","dtype":"bf16","shape":"k=2048,m=2048,n=2048"})");
  auto back = api::parse_measure_request_input(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->gpu, "NVIDIA H200");
  EXPECT_EQ(back->op, "gemm");
  EXPECT_EQ(back->dtype, "bf16");
  EXPECT_EQ(back->shape, "k=2048,m=2048,n=2048");
}

// The library to measure is optional: absent when not given, read back when it is.
TEST(MeasureRequestInput, TheLibraryIsWrittenOnlyWhenGivenAndReadBack) {
  api::MeasureRequestInput in = k_key;
  in.repo = "norm-a";
  const json::object wire = api::to_json(in);
  EXPECT_EQ(json::serialize(wire),
            R"({"gpu":"NVIDIA H200","op":"gemm","dtype":"bf16","shape":"k=2048,m=2048,n=2048","repo":"norm-a"})");
  auto back = api::parse_measure_request_input(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->repo, "norm-a");
  EXPECT_EQ(api::parse_measure_request_input(api::to_json(k_key))->repo, "");
  json::object bad = wire;
  bad["repo"] = 3;
  expect_refused(api::parse_measure_request_input(bad), "field 'repo' must be a string");
  bad["repo"] = std::string(129, 'r');
  expect_refused(api::parse_measure_request_input(bad), "field 'repo' is longer than 128 bytes");
}

TEST(MeasureRequestInput, AMissingOrMistypedFieldIsRefusedByName) {
  expect_refused(
      api::parse_measure_request_input(json::object{{"gpu", "NVIDIA H200"}, {"op", "gemm"}, {"dtype", "bf16"}}),
      "field 'shape' is required (a string)");
  expect_refused(api::parse_measure_request_input(
                     json::object{{"gpu", 7}, {"op", "gemm"}, {"dtype", "bf16"}, {"shape", "m=1,n=1,k=1"}}),
                 "field 'gpu' must be a string");
  expect_refused(api::parse_measure_request_input(json::object{
                     {"gpu", "NVIDIA H200"}, {"op", std::string(33, 'g')}, {"dtype", "bf16"}, {"shape", "m=1"}}),
                 "field 'op' is longer than 32 bytes");
}

TEST(MeasureRequestInfo, RoundTripsEveryFieldInTheAnswersOrder) {
  const api::MeasureRequestInfo r = measured_request();
  const json::object wire = api::to_json(r);
  EXPECT_EQ(keys_of(wire), (std::vector<std::string>{"gpu", "op", "dtype", "shape", "repo", "id", "state", "job",
                                                     "job_status", "pipeline", "target", "commit", "requests", "asked",
                                                     "created", "updated", "measured", "answer"}));
  EXPECT_EQ(wire.at("repo"), "") << "a request of no library says so";
  EXPECT_EQ(json::serialize(wire.at("measured")), R"({"best":"gemm.mma_sync.128x128","results":[41,42]})");
  auto back = api::parse_measure_request_info(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));
  EXPECT_EQ(back->id, 3);
  EXPECT_EQ(back->job, 17);
  EXPECT_EQ(back->asked, 9);
  ASSERT_TRUE(back->measured);
  EXPECT_EQ(back->measured->results, (std::vector<std::int64_t>{41, 42}));

  // A failed one says why, where the measured answer would be absent.
  api::MeasureRequestInfo failed = measured_request();
  failed.state = "failed";
  failed.reason = "the check job failed: no GPU runner of NVIDIA H200";
  failed.measured.reset();
  const json::object fw = api::to_json(failed);
  EXPECT_EQ(keys_of(fw)[7], "reason");
  EXPECT_FALSE(fw.contains("measured"));
  auto fb = api::parse_measure_request_info(fw);
  ASSERT_TRUE(fb.ok()) << fb.error().message;
  EXPECT_EQ(fb->reason, failed.reason);
  EXPECT_FALSE(fb->measured);

  // A library's request names it, and reads back with it.
  api::MeasureRequestInfo of_library = measured_request();
  of_library.key.repo = "norm-b";
  const json::object lw = api::to_json(of_library);
  EXPECT_EQ(keys_of(lw)[4], "repo");
  EXPECT_EQ(lw.at("repo"), "norm-b");
  auto lb = api::parse_measure_request_info(lw);
  ASSERT_TRUE(lb.ok()) << lb.error().message;
  EXPECT_EQ(lb->key.repo, "norm-b");
  EXPECT_EQ(json::serialize(api::to_json(*lb)), json::serialize(lw));
}

TEST(MeasureRequestInfo, AnUnknownStateOrAMistypedFieldIsRefusedByName) {
  json::object wire = api::to_json(measured_request());
  wire["state"] = "done";
  expect_refused(api::parse_measure_request_info(wire, "items[0]"),
                 "field 'items[0].state' must be queued, running, measured or failed");
  wire = api::to_json(measured_request());
  wire["job"] = "17";
  expect_refused(api::parse_measure_request_info(wire), "field 'job' must be an integer");
  wire = api::to_json(measured_request());
  wire.erase("requests");
  expect_refused(api::parse_measure_request_info(wire), "field 'requests' is required (an integer)");
  wire = api::to_json(measured_request());
  wire["measured"] = json::object{{"best", "gemm.simt"}, {"results", json::array{41, "42"}}};
  expect_refused(api::parse_measure_request_info(wire), "field 'measured.results[1]' must be a result id (>= 1)");
  wire["measured"] = json::object{{"best", "gemm.simt"}};
  expect_refused(api::parse_measure_request_info(wire),
                 "field 'measured.results' is required (an array of result ids)");
}

TEST(MeasureRequestAnswer, QueuedAndCoalescedAreTheRequestWithItsOutcomeAndCase) {
  api::MeasureRequestAnswer a;
  a.outcome = api::MeasureOutcome::queued;
  a.request = measured_request();
  a.request.state = "queued";
  a.request.job_status = "queued";
  a.request.measured.reset();
  a.queued_case = {"gemm", "bf16", "m=2048,n=2048,k=2048"};
  const json::object wire = api::to_json(a);
  std::vector<std::string> keys = keys_of(wire);
  ASSERT_GE(keys.size(), 2u);
  EXPECT_EQ(keys[keys.size() - 3], "answer");
  EXPECT_EQ(keys[keys.size() - 2], "outcome");
  EXPECT_EQ(keys.back(), "case");
  EXPECT_EQ(json::serialize(wire.at("case")), R"({"family":"gemm","dtype":"bf16","shape":"m=2048,n=2048,k=2048"})");
  auto back = api::parse_measure_request_answer(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->outcome, api::MeasureOutcome::queued);
  EXPECT_EQ(back->request.id, 3);
  EXPECT_EQ(back->request.state, "queued");
  EXPECT_EQ(back->queued_case.shape, "m=2048,n=2048,k=2048");
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));

  a.outcome = api::MeasureOutcome::coalesced;
  auto coalesced = api::parse_measure_request_answer(api::to_json(a));
  ASSERT_TRUE(coalesced.ok()) << coalesced.error().message;
  EXPECT_EQ(coalesced->outcome, api::MeasureOutcome::coalesced);
}

TEST(MeasureRequestAnswer, AlreadyMeasuredIsTheKeyAndItsAnswerWithANullJob) {
  api::MeasureRequestAnswer a;
  a.outcome = api::MeasureOutcome::already_measured;
  a.request.key = k_key;
  a.request.measured = api::MeasuredBest{"gemm.wgmma_tma.128x128", {7}};
  a.request.answer = k_url;
  const json::object wire = api::to_json(a);
  EXPECT_EQ(json::serialize(wire), R"({"gpu":"NVIDIA H200","op":"gemm","dtype":"bf16","shape":"k=2048,m=2048,n=2048",)"
                                   R"("repo":"","outcome":"already_measured","state":"measured","job":null,)"
                                   R"("measured":{"best":"gemm.wgmma_tma.128x128","results":[7]},"answer":")" +
                                       k_url + R"("})");
  auto back = api::parse_measure_request_answer(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->outcome, api::MeasureOutcome::already_measured);
  EXPECT_EQ(back->request.key.shape, "k=2048,m=2048,n=2048");
  ASSERT_TRUE(back->request.measured);
  EXPECT_EQ(back->request.measured->best, "gemm.wgmma_tma.128x128");
  EXPECT_EQ(back->request.answer, k_url);
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));
}

TEST(MeasureRequestAnswer, AnUnknownOutcomeOrAMissingPartIsRefusedByName) {
  api::MeasureRequestAnswer a;
  a.outcome = api::MeasureOutcome::queued;
  a.request = measured_request();
  json::object wire = api::to_json(a);
  wire["outcome"] = "ignored";
  expect_refused(api::parse_measure_request_answer(wire),
                 "field 'outcome' must be queued, coalesced or already_measured");
  wire = api::to_json(a);
  wire.erase("case");
  expect_refused(api::parse_measure_request_answer(wire), "field 'case' is required (an object)");
  wire = api::to_json(a);
  wire["case"] = json::object{{"family", "gemm"}, {"dtype", "bf16"}};
  expect_refused(api::parse_measure_request_answer(wire), "field 'case.shape' is required (a string)");
  a.outcome = api::MeasureOutcome::already_measured;
  wire = api::to_json(a);
  wire.erase("measured");
  expect_refused(api::parse_measure_request_answer(wire), "field 'measured' is required (an object)");
  expect_refused(api::parse_measure_request_answer(json::object{{"gpu", "NVIDIA H200"}}),
                 "field 'outcome' is required (a string)");
}

TEST(MeasureRequestPage, RoundTripsTheRequestsTheCursorAndTheAsks) {
  api::MeasureRequestPage p;
  p.items.push_back(measured_request());
  p.next_cursor = 3;
  p.unmeasured_asks.push_back(
      {{"NVIDIA H200", "softmax", "fp16", "cols=32000,rows=1"}, 12, "2026-11-30T10:00:00Z", "2026-12-01T09:00:00Z"});
  const json::object wire = api::to_json(p);
  EXPECT_EQ(keys_of(wire), (std::vector<std::string>{"items", "next_cursor", "unmeasured_asks"}));
  EXPECT_EQ(json::serialize(wire.at("unmeasured_asks")),
            R"([{"gpu":"NVIDIA H200","op":"softmax","dtype":"fp16","shape":"cols=32000,rows=1","asks":12,)"
            R"("first_asked":"2026-11-30T10:00:00Z","last_asked":"2026-12-01T09:00:00Z"}])");
  auto back = api::parse_measure_request_page(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->items.size(), 1u);
  EXPECT_EQ(back->items[0].id, 3);
  EXPECT_EQ(back->next_cursor, 3);
  ASSERT_EQ(back->unmeasured_asks.size(), 1u);
  EXPECT_EQ(back->unmeasured_asks[0].asks, 12);
  EXPECT_EQ(back->unmeasured_asks[0].key.op, "softmax");
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));

  const json::object last = api::to_json(api::MeasureRequestPage{});
  EXPECT_EQ(json::serialize(last), R"({"items":[],"next_cursor":null,"unmeasured_asks":[]})");
  EXPECT_FALSE(api::parse_measure_request_page(last)->next_cursor);
}

TEST(MeasureRequestPage, AnAskThatDoesNotReadIsRefusedByItsIndex) {
  json::object wire = api::to_json(api::MeasureRequestPage{});
  wire["unmeasured_asks"] = json::array{
      json::object{{"gpu", "g"}, {"op", "gemm"}, {"dtype", "bf16"}, {"shape", "m=1,n=1,k=1"}, {"asks", 1.5}}};
  expect_refused(api::parse_measure_request_page(wire), "field 'unmeasured_asks[0].asks' must be an integer");
  wire["unmeasured_asks"] = json::array{"NVIDIA H200"};
  expect_refused(api::parse_measure_request_page(wire), "field 'unmeasured_asks[0]' must be an object");
}

}  // namespace
