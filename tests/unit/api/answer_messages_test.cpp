// Targets and bring-ups, pipelines, stored build records, repositories, commits and GPU
// models: each answer's one mapping between the coordinator and the client that reads it,
// and a field that does not read named in the error.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "kport/api/bringup.h"
#include "kport/api/build_record.h"
#include "kport/api/pipeline.h"
#include "kport/api/repository.h"

namespace json = boost::json;
using namespace kport;

namespace {

template <typename T>
void expect_refused(const Result<T>& r, const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(r.error().message, message);
}

const std::string k_sha = "0123456789abcdef0123456789abcdef01234567";

api::BringupAnswer sm100a_bringup() {
  api::BringupAnswer b;
  b.target = {"sm_100a", "10.0", json::object{{"tcgen05", true}}, "12.8", "2026-11-30T08:00:00Z", true};
  b.commit = k_sha;
  b.progress = {4, 3, 2, 2, 1, 1, 1};
  b.families.push_back({"gemm", {3, 2, 2, 2, 1, 1, 1}});
  b.families.push_back({"softmax", {1, 1, 0, 0, 0, 0, 0}});
  api::VariantStage v;
  v.family = "gemm";
  v.variant = "tcgen05";
  v.stage = "selected_best";
  v.built = v.resources_clean = v.numerics_passed = v.measured = v.selected_best = true;
  v.reason = "fastest on NVIDIA B200";
  v.build_status = "ok";
  v.commit = k_sha;
  v.results_passed = 24;
  b.variants.push_back(v);
  api::VariantStage pending;
  pending.family = "softmax";
  pending.variant = "online";
  pending.stage = "pending";
  pending.reason = "not built at this commit";
  b.variants.push_back(pending);
  return b;
}

TEST(BringupAnswer, RoundTripsEveryFieldInTheAnswersOrder) {
  api::BringupAnswer b = sm100a_bringup();
  b.repo = "kernels";
  b.repositories = {"kernels", "norm-lib"};
  const json::object wire = api::to_json(b);
  std::vector<std::string> keys;
  for (const auto& kv : wire) keys.emplace_back(kv.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"target", "commit", "repo", "repositories", "progress", "families", "variants"}));
  EXPECT_EQ(json::serialize(wire.at("families").as_array()[1]),
            R"({"variants":1,"applicable":1,"builds":0,"resources_clean":0,"numerics_passed":0,"measured":0,)"
            R"("selected_best":0,"family":"softmax"})");
  const auto& pending = wire.at("variants").as_array()[1].as_object();
  EXPECT_TRUE(pending.at("build_status").is_null());
  EXPECT_TRUE(pending.at("commit").is_null());

  auto back = api::parse_bringup_answer(json::parse(json::serialize(wire)).as_object());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->target.name, "sm_100a");
  EXPECT_EQ(back->target.arch, "10.0");
  EXPECT_TRUE(back->target.is_new);
  EXPECT_EQ(back->commit, k_sha);
  EXPECT_EQ(back->repo, "kernels");
  EXPECT_EQ(back->repositories, (std::vector<std::string>{"kernels", "norm-lib"}));
  EXPECT_EQ(back->progress.applicable, 3);
  EXPECT_EQ(back->progress.selected_best, 1);
  ASSERT_EQ(back->families.size(), 2u);
  EXPECT_EQ(back->families[1].family, "softmax");
  ASSERT_EQ(back->variants.size(), 2u);
  EXPECT_TRUE(back->variants[0].selected_best);
  EXPECT_EQ(back->variants[0].results_passed, 24);
  EXPECT_EQ(back->variants[1].stage, "pending");
  EXPECT_FALSE(back->variants[1].build_status.has_value());
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));
}

TEST(BringupAnswer, BeforeTheFirstBuildHasNoCommit) {
  api::BringupAnswer b;
  b.target.name = "sm_120a";
  const json::object wire = api::to_json(b);
  EXPECT_TRUE(wire.at("commit").is_null());
  auto back = api::parse_bringup_answer(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->commit.has_value());
  EXPECT_TRUE(back->variants.empty());
}

TEST(BringupAnswer, StrictReadNamesTheField) {
  const json::object wire = api::to_json(sm100a_bringup());
  json::object bad = wire;
  bad["variants"].as_array()[1].as_object()["stage"] = "half_done";
  expect_refused(api::parse_bringup_answer(bad),
                 "field 'variants[1].stage' must be one of not_applicable, pending, build_failed, builds, "
                 "resources_clean, numerics_failed, numerics_passed, measured, selected_best");
  bad = wire;
  bad["progress"].as_object()["builds"] = -2;
  expect_refused(api::parse_bringup_answer(bad),
                 "field 'progress.builds' must be an integer in 0..9223372036854775807, got -2");
  bad = wire;
  bad["variants"].as_array()[0].as_object()["built"] = "yes";
  expect_refused(api::parse_bringup_answer(bad), "field 'variants[0].built' must be true or false");
  bad = wire;
  bad["target"].as_object()["name"] = "../etc";
  expect_refused(api::parse_bringup_answer(bad), "field 'target.name' must be an nvcc target such as sm_90a");
  bad = wire;
  bad.erase("target");
  expect_refused(api::parse_bringup_answer(bad), "field 'target' is required (an object)");
}

TEST(TargetList, RoundTripsAndNamesABadName) {
  const api::TargetInfo t{"sm_90a", "9.0", json::object{{"wgmma", true}}, "12.4", std::nullopt, false};
  auto list = api::parse_target_list(json::object{{"items", json::array{api::to_json(t)}}});
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "sm_90a");
  EXPECT_EQ(json::serialize((*list)[0].features), R"({"wgmma":true})");
  EXPECT_FALSE((*list)[0].first_seen.has_value());
  expect_refused(api::parse_target_list(json::object{{"items", json::array{json::object{{"name", 90}}}}}),
                 "field 'items[0].name' must be a string");
}

TEST(TargetInput, RoundTripsAndNamesTheField) {
  const api::TargetInput t{
      "10.0", json::object{{"tcgen05", true}, {"max_dynamic_smem_per_block", 232448}}, "12.8", {"10.0", "10.3"}};
  const json::object wire = api::to_json(t);
  EXPECT_EQ(json::serialize(wire),
            R"({"arch":"10.0","features":{"tcgen05":true,"max_dynamic_smem_per_block":232448},"toolkit":"12.8",)"
            R"("check_arches":["10.0","10.3"]})");
  auto back = api::parse_target_input(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->arch, "10.0");
  EXPECT_EQ(json::serialize(back->features), json::serialize(t.features));
  EXPECT_EQ(back->check_arches, t.check_arches);
  EXPECT_FALSE(api::to_json(api::TargetInput{"9.0", json::object{}, "12.4", {}}).contains("check_arches"));
  expect_refused(api::parse_target_input(json::object{{"features", json::object{}}}),
                 "field 'arch' is required (a string)");
  expect_refused(api::parse_target_input(json::object{{"arch", "9.0"}, {"features", "wgmma"}}),
                 "field 'features' must be a JSON object or array");
}

api::PipelineInfo push_pipeline() {
  api::PipelineInfo p;
  p.id = 7;
  p.reason = api::PipelineReason::push;
  p.repo = "kernels";
  p.ref = "refs/heads/main";
  p.commit = k_sha;
  p.note = "push to main";
  p.created = "2026-12-01T12:00:00Z";
  p.status = "running";
  p.jobs_total = 3;
  p.jobs_done = 1;
  return p;
}

TEST(PipelineAnswer, RoundTripsWithItsJobs) {
  api::PipelineAnswer a{push_pipeline(), {}};
  api::JobInfo j;
  j.id = 21;
  j.pipeline = 7;
  j.kind = "build";
  j.status = "running";
  j.commit = k_sha;
  j.target = "sm_90a";
  j.attempt = 1;
  a.jobs.push_back(j);
  const json::object wire = api::to_json(a);
  std::vector<std::string> keys;
  for (const auto& kv : wire) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"id", "reason", "repo", "ref", "commit", "note", "created", "status",
                                            "jobs_total", "jobs_done", "jobs"}));
  auto back = api::parse_pipeline_answer(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->pipeline.id, 7);
  EXPECT_EQ(back->pipeline.reason, api::PipelineReason::push);
  EXPECT_EQ(back->pipeline.created, "2026-12-01T12:00:00Z");
  EXPECT_EQ(back->pipeline.jobs_done, 1);
  ASSERT_EQ(back->jobs.size(), 1u);
  EXPECT_EQ(back->jobs[0].id, 21);
  EXPECT_EQ(back->jobs[0].target, "sm_90a");
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));
}

TEST(PipelinePage, RoundTripsAndNamesTheField) {
  api::PipelinePage page{{push_pipeline()}, std::int64_t{6}};
  const json::object wire = api::to_json(page);
  auto back = api::parse_pipeline_page(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->items.size(), 1u);
  EXPECT_EQ(back->items[0].commit, k_sha);
  EXPECT_EQ(back->next_cursor, 6);
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));

  json::object bad = wire;
  bad["items"].as_array()[0].as_object()["commit"] = "HEAD";
  expect_refused(api::parse_pipeline_page(bad),
                 "field 'items[0].commit' must be a commit sha (7..64 lowercase hex digits)");
  bad = wire;
  bad["items"].as_array()[0].as_object()["status"] = "paused";
  expect_refused(api::parse_pipeline_page(bad),
                 "field 'items[0].status' must be queued, running, succeeded, failed or cancelled");
  bad = wire;
  bad["items"].as_array()[0].as_object()["reason"] = "cron";
  expect_refused(api::parse_pipeline_page(bad),
                 "field 'items[0].reason' must be push, new_target, new_driver, new_gpu or manual");
  json::object with_job = api::to_json(api::PipelineAnswer{push_pipeline(), {}});
  with_job["jobs"] = json::array{json::object{{"id", 3}, {"attempt", "one"}}};
  expect_refused(api::parse_pipeline_answer(with_job), "field 'jobs[0].attempt' must be an integer");
}

TEST(BuildPage, RoundTripsAStoredRecord) {
  api::BuildRecordInfo b;
  b.id = 5;
  b.job = 21;
  b.attempt = 1;
  b.commit = k_sha;
  b.target = "sm_90a";
  b.family = "gemm";
  b.variant = "wgmma_tma";
  b.status = api::BuildOutcome::ok;
  b.message = "regs 168";
  b.registers = 168;
  b.spill_stores_bytes = 0;
  b.shared_mem_bytes = 197632;
  b.instruction_audit = json::object{{"sass", json::object{{"audited", true}}}};
  b.artifact = std::string(64, 'a');
  b.created = "2026-12-01T12:01:00Z";
  const json::object wire = api::to_json(api::BuildPage{{b}, std::nullopt});
  const auto& item = wire.at("items").as_array()[0].as_object();
  EXPECT_TRUE(item.at("spill_loads_bytes").is_null());
  EXPECT_TRUE(wire.at("next_cursor").is_null());
  auto back = api::parse_build_page(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->items.size(), 1u);
  const auto& r = back->items[0];
  EXPECT_EQ(r.job, 21);
  EXPECT_EQ(r.status, api::BuildOutcome::ok);
  EXPECT_EQ(r.registers, 168);
  EXPECT_FALSE(r.spill_loads_bytes.has_value());
  EXPECT_EQ(r.artifact, b.artifact);
  EXPECT_EQ(json::serialize(r.instruction_audit), R"({"sass":{"audited":true}})");
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));
}

TEST(BuildPage, StrictReadNamesTheField) {
  expect_refused(api::parse_build_page(json::object{}), "field 'items' is required (an array)");
  expect_refused(api::parse_build_page(json::object{{"items", json::array{json::object{{"registers", -1}}}}}),
                 "field 'items[0].registers' must be an integer in 0..65536, got -1");
  expect_refused(api::parse_build_page(json::object{{"items", json::array{json::object{{"status", "broken"}}}}}),
                 "field 'items[0].status' must be one of ok, not_applicable, compile_error, timeout");
  expect_refused(api::parse_build_page(json::object{{"items", json::array{json::object{{"artifact", 5}}}}}),
                 "field 'items[0].artifact' must be a string");
}

TEST(RepositoryList, RoundTripsAndNamesTheField) {
  const api::RepositoryInfo r{1, "kernels", "file:///srv/kernels.git", "2026-11-30T08:00:00Z"};
  const json::object wire{{"items", json::array{api::to_json(r)}}};
  auto back = api::parse_repository_list(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].name, "kernels");
  EXPECT_EQ((*back)[0].url, "file:///srv/kernels.git");
  EXPECT_EQ((*back)[0].created, r.created);
  expect_refused(api::parse_repository_list(json::object{{"items", json::array{json::object{{"name", "kernels"}}}}}),
                 "field 'items[0].url' is required (a string)");
  expect_refused(api::parse_repository_list(json::object{}), "field 'items' is required (an array)");
}

TEST(CommitInput, RoundTripsAndLeavesAnAbsentParentOut) {
  api::CommitInput c{k_sha, "kernels", std::string(40, 'f'), "Tune the wgmma tile", "A. Dev", 1764590400000};
  auto back = api::parse_commit_input(api::to_json(c));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->sha, k_sha);
  EXPECT_EQ(back->parent, c.parent);
  EXPECT_EQ(back->message, c.message);
  EXPECT_EQ(back->time_ms, c.time_ms);
  c.parent.reset();
  EXPECT_FALSE(api::to_json(c).contains("parent"));
  json::object bad = api::to_json(c);
  bad["parent"] = "main";
  expect_refused(api::parse_commit_input(bad), "field 'parent' must be a commit sha (7..64 lowercase hex digits)");
  bad = api::to_json(c);
  bad["time_ms"] = -3;
  expect_refused(api::parse_commit_input(bad), "field 'time_ms' must be an integer in 0..9223372036854775807, got -3");
}

TEST(GpuModelList, RoundTripsAndNamesTheField) {
  const api::GpuModelInfo g{"NVIDIA H200", "9.0", {"570.86", "575.10"}, "2026-11-30T08:00:00Z", std::nullopt};
  auto back = api::parse_gpu_model_list(json::object{{"items", json::array{api::to_json(g)}}});
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].drivers, g.drivers);
  EXPECT_FALSE((*back)[0].last_seen.has_value());
  json::object bad = api::to_json(g);
  bad["drivers"] = json::array{570};
  expect_refused(api::parse_gpu_model_list(json::object{{"items", json::array{bad}}}),
                 "field 'items[0].drivers' must be an array of strings");
}

}  // namespace
