// Build records, pipeline triggers, runner registrations, runner lists and heartbeats:
// each message's one mapping between the service that writes it and the one that reads it.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "kport/api/build_record.h"
#include "kport/api/job.h"
#include "kport/api/pipeline.h"
#include "kport/api/runner_protocol.h"

namespace json = boost::json;
using namespace kport;

namespace {

template <typename T>
void expect_refused(const Result<T>& r, const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(r.error().message, message);
}

TEST(BuildRecordUpload, RoundTripsEveryFieldAndLeavesAbsentOptionalsOut) {
  api::BuildRecordUpload b;
  b.commit = "0123456789abcdef0123456789abcdef01234567";
  b.target = "sm_90a";
  b.family = "gemm";
  b.variant = "wgmma_tma";
  b.status = api::BuildOutcome::ok;
  b.message = "regs 168";
  b.registers = 168;
  b.spill_stores_bytes = 0;
  b.spill_loads_bytes = 0;
  b.shared_mem_bytes = 197632;
  b.stack_frame_bytes = 0;
  b.constant_mem_bytes = 552;
  b.instruction_audit = json::object{{"ptx", json::object{{"wgmma", 4}}}};
  b.artifact = std::string(64, 'e');
  const json::object wire = api::to_json(b);
  EXPECT_EQ(wire.at("status").as_string(), "ok");
  auto back = api::parse_build_record(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->commit, b.commit);
  EXPECT_EQ(back->status, api::BuildOutcome::ok);
  EXPECT_EQ(back->registers, 168);
  EXPECT_EQ(back->shared_mem_bytes, 197632);
  EXPECT_EQ(back->constant_mem_bytes, 552);
  EXPECT_EQ(json::serialize(*back->instruction_audit), R"({"ptx":{"wgmma":4}})");
  EXPECT_EQ(back->artifact, b.artifact);

  api::BuildRecordUpload failed;
  failed.family = "gemm";
  failed.variant = "tcgen05";
  failed.status = api::BuildOutcome::not_applicable;
  const json::object bare = api::to_json(failed);
  for (const char* k : {"commit", "target", "registers", "instruction_audit", "artifact"})
    EXPECT_FALSE(bare.contains(k)) << k;
  EXPECT_EQ(api::parse_build_record(bare)->status, api::BuildOutcome::not_applicable);
}

TEST(BuildRecordUpload, AWrongFieldIsRefusedByName) {
  auto base = [] { return json::object{{"family", "gemm"}, {"variant", "simt"}, {"status", "ok"}}; };
  auto bad_status = base();
  bad_status["status"] = "built";
  expect_refused(api::parse_build_record(bad_status, "records[2]"),
                 "field 'records[2].status' must be one of ok, not_applicable, compile_error, timeout");
  auto bad_regs = base();
  bad_regs["registers"] = -1;
  EXPECT_NE(api::parse_build_record(bad_regs, "records[0]").error().message.find("'records[0].registers'"),
            std::string::npos);
  auto bad_audit = base();
  bad_audit["instruction_audit"] = "clean";
  expect_refused(api::parse_build_record(bad_audit), "field 'instruction_audit' must be a JSON object or array");
  expect_refused(api::parse_build_record(json::object{{"variant", "simt"}, {"status", "ok"}}),
                 "field 'family' is required (a string)");
}

TEST(TriggerRequest, RoundTripsAndWritesOnlyWhatWasSaid) {
  api::TriggerRequest t;
  t.commit = "0123456789abcdef0123456789abcdef01234567";
  t.repo = "kernels";
  t.ref = "refs/heads/main";
  t.reason = api::PipelineReason::new_target;
  t.note = "new target sm_120f";
  t.targets = {"sm_120f"};
  t.payload = json::object{{"filter", "gemm"}};
  auto back = api::parse_trigger_request(api::to_json(t));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->commit, t.commit);
  EXPECT_EQ(back->repo, "kernels");
  EXPECT_EQ(back->ref, "refs/heads/main");
  EXPECT_EQ(back->reason, api::PipelineReason::new_target);
  EXPECT_EQ(back->note, t.note);
  EXPECT_EQ(back->targets, std::vector<std::string>{"sm_120f"});
  EXPECT_EQ(json::serialize(back->payload), R"({"filter":"gemm"})");

  api::TriggerRequest plain;
  plain.commit = "abcdef1";
  EXPECT_EQ(json::serialize(api::to_json(plain)), R"({"commit":"abcdef1","reason":"manual"})");
  EXPECT_EQ(api::parse_trigger_request(json::object{{"commit", "abcdef1"}})->reason, api::PipelineReason::manual);
}

TEST(TriggerRequest, AnUnknownReasonOrABadCommitIsRefusedByName) {
  expect_refused(api::parse_trigger_request(json::object{{"commit", "abcdef1"}, {"reason", "nightly"}}),
                 "field 'reason' must be push, new_target, new_driver, new_gpu or manual");
  EXPECT_NE(api::parse_trigger_request(json::object{{"commit", "main"}}).error().message.find("'commit'"),
            std::string::npos);
  EXPECT_NE(api::parse_trigger_request(json::object{{"commit", "abcdef1"}, {"targets", "sm_90a"}})
                .error()
                .message.find("'targets'"),
            std::string::npos);
}

TEST(RunnerRegistration, EachRoleSendsItsOwnCapabilities) {
  api::RunnerRegistration gpu;
  gpu.name = "h200-0";
  gpu.role = api::RunnerRole::gpu;
  gpu.capabilities.gpu_model = "NVIDIA H200";
  gpu.capabilities.gpu_uuid = "GPU-1";
  gpu.capabilities.arch = "9.0";
  gpu.capabilities.driver = "580.65";
  gpu.capabilities.extra = json::object{{"sm_count", 132}};
  const json::object wire = api::to_json(gpu);
  EXPECT_EQ(
      json::serialize(wire.at("capabilities")),
      R"({"gpu_model":"NVIDIA H200","gpu_uuid":"GPU-1","arch":"9.0","driver":"580.65","extra":{"sm_count":132}})");
  auto back = api::parse_runner_registration(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->role, api::RunnerRole::gpu);
  EXPECT_EQ(back->capabilities.arch, "9.0");
  EXPECT_EQ(json::serialize(back->capabilities.extra), R"({"sm_count":132})");

  api::RunnerRegistration build;
  build.name = "b0";
  build.capabilities.toolkit = "13.0";
  build.capabilities.targets = {"sm_90a", "sm_100a"};
  build.capabilities.cores = 16;
  EXPECT_EQ(
      json::serialize(api::to_json(build)),
      R"({"name":"b0","role":"build","capabilities":{"toolkit":"13.0","targets":["sm_90a","sm_100a"],"cores":16}})");
  auto b = api::parse_runner_registration(api::to_json(build));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->capabilities.targets.size(), 2u);
  EXPECT_EQ(b->capabilities.cores, 16);
}

TEST(RunnerRegistration, AWrongFieldIsRefusedByName) {
  expect_refused(api::parse_runner_registration(json::object{{"name", "x"}, {"role", "cpu"}}),
                 "field 'role' must be build or gpu");
  expect_refused(api::parse_runner_registration(json::object{{"name", "x"}, {"role", "gpu"}, {"capabilities", 3}}),
                 "field 'capabilities' must be an object");
  auto cores = api::parse_runner_registration(
      json::object{{"name", "x"}, {"role", "build"}, {"capabilities", json::object{{"cores", -2}}}});
  ASSERT_FALSE(cores.ok());
  EXPECT_NE(cores.error().message.find("'capabilities.cores'"), std::string::npos) << cores.error().message;
}

TEST(RunnerList, RoundTripsEachRunnerWithEveryFieldPresent) {
  api::RunnerInfo gpu;
  gpu.id = 2;
  gpu.name = "h200-a";
  gpu.role = api::RunnerRole::gpu;
  gpu.capabilities.gpu_model = "NVIDIA H200";
  gpu.capabilities.arch = "9.0";
  gpu.online = true;
  gpu.registered = "2026-12-01T08:00:00Z";
  gpu.current_job = 17;
  api::RunnerInfo build;
  build.id = 1;
  build.name = "builder";
  build.capabilities.toolkit = "12.8";
  build.capabilities.targets = {"sm_90a", "sm_100a"};
  const json::object wire = api::to_json(api::RunnerList{{gpu, build}});
  ASSERT_EQ(wire.at("items").as_array().size(), 2u);
  EXPECT_EQ(json::serialize(wire.at("items").as_array()[0]), json::serialize(api::to_json(gpu)));
  EXPECT_TRUE(wire.at("items").as_array()[1].as_object().at("deregistered").is_null());
  auto back = api::parse_runner_list(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->items.size(), 2u);
  EXPECT_EQ(back->items[0].role, api::RunnerRole::gpu);
  EXPECT_EQ(back->items[0].current_job, 17);
  EXPECT_EQ(back->items[1].capabilities.targets, (std::vector<std::string>{"sm_90a", "sm_100a"}));
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));

  json::object bad = wire;
  bad["items"].as_array()[1].as_object()["role"] = "cpu";
  expect_refused(api::parse_runner_list(bad), "field 'items[1].role' must be build or gpu");
  expect_refused(api::parse_runner_list(json::object{{"items", json::array{7}}}), "field 'items[0]' must be an object");
}

TEST(Deregistered, RoundTripsAndAMissingRunnerIsRefusedByName) {
  const json::object wire = api::to_json(api::Deregistered{3, true});
  EXPECT_EQ(json::serialize(wire), R"({"runner":3,"deregistered":true})");
  auto back = api::parse_with(wire, "", api::read_deregistered);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->runner, 3);
  EXPECT_TRUE(back->deregistered);
  expect_refused(api::parse_with(json::object{{"deregistered", true}}, "", api::read_deregistered),
                 "field 'runner' is required (an integer)");
}

TEST(Heartbeat, RequestAndAnswerRoundTrip) {
  EXPECT_EQ(json::serialize(api::to_json(api::HeartbeatRequest{12, 2})), R"({"job":12,"attempt":2})");
  EXPECT_EQ(json::serialize(api::to_json(api::HeartbeatRequest{})), "{}");
  json::object with_job{{"job", 12}};
  api::Fields f(with_job, "");
  api::read_heartbeat_request(f);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, "field 'attempt' is required with 'job'");

  const json::object answer = api::to_json(api::HeartbeatAnswer{1700000000000, true});
  api::Fields af(answer, "");
  const auto a = api::read_heartbeat_answer(af);
  ASSERT_TRUE(af.ok());
  EXPECT_EQ(a.lease_expires_ms, 1700000000000);
  EXPECT_TRUE(a.cancel_requested);
}

TEST(ClaimAnswer, AClaimedJobRoundTripsWithEveryFieldPresentAndNoJobIsNull) {
  api::ClaimAnswer c;
  api::JobInfo j;
  j.id = 7;
  j.pipeline = 3;
  j.kind = "check";
  j.status = "running";
  j.commit = "0123456789abcdef0123456789abcdef01234567";
  j.target = "sm_90a";
  j.arch = "9.0";
  j.depends_on = 5;
  j.attempt = 2;
  j.max_attempts = 3;
  j.runner = 4;
  j.payload = json::object{{"bench", false}};
  j.created = "2026-12-01T17:00:00.000Z";
  c.job = j;
  c.lease_expires_ms = 1700000000000;
  c.heartbeat_interval_ms = 10000;
  const json::object wire = api::to_json(c);
  const auto& job = wire.at("job").as_object();
  EXPECT_EQ(job.size(), 21u) << "every field, null when unset";
  EXPECT_TRUE(job.at("gpu_model").is_null());
  EXPECT_TRUE(job.at("driver").is_null());
  EXPECT_TRUE(job.at("finished").is_null());
  api::Fields f(wire, "");
  const api::ClaimAnswer back = api::read_claim_answer(f);
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_TRUE(back.job);
  EXPECT_EQ(back.job->id, 7);
  EXPECT_EQ(back.job->attempt, 2);
  EXPECT_EQ(back.job->depends_on, 5);
  EXPECT_EQ(back.job->arch, "9.0");
  EXPECT_FALSE(back.job->gpu_model);
  EXPECT_EQ(json::serialize(back.job->payload), R"({"bench":false})");
  EXPECT_EQ(back.heartbeat_interval_ms, 10000);

  api::ClaimAnswer none;
  none.retry_after_ms = 250;
  EXPECT_EQ(json::serialize(api::to_json(none)), R"({"job":null,"retry_after_ms":250})");
  json::object bad_target = wire;
  bad_target["job"].as_object()["target"] = "../etc";
  api::Fields bf(bad_target, "");
  api::read_claim_answer(bf);
  ASSERT_FALSE(bf.ok());
  EXPECT_EQ(bf.error().message, "field 'job.target' must be an nvcc target such as sm_90a");
}

}  // namespace
