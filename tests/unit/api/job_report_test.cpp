// What a runner reports about the attempt it holds (a log chunk, the attempt's end, a
// batch of results or build records) and the kernel catalog it publishes after a build:
// each with one mapping between the runner that writes it and the coordinator that reads
// it, and a field that does not read named in the error.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "kport/api/job_report.h"

namespace json = boost::json;
using namespace kport;

namespace {

template <typename T>
void expect_refused(const Result<T>& r, const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(r.error().message, message);
}

TEST(JobLogAppend, RoundTripsTheAttemptAndTheText) {
  const json::object wire = api::to_json(api::JobLogAppend{2, "cmake: configured\n"});
  EXPECT_EQ(json::serialize(wire), R"({"attempt":2,"text":"cmake: configured\n"})");
  auto back = api::parse_job_log_append(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->attempt, 2);
  EXPECT_EQ(back->text, "cmake: configured\n");
}

TEST(JobLogAppend, AnAttemptOutOfRangeOrAMissingTextIsRefusedByName) {
  expect_refused(api::parse_job_log_append(json::object{{"attempt", 0}, {"text", "x"}}),
                 "field 'attempt' must be the attempt number the claim returned (>= 1)");
  expect_refused(api::parse_job_log_append(json::object{{"text", "x"}}), "field 'attempt' is required (an integer)");
  expect_refused(api::parse_job_log_append(json::object{{"attempt", 1}}), "field 'text' is required (a string)");
  expect_refused(api::parse_job_log_append(json::object{{"attempt", 1}, {"text", json::array{"x"}}}),
                 "field 'text' must be a string");
}

TEST(JobLog, RoundTripsTheChunksInOrderWithTheirAttempts) {
  const api::JobLog log{42, {{1, 1, "cloning\n"}, {2, 2, "cmake: configured\n"}}};
  const json::object wire = api::to_json(log);
  EXPECT_EQ(json::serialize(wire), R"({"job":42,"chunks":[{"seq":1,"attempt":1,"text":"cloning\n"},)"
                                   R"({"seq":2,"attempt":2,"text":"cmake: configured\n"}]})");
  auto back = api::parse_job_log(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->job, 42);
  ASSERT_EQ(back->chunks.size(), 2u);
  EXPECT_EQ(back->chunks[1].seq, 2);
  EXPECT_EQ(back->chunks[1].attempt, 2);
  EXPECT_EQ(back->chunks[1].text, "cmake: configured\n");
  EXPECT_TRUE(api::parse_job_log(json::object{{"job", 42}, {"chunks", json::array{}}})->chunks.empty());
}

TEST(JobLog, AChunkThatDoesNotReadIsRefusedByItsIndex) {
  expect_refused(api::parse_job_log(json::object{
                     {"job", 42}, {"chunks", json::array{json::object{{"seq", 1}, {"attempt", 1}, {"text", 7}}}}}),
                 "field 'chunks[0].text' must be a string");
  expect_refused(
      api::parse_job_log(json::object{{"job", 42}, {"chunks", json::array{json::object{{"seq", 1}, {"text", ""}}}}}),
      "field 'chunks[0].attempt' is required (an integer)");
  expect_refused(api::parse_job_log(json::object{{"chunks", json::array{}}}), "field 'job' is required (an integer)");
}

TEST(JobCompletion, ASuccessIsTheAttemptAndItsStatusAFailureAddsReasonAndRetry) {
  const json::object ok = api::to_json(api::JobCompletion{1, true, {}, false});
  EXPECT_EQ(json::serialize(ok), R"({"attempt":1,"status":"succeeded"})");
  auto back = api::parse_job_completion(ok);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->succeeded);
  EXPECT_EQ(back->attempt, 1);

  const json::object failed = api::to_json(api::JobCompletion{3, false, "clone timed out", true});
  EXPECT_EQ(json::serialize(failed), R"({"attempt":3,"status":"failed","reason":"clone timed out","retry":true})");
  auto fb = api::parse_job_completion(failed);
  ASSERT_TRUE(fb.ok()) << fb.error().message;
  EXPECT_FALSE(fb->succeeded);
  EXPECT_EQ(fb->attempt, 3);
  EXPECT_EQ(fb->reason, "clone timed out");
  EXPECT_TRUE(fb->retry);

  // No status reads as succeeded; `retryable` is the newer name of `retry`.
  auto bare = api::parse_job_completion(json::object{{"attempt", 1}});
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->succeeded);
  auto newer = api::parse_job_completion(
      json::object{{"attempt", 1}, {"status", "failed"}, {"reason", "gpu fell off"}, {"retryable", true}});
  ASSERT_TRUE(newer.ok()) << newer.error().message;
  EXPECT_TRUE(newer->retry);
}

TEST(JobCompletion, AnUnknownStatusAFailureWithoutAReasonOrDisagreeingFlagsAreRefused) {
  expect_refused(api::parse_job_completion(json::object{{"attempt", 1}, {"status", "done"}}),
                 "field 'status' must be succeeded or failed");
  expect_refused(api::parse_job_completion(json::object{{"attempt", 1}, {"status", "failed"}}),
                 "a failed job needs a 'reason'");
  expect_refused(api::parse_job_completion(json::object{
                     {"attempt", 1}, {"status", "failed"}, {"reason", "r"}, {"retryable", true}, {"retry", false}}),
                 "fields 'retryable' and 'retry' disagree; send 'retryable' alone");
  expect_refused(api::parse_job_completion(json::object{{"attempt", 1}, {"retry", "yes"}}),
                 "field 'retry' must be true or false");
  expect_refused(api::parse_job_completion(json::object{{"attempt", 1001}}),
                 "field 'attempt' must be the attempt number the claim returned (>= 1)");
}

api::ResultUpload one_result() {
  api::ResultUpload r;
  r.family = "gemm";
  r.variant = "simt";
  r.instance = "gemm.simt.64x64";
  r.dtype = "bf16";
  r.shape = "m=64,n=64,k=64";
  r.status = api::CaseStatus::passed;
  r.median_us = 12.5;
  return r;
}

TEST(ResultBatch, RoundTripsTheAttemptAndEachResultAsItsOwnMappingWritesIt) {
  api::ResultBatch b{2, {one_result(), one_result()}};
  b.results[1].instance = "gemm.simt.128x128";
  const json::object wire = api::to_json(b);
  EXPECT_EQ(wire.at("attempt").as_int64(), 2);
  ASSERT_EQ(wire.at("results").as_array().size(), 2u);
  EXPECT_EQ(json::serialize(wire.at("results").as_array()[0]), json::serialize(api::to_json(one_result())));
  auto back = api::parse_result_batch(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->attempt, 2);
  ASSERT_EQ(back->results.size(), 2u);
  EXPECT_EQ(back->results[1].instance, "gemm.simt.128x128");
  EXPECT_EQ(back->results[0].median_us, 12.5);
}

TEST(ResultBatch, AnEmptyBatchOrAResultThatDoesNotReadIsRefusedByItsIndex) {
  expect_refused(api::parse_result_batch(json::object{{"attempt", 1}, {"results", json::array{}}}),
                 "field 'results' must be an array of 1..100000 records");
  expect_refused(api::parse_result_batch(json::object{{"attempt", 1}}),
                 "field 'results' must be an array of 1..100000 records");
  json::object bad = api::to_json(one_result());
  bad["median_us"] = "fast";
  expect_refused(
      api::parse_result_batch(json::object{{"attempt", 1}, {"results", json::array{api::to_json(one_result()), bad}}}),
      "field 'results[1].median_us' must be a number");
  expect_refused(api::parse_result_batch(json::object{{"attempt", 1}, {"results", json::array{1}}}),
                 "field 'results[0]' must be an object");
}

TEST(BuildRecordBatch, RoundTripsTheAttemptAndEachRecord) {
  api::BuildRecordUpload r;
  r.family = "gemm";
  r.variant = "wgmma_tma";
  r.target = "sm_90a";
  r.status = api::BuildOutcome::ok;
  r.registers = 168;
  const json::object wire = api::to_json(api::BuildRecordBatch{1, {r}});
  EXPECT_EQ(json::serialize(wire), R"({"attempt":1,"records":[)" + json::serialize(api::to_json(r)) + "]}");
  auto back = api::parse_build_record_batch(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->attempt, 1);
  ASSERT_EQ(back->records.size(), 1u);
  EXPECT_EQ(back->records[0].registers, 168);
  EXPECT_EQ(back->records[0].status, api::BuildOutcome::ok);

  json::object bad = api::to_json(r);
  bad["status"] = "built";
  expect_refused(api::parse_build_record_batch(json::object{{"attempt", 1}, {"records", json::array{bad}}}),
                 "field 'records[0].status' must be one of ok, not_applicable, compile_error, timeout");
  expect_refused(api::parse_build_record_batch(json::object{{"attempt", "1"}, {"records", json::array{bad}}}),
                 "field 'attempt' must be an integer");
}

TEST(KernelCatalogUpload, RoundTripsInstancesAndVariantsLeavingAbsentPartsOut) {
  api::KernelCatalogUpload c;
  api::KernelInstanceUpload full{"gemm.wgmma_tma.128x128",
                                 "gemm",
                                 "wgmma_tma",
                                 json::array{"wgmma", "tma"},
                                 json::object{{"tile_m", 128}},
                                 std::vector<std::string>{"bf16", "fp16"}};
  api::KernelInstanceUpload bare{"gemm.simt.64x64", "gemm", "simt", std::nullopt, std::nullopt, std::nullopt};
  c.instances = {full, bare};
  c.variants = {{"gemm", "wgmma_tma", std::vector<std::string>{"wgmma", "tma"}}};
  const json::object wire = api::to_json(c);
  EXPECT_EQ(json::serialize(wire),
            R"({"instances":[{"name":"gemm.wgmma_tma.128x128","family":"gemm","variant":"wgmma_tma",)"
            R"("features":["wgmma","tma"],"dtypes":["bf16","fp16"],"config":{"tile_m":128}},)"
            R"({"name":"gemm.simt.64x64","family":"gemm","variant":"simt"}],)"
            R"("variants":[{"family":"gemm","variant":"wgmma_tma","features":["wgmma","tma"]}]})");
  auto back = api::parse_kernel_catalog_upload(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->instances.size(), 2u);
  EXPECT_EQ(back->instances[0].dtypes, (std::vector<std::string>{"bf16", "fp16"}));
  EXPECT_EQ(json::serialize(*back->instances[0].config), R"({"tile_m":128})");
  EXPECT_FALSE(back->instances[1].features);
  EXPECT_FALSE(back->instances[1].dtypes);
  ASSERT_EQ(back->variants.size(), 1u);
  EXPECT_EQ(back->variants[0].features, (std::vector<std::string>{"wgmma", "tma"}));
  EXPECT_EQ(json::serialize(api::to_json(*back)), json::serialize(wire));

  // Without variants the field is left out; instances are always written.
  EXPECT_EQ(json::serialize(api::to_json(api::KernelCatalogUpload{{bare}, {}, std::nullopt})),
            R"({"instances":[{"name":"gemm.simt.64x64","family":"gemm","variant":"simt"}]})");
  auto variants_only = api::parse_kernel_catalog_upload(json::object{{"variants", wire.at("variants")}});
  ASSERT_TRUE(variants_only.ok()) << variants_only.error().message;
  EXPECT_TRUE(variants_only->instances.empty());
}

TEST(KernelCatalogUpload, CarriesTheFamiliesTheLibraryDeclaresAndRefusesOnesThatDoNotRead) {
  api::Family layernorm;
  layernorm.name = "layernorm";
  layernorm.dims = {api::FamilyDim{"rows", std::nullopt, 1, 1 << 30}, api::FamilyDim{"groups", 1, 1, 8}};
  layernorm.dtypes = {"bf16", "e4m3"};
  layernorm.bytes = "2*rows*bytes_per_elem";
  layernorm.bound = "memory";
  layernorm.library = "not sent";  // a report names its library once, not per family
  api::KernelCatalogUpload c{{}, {}, api::LibraryFamilies{"norm-lib", 12, {layernorm}}};
  const json::object wire = api::to_json(c);
  EXPECT_EQ(json::serialize(wire),
            R"({"instances":[],"library":{"library":"norm-lib","job":12,"families":[{"name":"layernorm",)"
            R"("description":"","dims":[{"name":"rows","min":1,"max":1073741824},)"
            R"({"name":"groups","min":1,"max":8,"default":1}],"dtypes":["bf16","e4m3"],)"
            R"("bytes":"2*rows*bytes_per_elem","bound":"memory"}]}})");
  auto back = api::parse_kernel_catalog_upload(wire);
  ASSERT_TRUE(back.ok()) << back.error().message << " (a catalog of families alone is one)";
  ASSERT_TRUE(back->library);
  EXPECT_EQ(back->library->job, 12);
  ASSERT_EQ(back->library->families.size(), 1u);
  const api::Family& f = back->library->families[0];
  EXPECT_EQ(f.dims[1].default_value, 1);
  EXPECT_EQ(f.dims[1].max, 8);
  EXPECT_EQ(f.bytes, "2*rows*bytes_per_elem");
  EXPECT_FALSE(f.flops);
  EXPECT_EQ(f.library, "");

  json::object no_dims{{"name", "layernorm"}, {"dtypes", json::array{"bf16"}}};
  expect_refused(api::parse_kernel_catalog_upload(json::object{
                     {"library", json::object{{"library", "norm-lib"}, {"families", json::array{no_dims}}}}}),
                 "field 'library.families[0].dims' must list the family's dimensions");
  json::object bad_dim{{"name", "layernorm"}, {"dims", json::array{json::object{{"name", "rows"}, {"max", -1}}}}};
  auto refused = api::parse_kernel_catalog_upload(
      json::object{{"library", json::object{{"library", "norm-lib"}, {"families", json::array{bad_dim}}}}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("library.families[0].dims[0].max"), std::string::npos)
      << refused.error().message;
  expect_refused(api::parse_kernel_catalog_upload(json::object{{"library", json::object{{"families", json::array{}}}}}),
                 "field 'library.library' is required (a string)");
}

TEST(KernelCatalogUpload, CarriesAFamilysGeometryKeysAndRefusesOnesThatDoNotRead) {
  api::Family f;
  f.name = "layernorm";
  f.dims = {api::FamilyDim{"rows", std::nullopt, 1, 1 << 30}, api::FamilyDim{"cols", std::nullopt, 1, 1 << 30}};
  f.dtypes = {"bf16"};
  f.geometry = {api::FamilyGeometryDim{"rows", {"rows_per_cta"}, {}, {}, {}, {}},
                api::FamilyGeometryDim{"cols", {}, {"cols_per_step", "vec_cols"}, {}, {"max_cols_bytes"}, {}}};
  const json::object wire = api::to_json(f, false);
  EXPECT_EQ(json::serialize(wire.at("geometry")),
            R"({"rows":{"tile":"rows_per_cta"},"cols":{"step":["cols_per_step","vec_cols"],)"
            R"("max_bytes":"max_cols_bytes"}})");
  auto back = api::parse_with(wire, "", api::read_family);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->geometry.size(), 2u);
  EXPECT_EQ(back->geometry[0].dim, "rows");
  EXPECT_EQ(back->geometry[0].tile, std::vector<std::string>{"rows_per_cta"});
  EXPECT_EQ(back->geometry[1].step, (std::vector<std::string>{"cols_per_step", "vec_cols"}));
  EXPECT_EQ(back->geometry[1].max_bytes, std::vector<std::string>{"max_cols_bytes"});
  EXPECT_TRUE(back->geometry[1].align_bytes.empty());
  f.geometry.clear();
  EXPECT_FALSE(api::to_json(f, false).contains("geometry")) << "a family that declares none leaves it out";

  auto refusal = [&](json::value geometry) {
    json::object o = wire;
    o["geometry"] = std::move(geometry);
    auto r = api::parse_with(o, "library.families[0]", api::read_family);
    return r.ok() ? std::string("(read)") : r.error().message;
  };
  EXPECT_EQ(refusal(json::object{{"rows", json::object{{"tile", 4}}}}),
            "field 'library.families[0].geometry.rows.tile' must be a config key (a string of 64 bytes at most) or "
            "an array of 1 to 8 of them");
  EXPECT_EQ(refusal(json::object{{"rows", json::object{{"tile", json::array{"a", 1}}}}}),
            "field 'library.families[0].geometry.rows.tile' must be a config key (a string of 64 bytes at most) or "
            "an array of 1 to 8 of them");
  EXPECT_EQ(refusal(json::object{{"rows", json::object{{"tiles", "a"}}}}),
            "field 'library.families[0].geometry.rows.tiles' is not a role (a dimension takes tile, step, split, "
            "max_bytes, align_bytes, max, run_min_bytes, run_max_bytes, run_align_bytes, run_multiple)");
  EXPECT_EQ(refusal(json::object{{"rows", "rows_per_cta"}}),
            "field 'library.families[0].geometry.rows' must be an object of config keys");
  EXPECT_NE(refusal(json::array{"rows"}).find("library.families[0].geometry"), std::string::npos);
}

TEST(KernelCatalogUpload, AnEmptyCatalogOrAnElementThatDoesNotReadIsRefusedByItsIndex) {
  expect_refused(api::parse_kernel_catalog_upload(json::object{{"instances", json::array{}}}),
                 "give 'instances' (an array of 1..10000 instances), 'variants' (1..1000 variants) and/or "
                 "'library' (the families its manifest declares)");
  expect_refused(api::parse_kernel_catalog_upload(json::object{{"instances", "gemm"}}),
                 "field 'instances' must be an array");
  expect_refused(
      api::parse_kernel_catalog_upload(json::object{
          {"variants", json::array{json::object{{"family", "gemm"}, {"variant", "simt"}, {"features", "simt"}}}}}),
      "variants[0].features must be an array of feature names");
  expect_refused(api::parse_kernel_catalog_upload(json::object{{"instances", json::array{7}}}),
                 "instances[0] must be an object");
  expect_refused(api::parse_kernel_catalog_upload(json::object{
                     {"instances", json::array{json::object{{"name", "a"}, {"family", "gemm"}, {"variant", "simt"}},
                                               json::object{{"name", "b"}, {"family", "gemm"}}}}}),
                 "field 'instances[1].variant' is required (a string)");
  expect_refused(
      api::parse_kernel_catalog_upload(json::object{
          {"instances",
           json::array{json::object{{"name", "a"}, {"family", "gemm"}, {"variant", "simt"}, {"config", "tile=64"}}}}}),
      "field 'instances[0].config' must be a JSON object or array");
}

}  // namespace

namespace {

TEST(JobReportAnswers, EachRoundTripsInTheOrderTheCoordinatorWrites) {
  const json::object appended = api::to_json(api::JobLogAppended{42, 18});
  EXPECT_EQ(json::serialize(appended), R"({"job":42,"appended":18})");
  auto a = api::parse_with(appended, "", api::read_job_log_appended);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->appended, 18);

  const json::object requeued = api::to_json(api::JobCompleted{42, "queued", false, {}, 4000});
  EXPECT_EQ(json::serialize(requeued),
            R"({"job":42,"status":"queued","duplicate":false,"spawned":[],"retry_in_ms":4000})");
  const json::object done = api::to_json(api::JobCompleted{42, "succeeded", true, {43, 44}, std::nullopt});
  EXPECT_EQ(json::serialize(done), R"({"job":42,"status":"succeeded","duplicate":true,"spawned":[43,44]})");
  auto c = api::parse_with(done, "", api::read_job_completed);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->duplicate);
  EXPECT_EQ(c->spawned, (std::vector<std::int64_t>{43, 44}));
  EXPECT_FALSE(c->retry_in_ms);
  EXPECT_EQ(api::parse_with(requeued, "", api::read_job_completed)->retry_in_ms, 4000);

  const json::object stored = api::to_json(api::UploadStored{1, 1, {7, 8}});
  EXPECT_EQ(json::serialize(stored), R"({"stored":1,"duplicates":1,"ids":[7,8]})");
  auto s = api::parse_with(stored, "", api::read_upload_stored);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->ids, (std::vector<std::int64_t>{7, 8}));

  const json::object published = api::to_json(api::KernelCatalogStored{12, 3});
  EXPECT_EQ(json::serialize(published), R"({"upserted":12,"variants":3})");
  auto k = api::parse_with(published, "", api::read_kernel_catalog_stored);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->upserted, 12);
  EXPECT_EQ(k->variants, 3);
}

TEST(JobReportAnswers, AFieldThatDoesNotReadIsRefusedByName) {
  expect_refused(api::parse_with(json::object{{"stored", 1}, {"duplicates", 0}, {"ids", json::array{7, "8"}}}, "",
                                 api::read_upload_stored),
                 "field 'ids[1]' must be an id (>= 1)");
  expect_refused(api::parse_with(json::object{{"job", 42}, {"status", "queued"}, {"spawned", json::array{0}}}, "",
                                 api::read_job_completed),
                 "field 'spawned[0]' must be an id (>= 1)");
  expect_refused(api::parse_with(json::object{{"job", 42}}, "", api::read_job_completed),
                 "field 'status' is required (a string)");
  expect_refused(api::parse_with(json::object{{"upserted", 1}}, "", api::read_kernel_catalog_stored),
                 "field 'variants' is required (an integer)");
  expect_refused(api::parse_with(json::object{{"job", "42"}, {"appended", 1}}, "", api::read_job_log_appended),
                 "field 'job' must be an integer");
}

}  // namespace
