// Loading snapshots: what a valid one says about itself, and every way a corrupt or
// stale one is refused with an error that names the problem, never a silent default.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fixtures.h"

namespace kport::dispatch::testing {
namespace json = boost::json;
namespace {

std::string sample() {
  return write({figure("gemm", "bf16", "gemm.wgmma_tma.a", "m=4096,n=4096,k=4096", 100.0),
                figure("gemm", "bf16", "gemm.mma_sync.b", "m=4096,n=4096,k=4096", 130.0),
                figure("rmsnorm", "fp16", "rmsnorm.vec.a", "rows=4096,cols=8192", 20.0)});
}

void expect_refused(const std::string& text, ErrorCode code, const std::string& words,
                    const LoadOptions& opt = at_generation()) {
  auto snap = Snapshot::parse(text, opt);
  ASSERT_FALSE(snap.ok()) << "a bad snapshot was accepted; expected " << error_code_name(code);
  EXPECT_EQ(snap.error().code, code) << snap.error().message;
  EXPECT_NE(snap.error().message.find(words), std::string::npos) << snap.error().message;
}

}  // namespace

TEST(DispatchSnapshot, AValidSnapshotSaysWhereItsEvidenceComesFrom) {
  auto snap = Snapshot::parse(sample(), at_generation());
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->gpu_model(), k_gpu);
  EXPECT_EQ(snap->arch(), "9.0");
  EXPECT_EQ(snap->generated_at_ms(), k_generated_ms);
  EXPECT_EQ(snap->commits(), std::vector<std::string>{k_commit});
  EXPECT_EQ(snap->drivers(), std::vector<std::string>{"580.65.06"});
  auto tables = snap->tables();
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0].op, "gemm");
  EXPECT_EQ(tables[0].figures, 2u);
  EXPECT_EQ(tables[0].timed_shapes, 1u);
  EXPECT_EQ(tables[0].instances, std::vector<std::string>{"gemm.wgmma_tma.a"});
  EXPECT_EQ(tables[1].op, "rmsnorm");
  EXPECT_EQ(tables[1].dtype, "fp16");
}

TEST(DispatchSnapshot, TheWriterIsDeterministic) {
  // The same figures in another order are the same document, checksum included.
  auto a = write(
      {figure("gemm", "bf16", "gemm.x.a", "m=1,n=2,k=3", 5.0), figure("gemm", "bf16", "gemm.x.b", "m=1,n=2,k=3", 6.0)});
  auto doc = json::parse(a).as_object();
  auto& figs = doc["tables"].as_array()[0].as_object()["figures"].as_array();
  std::swap(figs[0], figs[1]);
  EXPECT_NE(json::serialize(doc), a);
  auto b = write(
      {figure("gemm", "bf16", "gemm.x.b", "m=1,n=2,k=3", 6.0), figure("gemm", "bf16", "gemm.x.a", "m=1,n=2,k=3", 5.0)});
  // Result ids differ between the two calls, so compare the figure order only.
  auto fa = json::parse(a).at("tables").at(0).at("figures"), fb = json::parse(b).at("tables").at(0).at("figures");
  EXPECT_EQ(fa.at(0).at("instance"), fb.at(0).at("instance"));
  EXPECT_EQ(fa.at(1).at("instance"), fb.at(1).at("instance"));
}

TEST(DispatchSnapshot, NotJsonIsRefused) {
  expect_refused("{\"schema_version\": 1, \"tables\": [", ErrorCode::bad_json, "not JSON");
  expect_refused("", ErrorCode::bad_json, "not JSON");
  expect_refused("[1,2,3]", ErrorCode::bad_json, "expected a JSON object");
}

TEST(DispatchSnapshot, ATruncatedSnapshotIsRefused) {
  auto text = sample();
  expect_refused(text.substr(0, text.size() / 2), ErrorCode::bad_json, "not JSON");
}

TEST(DispatchSnapshot, AnotherSchemaVersionIsRefused) {
  expect_refused(edit(sample(), [](json::object& d) { d["schema_version"] = 1; }), ErrorCode::schema_version,
                 "reads 2");
  expect_refused(edit(sample(), [](json::object& d) { d["schema_version"] = "2"; }), ErrorCode::schema_version,
                 "schema_version");
  expect_refused(edit(sample(), [](json::object& d) { d.erase("schema_version"); }), ErrorCode::missing_field,
                 "schema_version");
}

TEST(DispatchSnapshot, AMissingFieldIsRefusedByName) {
  expect_refused(edit(sample(), [](json::object& d) { d.erase("generated_at_ms"); }), ErrorCode::missing_field,
                 "generated_at_ms");
  expect_refused(edit(sample(), [](json::object& d) { d["gpu"].as_object().erase("model"); }), ErrorCode::missing_field,
                 "gpu.model");
  expect_refused(edit(sample(),
                      [](json::object& d) {
                        d["tables"].as_array()[0].as_object()["figures"].as_array()[1].as_object().erase("median_us");
                      }),
                 ErrorCode::missing_field, "tables[0].figures[1].median_us");
  expect_refused(edit(sample(), [](json::object& d) { d.erase("tables"); }), ErrorCode::missing_field, "tables");
}

TEST(DispatchSnapshot, AFieldOfTheWrongTypeOrDomainIsRefused) {
  expect_refused(edit(sample(),
                      [](json::object& d) {
                        d["tables"].as_array()[0].as_object()["figures"].as_array()[0].as_object()["median_us"] =
                            "fast";
                      }),
                 ErrorCode::bad_json, "tables[0].figures[0].median_us is a string");
  expect_refused(edit(sample(),
                      [](json::object& d) {
                        d["tables"].as_array()[0].as_object()["figures"].as_array()[0].as_object()["median_us"] = -3.0;
                      }),
                 ErrorCode::bad_value, "median_us must be a finite number >= 0");
  expect_refused(edit(sample(),
                      [](json::object& d) {
                        d["tables"].as_array()[0].as_object()["figures"].as_array()[0].as_object()["shape"] =
                            "m=4096;n=1";
                      }),
                 ErrorCode::bad_value, "tables[0].figures[0].shape");
  expect_refused(edit(sample(),
                      [](json::object& d) {
                        d["tables"].as_array()[0].as_object()["figures"].as_array()[0].as_object()["status"] = "great";
                      }),
                 ErrorCode::bad_value, "'great'");
  expect_refused(edit(sample(), [](json::object& d) { d["kind"] = "something.else"; }), ErrorCode::bad_value, "kind");
  expect_refused(edit(sample(),
                      [](json::object& d) {
                        auto t = d["tables"].as_array()[0];
                        d["tables"].as_array().push_back(t);
                      }),
                 ErrorCode::bad_value, "repeats op gemm dtype bf16");
}

TEST(DispatchSnapshot, AnInstancesSplitOfKIsKeptAndABadOneRefused) {
  const std::vector<SnapshotFigure> figures = {figure("gemm", "bf16", "gemm.w.k2", "m=128,n=8192,k=8192", 40.0),
                                               figure("gemm", "bf16", "gemm.w.one", "m=128,n=8192,k=8192", 45.0)};
  const auto text = write(figures, k_generated_ms, 132,
                          {split_k(gemm_tiles("gemm.w.k2", 128, 128), 2), gemm_tiles("gemm.w.one", 128, 128)});
  auto doc = json::parse(text).as_object();
  const auto& instances = doc.at("instances").as_array();
  ASSERT_EQ(instances.size(), 2u);
  EXPECT_EQ(instances[0].at("split").as_int64(), 2);  // written only where a tile is split
  EXPECT_EQ(instances[1].as_object().if_contains("split"), nullptr);
  auto snap = Snapshot::parse(text, at_generation());
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  // The split makes the 128x128 tile 128 blocks of half the steps at M = 128, N = 8192: the
  // estimate from a K of 8192 to one of 4096 halves the figure for both, so the split one
  // stays ahead; from 8192 to 16384 it doubles.
  auto a = snap->lookup("gemm", "bf16", "m=128,n=8192,k=16384");
  EXPECT_EQ(std::string(a.instance), "gemm.w.k2");
  EXPECT_DOUBLE_EQ(a.estimate_us, 80.0);
  expect_refused(edit(text, [](json::object& d) { d["instances"].as_array()[0].as_object()["split"] = -1; }),
                 ErrorCode::bad_value, "instances[0].split");
  expect_refused(edit(text, [](json::object& d) { d["instances"].as_array()[0].as_object()["split"] = 65; }),
                 ErrorCode::bad_value, "instances[0].split");
}

// A kernel that splits K until the GPU is full (gemm.gemv) is written with split 0 and read
// back so: its figure moves with N x K, not with M.
TEST(DispatchSnapshot, ASplitThatFillsTheGpuIsKept) {
  const std::vector<SnapshotFigure> figures = {figure("gemm", "bf16", "gemm.v.fill", "m=1,n=4096,k=14336", 42.0)};
  auto fill = split_k(gemm_tiles("gemm.v.fill", 8, 256, 4), 0);
  const auto text = write(figures, k_generated_ms, 132, {fill});
  auto doc = json::parse(text).as_object();
  EXPECT_EQ(doc.at("instances").as_array()[0].at("split").as_int64(), 0);
  auto snap = Snapshot::parse(text, at_generation());
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  auto a = snap->lookup("gemm", "bf16", "m=4,n=8192,k=28672");
  EXPECT_EQ(std::string(a.instance), "gemm.v.fill");
  EXPECT_DOUBLE_EQ(a.estimate_us, 42.0 * 1738 / 435);  // 4x the column tiles x steps; M alone moves nothing
}

// An instance's limit (the gemv runs m up to 8) travels in the snapshot, and a lookup
// beyond it never names the instance, as the API does; a bad limit is refused.
TEST(DispatchSnapshot, AnInstanceIsNoAnswerBeyondItsLimit) {
  const std::vector<SnapshotFigure> figures = {figure("gemm", "fp32", "gemm.v.rows8", "m=4,n=4096,k=4096", 10.0),
                                               figure("gemm", "fp32", "gemm.w.tile", "m=4,n=4096,k=4096", 30.0)};
  auto gemv = split_k(gemm_tiles("gemm.v.rows8", 8, 256, 4), 0);
  gemv.geometry.limits.push_back({"m", 8});
  const auto text = write(figures, k_generated_ms, 132, {gemv, gemm_tiles("gemm.w.tile", 128, 128)});
  auto doc = json::parse(text).as_object();
  const auto& limits = doc.at("instances").as_array()[0].at("limits").as_array();
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].at("max").as_int64(), 8);
  auto snap = Snapshot::parse(text, at_generation());
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(std::string(snap->lookup("gemm", "fp32", "m=6,n=4096,k=4096").instance), "gemm.v.rows8");
  auto beyond = snap->lookup("gemm", "fp32", "m=12,n=4096,k=4096");
  EXPECT_EQ(beyond.status, Status::nearest);
  EXPECT_EQ(std::string(beyond.instance), "gemm.w.tile");
  expect_refused(edit(text,
                      [](json::object& d) {
                        d["instances"].as_array()[0].as_object()["limits"].as_array()[0].as_object()["max"] = 0;
                      }),
                 ErrorCode::bad_value, "instances[0].limits[0].max");
}

// An instance's multiple (a 256-row grouped tile: each group's m a multiple of 256) travels
// in the snapshot, and a lookup off it never names the instance, as the API does; a bad
// multiple is refused.
TEST(DispatchSnapshot, AnInstanceIsNoAnswerOffItsMultiple) {
  const std::vector<SnapshotFigure> figures = {
      figure("grouped_gemm_fp8", "e4m3", "grouped_gemm_fp8.t.tall", "g=4,m=512,n=4096,k=7168,scale=2", 50.0),
      figure("grouped_gemm_fp8", "e4m3", "grouped_gemm_fp8.s.short", "g=4,m=512,n=4096,k=7168,scale=2", 60.0)};
  porting::InstanceGeometry tall{"grouped_gemm_fp8.t.tall", porting::Geometry{{{"m", 256}, {"n", 128}}, {{"k", 128}}}};
  tall.geometry.multiples.push_back({"m", 256});
  porting::InstanceGeometry short_tile{"grouped_gemm_fp8.s.short",
                                       porting::Geometry{{{"m", 128}, {"n", 128}}, {{"k", 128}}}};
  const auto text = write(figures, k_generated_ms, 132, {tall, short_tile});
  auto doc = json::parse(text).as_object();
  const auto& instances = doc.at("instances").as_array();  // sorted by name
  ASSERT_EQ(instances.size(), 2u);
  ASSERT_EQ(instances[1].at("name").as_string(), "grouped_gemm_fp8.t.tall");
  ASSERT_EQ(instances[1].at("multiples").as_array().size(), 1u);
  EXPECT_EQ(instances[1].at("multiples").as_array()[0].at("multiple").as_int64(), 256);
  EXPECT_FALSE(instances[0].as_object().contains("multiples"));
  auto snap = Snapshot::parse(text, at_generation());
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(std::string(snap->lookup("grouped_gemm_fp8", "e4m3", "g=4,m=1024,n=4096,k=7168,scale=2").instance),
            "grouped_gemm_fp8.t.tall");
  auto off = snap->lookup("grouped_gemm_fp8", "e4m3", "g=4,m=384,n=4096,k=7168,scale=2");
  EXPECT_EQ(off.status, Status::nearest);
  EXPECT_EQ(std::string(off.instance), "grouped_gemm_fp8.s.short");
  expect_refused(edit(text,
                      [](json::object& d) {
                        d["instances"].as_array()[1].as_object()["multiples"].as_array()[0].as_object()["multiple"] = 0;
                      }),
                 ErrorCode::bad_value, "instances[1].multiples[0].multiple is not a positive extent");
}

// An instance's byte limits (a cluster row kernel takes rows over 32 KB, in whole 16-byte
// vectors) travel in the snapshot and are read in the table's dtype: a lookup outside them
// never names the instance; a limit that bounds nothing is refused.
TEST(DispatchSnapshot, AnInstanceIsNoAnswerOutsideTheBytesItRuns) {
  const std::vector<SnapshotFigure> figures = {
      figure("softmax", "bf16", "softmax.c.cluster", "rows=2048,cols=16392", 20.0),
      figure("softmax", "bf16", "softmax.v.vec16", "rows=2048,cols=16392", 25.0)};
  porting::InstanceGeometry cluster{"softmax.c.cluster", {}};
  cluster.geometry.byte_limits.push_back({"cols", 524288, 16, 32784});
  const auto text = write(figures, k_generated_ms, 132, {cluster});
  auto doc = json::parse(text).as_object();
  const auto& limits = doc.at("instances").as_array()[0].at("byte_limits").as_array();
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].at("min_bytes").as_int64(), 32784);
  EXPECT_EQ(limits[0].at("max_bytes").as_int64(), 524288);
  EXPECT_EQ(limits[0].at("align_bytes").as_int64(), 16);
  auto snap = Snapshot::parse(text, at_generation());
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(std::string(snap->lookup("softmax", "bf16", "rows=2048,cols=16400").instance), "softmax.c.cluster");
  for (const char* outside : {"rows=2048,cols=16384", "rows=2048,cols=16396", "rows=2048,cols=262152"}) {
    auto a = snap->lookup("softmax", "bf16", outside);
    EXPECT_EQ(a.status, Status::nearest) << outside;
    EXPECT_EQ(std::string(a.instance), "softmax.v.vec16") << outside;
  }
  expect_refused(edit(text,
                      [](json::object& d) {
                        auto& b = d["instances"].as_array()[0].as_object()["byte_limits"].as_array()[0].as_object();
                        b["min_bytes"] = 0;
                        b["max_bytes"] = 0;
                        b["align_bytes"] = 0;
                      }),
                 ErrorCode::bad_value, "instances[0].byte_limits[0] bounds nothing");
}

TEST(DispatchSnapshot, ABitChangedAfterServingFailsTheChecksum) {
  auto text = sample();
  auto at = text.find("\"median_us\":1E2");
  ASSERT_NE(at, std::string::npos) << text;
  std::string edited = text;
  edited.replace(at, 15, "\"median_us\":9E1");  // still valid JSON, a faster figure
  expect_refused(edited, ErrorCode::checksum, "checksum mismatch");
  std::string no_sum = text;
  no_sum.replace(no_sum.find("\"checksum\""), 10, "\"checksun\"");
  expect_refused(no_sum, ErrorCode::missing_field, "checksum is missing");
  std::string bad_digits = text;
  bad_digits.replace(bad_digits.find("fnv1a64:") + 8, 2, "ZZ");
  expect_refused(bad_digits, ErrorCode::checksum, "16 hex digits");
}

TEST(DispatchSnapshot, AnOldSnapshotIsStaleOnlyWhenTheCallerSetsAMaxAge) {
  auto text = sample();
  LoadOptions opt;
  opt.now_ms = k_generated_ms + 3'600'000;  // an hour later
  EXPECT_TRUE(Snapshot::parse(text, opt).ok());
  opt.max_age_s = 7200;
  EXPECT_TRUE(Snapshot::parse(text, opt).ok());
  opt.max_age_s = 600;
  expect_refused(text, ErrorCode::stale, "3600 s ago, more than the max age of 600 s", opt);
  opt.now_ms = k_generated_ms - 3'600'000;  // generated "an hour in the future"
  expect_refused(text, ErrorCode::stale, "in the future", opt);
}

TEST(DispatchSnapshot, AnotherCommitOrGpuThanExpectedIsRefused) {
  auto text = sample();
  LoadOptions opt = at_generation();
  opt.expect_commit = k_commit.substr(0, 7);
  EXPECT_TRUE(Snapshot::parse(text, opt).ok());
  opt.expect_commit = std::string(40, 'd');
  expect_refused(text, ErrorCode::wrong_commit, "not the expected dddddddd", opt);
  opt.expect_commit = "main";
  expect_refused(text, ErrorCode::wrong_commit, "hex digits", opt);
  opt.expect_commit.reset();
  opt.expect_gpu = "NVIDIA B200";
  expect_refused(text, ErrorCode::wrong_gpu, "'NVIDIA H200', not 'NVIDIA B200'", opt);
  LoadOptions empty = at_generation();
  empty.expect_commit = k_commit;
  expect_refused(write({}), ErrorCode::wrong_commit, "no measurement", empty);
}

TEST(DispatchSnapshot, AFileThatCannotBeReadIsAnIoErrorNamingIt) {
  auto missing = Snapshot::load_file("/nonexistent/snap.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::io);
  EXPECT_NE(missing.error().message.find("/nonexistent/snap.json"), std::string::npos);
  auto path = std::filesystem::temp_directory_path() / ("kport-dispatch-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    out << sample();
  }
  auto ok = Snapshot::load_file(path.string(), at_generation());
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  std::filesystem::remove(path);
}

}  // namespace kport::dispatch::testing
