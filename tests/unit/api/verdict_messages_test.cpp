// Verdicts, the series' noise, flaky cases and revalidations: each answer's one mapping
// between the coordinator that writes it and the client that reads it, and a field that
// does not read named in the error.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "kport/api/revalidation.h"
#include "kport/api/verdict.h"

namespace json = boost::json;
using namespace kport;

namespace {

template <typename T>
void expect_refused(const Result<T>& r, const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(r.error().message, message);
}

api::SeriesNoise calibrated_series() {
  api::SeriesNoise m;
  m.gpu_model = "NVIDIA H200";
  m.driver = "570.86";
  m.instance = "gemm.wgmma_tma.128x256";
  m.dtype = "bf16";
  m.shape = "4096x4096x4096";
  m.calibrated = true;
  m.figures = 12;
  m.codes = 3;
  m.degrees = 9;
  m.sigma = 0.004;
  m.mde = 0.015;
  m.summary = "calibrated from 9 degrees of freedom";
  return m;
}

api::CommitVerdict failing_verdict() {
  api::CommitVerdict v;
  v.commit = "0123456789abcdef0123456789abcdef01234567";
  v.baseline = "fedcba9876543210fedcba9876543210fedcba98";
  v.status = api::VerdictStatus::fail;
  api::VerdictReason r;
  r.kind = "perf_regression";
  r.variant = "gemm.wgmma_tma";
  r.target = "sm_90a";
  r.gpu_model = "NVIDIA H200";
  r.message = "gemm.wgmma_tma bf16 4096^3: 12.5 us -> 14.1 us (+12.8 %)";
  r.figures = {{"before_us", 12.5}, {"after_us", 14.1}, {"result", std::int64_t{42}}, {"dtype", std::string("bf16")}};
  v.reasons.push_back(r);
  v.waiting = {"job 7 (check sm_90a) is running"};
  v.notes = {"gemm.naive: unstable figure not judged"};
  api::UnjudgedSeries u;
  u.series = calibrated_series();
  u.series.calibrated = false;
  u.series.sigma.reset();
  u.series.mde.reset();
  u.series.needed = 3;
  u.target = "sm_90a";
  u.change = 0.031;
  u.result = 42;
  u.baseline_result = 17;
  v.insufficient_data.push_back(u);
  v.flaky.push_back({"sm_90a", "NVIDIA H200", "softmax.online", "fp16", "8192x8192", "failed", 43, std::int64_t{-5},
                     "2026-12-01T10:00:00Z", 20, 2, 5});
  v.infrastructure.push_back({"sm_90a", "NVIDIA H200", 9, std::nullopt, "lease expired"});
  v.compared_builds = 14;
  v.compared_results = 280;
  v.rule = "fail on a new failure or a slowdown beyond the series' band";
  return v;
}

TEST(CommitVerdict, RoundTripsEveryFieldInTheAnswersOrder) {
  const api::CommitVerdict v = failing_verdict();
  const json::object wire = api::to_json(v);
  std::vector<std::string> keys;
  for (const auto& kv : wire) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"commit", "baseline", "status", "reasons", "waiting", "notes",
                                            "insufficient_data", "flaky", "infrastructure", "compared", "rule"}));
  EXPECT_EQ(wire.at("status").as_string(), "fail");
  EXPECT_EQ(json::serialize(wire.at("compared")), R"({"builds":14,"results":280})");
  EXPECT_TRUE(wire.at("insufficient_data").as_array()[0].as_object().at("sigma").is_null());

  auto back = api::parse_commit_verdict(json::parse(json::serialize(wire)).as_object());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->commit, v.commit);
  EXPECT_EQ(back->baseline, v.baseline);
  EXPECT_EQ(back->status, api::VerdictStatus::fail);
  ASSERT_EQ(back->reasons.size(), 1u);
  EXPECT_EQ(back->reasons[0].figures, v.reasons[0].figures);
  EXPECT_EQ(back->waiting, v.waiting);
  EXPECT_EQ(back->notes, v.notes);
  ASSERT_EQ(back->insufficient_data.size(), 1u);
  EXPECT_EQ(back->insufficient_data[0].series.instance, "gemm.wgmma_tma.128x256");
  EXPECT_FALSE(back->insufficient_data[0].series.calibrated);
  EXPECT_EQ(back->insufficient_data[0].series.needed, 3);
  EXPECT_DOUBLE_EQ(back->insufficient_data[0].change, 0.031);
  EXPECT_EQ(back->insufficient_data[0].baseline_result, 17);
  ASSERT_EQ(back->flaky.size(), 1u);
  EXPECT_EQ(back->flaky[0].seed, -5);
  EXPECT_EQ(back->flaky[0].since, "2026-12-01T10:00:00Z");
  EXPECT_EQ(back->flaky[0].to_release, 5);
  ASSERT_EQ(back->infrastructure.size(), 1u);
  EXPECT_EQ(back->infrastructure[0].job, 9);
  EXPECT_FALSE(back->infrastructure[0].result.has_value());
  EXPECT_EQ(back->compared_builds, 14);
  EXPECT_EQ(back->compared_results, 280);
  EXPECT_EQ(back->rule, v.rule);
  // Written again, it is the same document.
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));
}

TEST(CommitVerdict, AVerdictWithoutBaselineReadsAsNone) {
  api::CommitVerdict v;
  v.commit = "0123456";
  v.status = api::VerdictStatus::pending;
  const json::object wire = api::to_json(v);
  EXPECT_TRUE(wire.at("baseline").is_null());
  auto back = api::parse_commit_verdict(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->baseline.has_value());
  EXPECT_EQ(back->status, api::VerdictStatus::pending);
}

TEST(CommitVerdict, StrictReadNamesTheField) {
  json::object wire = api::to_json(failing_verdict());
  json::object bad = wire;
  bad["status"] = "maybe";
  expect_refused(api::parse_commit_verdict(bad), "field 'status' must be pending, pass, fail or insufficient_data");
  bad = wire;
  bad["reasons"].as_array()[0].as_object()["figures"].as_object()["after_us"] = json::array{};
  expect_refused(api::parse_commit_verdict(bad), "field 'reasons[0].figures.after_us' must be a number or a string");
  bad = wire;
  bad["flaky"].as_array()[0].as_object()["runs"] = "twenty";
  expect_refused(api::parse_commit_verdict(bad), "field 'flaky[0].runs' must be an integer");
  bad = wire;
  bad["compared"].as_object()["results"] = -1;
  expect_refused(api::parse_commit_verdict(bad),
                 "field 'compared.results' must be an integer in 0..9223372036854775807, got -1");
  bad = wire;
  bad["insufficient_data"].as_array()[0] = 3;
  expect_refused(api::parse_commit_verdict(bad), "field 'insufficient_data[0]' must be an object");
  bad = wire;
  bad.erase("commit");
  expect_refused(api::parse_commit_verdict(bad), "field 'commit' is required (a string)");
}

TEST(SeriesList, RoundTripsAndNamesABadStatus) {
  api::SeriesList s;
  s.items.push_back(calibrated_series());
  s.rule = "a change must leave the series' band";
  const json::object wire = api::to_json(s);
  EXPECT_EQ(wire.at("items").as_array()[0].as_object().at("status").as_string(), "calibrated");
  api::Fields f(wire, "");
  const api::SeriesList back = api::read_series_list(f);
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(back.items.size(), 1u);
  EXPECT_TRUE(back.items[0].calibrated);
  EXPECT_EQ(back.items[0].sigma, 0.004);
  EXPECT_EQ(back.items[0].mde, 0.015);
  EXPECT_EQ(back.rule, s.rule);

  json::object bad = wire;
  bad["items"].as_array()[0].as_object()["status"] = "warm";
  api::Fields g(bad, "");
  api::read_series_list(g);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "field 'items[0].status' must be calibrated or insufficient_data");
}

TEST(FlakeList, RoundTripsAndNamesABadState) {
  api::FlakeList l;
  api::FlakeCase c;
  c.gpu_model = "NVIDIA H200";
  c.instance = "softmax.online";
  c.dtype = "fp16";
  c.shape = "8192x8192";
  c.state = "flaky";
  c.since = "2026-12-01T10:00:00Z";
  c.first_commit = "0123456789abcdef";
  c.runs = 20;
  c.failures = 2;
  c.clean_runs = 1;
  c.to_release = 4;
  c.failed.push_back({43, std::int64_t{7}, "0123456789abcdef", "failed"});
  l.items.push_back(c);
  l.release_after = 5;
  const json::object wire = api::to_json(l);
  api::Fields f(wire, "");
  const api::FlakeList back = api::read_flake_list(f);
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(back.items.size(), 1u);
  EXPECT_EQ(back.items[0].state, "flaky");
  EXPECT_EQ(back.items[0].since, c.since);
  ASSERT_EQ(back.items[0].failed.size(), 1u);
  EXPECT_EQ(back.items[0].failed[0].seed, 7);
  EXPECT_EQ(back.release_after, 5);
  EXPECT_EQ(json::serialize(api::to_json(back)), json::serialize(wire));

  json::object bad = wire;
  bad["items"].as_array()[0].as_object()["failed"].as_array()[0].as_object()["result"] = "x";
  api::Fields g(bad, "");
  api::read_flake_list(g);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "field 'items[0].failed[0].result' must be an integer");
}

TEST(Revalidation, RequestRoundTripsAndNamesAMissingDriver) {
  const api::RevalidationRequest rq{"NVIDIA H200", "570.86"};
  auto back = api::parse_revalidation_request(api::to_json(rq));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->gpu_model, "NVIDIA H200");
  EXPECT_EQ(back->driver, "570.86");
  expect_refused(api::parse_revalidation_request(json::object{{"gpu_model", "NVIDIA H200"}}),
                 "field 'driver' is required (a string)");
}

TEST(Revalidation, ListAndAnswersRoundTrip) {
  api::Revalidation rv;
  rv.gpu_model = "NVIDIA H200";
  rv.driver = "575.10";
  rv.arch = "9.0";
  rv.previous_driver = "570.86";
  rv.pipeline = 12;
  rv.compared_results = 40;
  rv.compared_previous_results = 38;
  rv.status = "fail";
  api::VerdictReason r;
  r.kind = "perf_regression";
  r.message = "slower on the new driver";
  r.figures = {{"ratio", 1.2}};
  rv.reasons.push_back(r);
  const json::object wire = api::to_json(rv);
  std::vector<std::string> keys;
  for (const auto& kv : wire) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"gpu_model", "driver", "arch", "previous_driver", "pipeline", "compared",
                                            "status", "reasons"}));

  auto list = api::parse_revalidation_list(api::to_json(api::RevalidationList{{rv}}));
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].previous_driver, "570.86");
  EXPECT_EQ(list->items[0].compared_previous_results, 38);
  EXPECT_EQ(json::serialize(api::to_json(list->items[0])), json::serialize(wire));

  // A first-seen GPU model: no previous driver, nothing compared.
  api::Revalidation first;
  first.gpu_model = "NVIDIA B200";
  first.driver = "575.10";
  first.status = "nothing_to_check";
  const json::object bare = api::to_json(first);
  EXPECT_FALSE(bare.contains("compared"));
  EXPECT_TRUE(bare.at("previous_driver").is_null());

  api::RevalidationAnswer opened{true, rv, 3};
  auto a = api::parse_revalidation_answer(api::to_json(opened));
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_TRUE(a->opened);
  EXPECT_EQ(a->jobs, 3);
  EXPECT_EQ(a->revalidation.pipeline, 12);

  api::RevalidationAnswer again;
  again.revalidation.gpu_model = "NVIDIA H200";
  again.revalidation.driver = "575.10";
  EXPECT_EQ(json::serialize(api::to_json(again)), R"({"opened":false,"gpu_model":"NVIDIA H200","driver":"575.10"})");
  auto b = api::parse_revalidation_answer(api::to_json(again));
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_FALSE(b->opened);
  EXPECT_EQ(b->revalidation.driver, "575.10");
}

TEST(Revalidation, StrictReadNamesTheField) {
  api::Revalidation rv;
  rv.gpu_model = "NVIDIA H200";
  rv.driver = "575.10";
  rv.status = "pass";
  json::object bad = api::to_json(api::RevalidationList{{rv}});
  bad["items"].as_array()[0].as_object()["status"] = "done";
  expect_refused(api::parse_revalidation_list(bad),
                 "field 'items[0].status' must be pending, pass, fail or nothing_to_check");
  bad = api::to_json(api::RevalidationList{{rv}});
  bad["items"].as_array()[0].as_object()["pipeline"] = "twelve";
  expect_refused(api::parse_revalidation_list(bad), "field 'items[0].pipeline' must be an integer");
  expect_refused(api::parse_revalidation_answer(json::object{{"opened", "yes"}}),
                 "field 'opened' must be true or false");
}

}  // namespace
