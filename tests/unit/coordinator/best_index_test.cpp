// /api/v1/best's in-memory evidence: measured answers written from pre-serialized members
// are byte for byte what select_best and the answer's writer (selection_text.h) write, and an entry is served only while
// the store's version of its key still reads what it was read at, so an acknowledged
// upload is answered at once, with readers on other threads.
#include "best_index.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <thread>

#include "best_answer.h"
#include "best_evidence.h"
#include "codec.h"
#include "families.h"
#include "selection_text.h"

namespace kport::coordinator {
namespace {

namespace json = boost::json;

std::vector<porting::Measurement> history(std::mt19937_64& rng, int n) {
  const char* shapes[] = {"m=2048,n=2048,k=2048", "m=4096,n=4096,k=4096", "m=8192,n=8192,k=8192",
                          "m=4096,n=4096,k=512",  "m=128,n=8192,k=8192",  "m=1000,n=1000,k=1000"};
  const char* instances[] = {"gemm.simt.a", "gemm.mma_sync.a", "gemm.wgmma_tma.a", "gemm.wgmma_tma.b"};
  std::vector<porting::Measurement> rows;
  for (int i = 0; i < n; ++i) {
    porting::Measurement m;
    m.result_id = i + 1;
    m.instance = instances[rng() % 4];
    m.variant = m.instance.substr(5, m.instance.rfind('.') - 5);
    m.target = "sm_90a";
    m.gpu_model = "NVIDIA H200";
    m.arch = "9.0";
    m.driver = rng() % 4 == 0 ? "570.1" : "580.1";
    const auto c = rng() % 3;
    m.commit = std::string(40, static_cast<char>('a' + c));
    m.commit_ms = 1'700'000'000'000 + static_cast<std::int64_t>(c) * 1000;
    m.shape = *porting::Shape::parse(shapes[rng() % 6]);
    m.status = rng() % 9 == 0 ? "failed" : "passed";
    if (m.status == "passed") {
      m.median_us = 100.0 + static_cast<double>(rng() % 40) + 0.25;
      m.stddev_us = 0.5 + static_cast<double>(rng() % 3);
      m.samples = 50;
      m.ratio = 120.0 / m.median_us;
    }
    m.unstable = rng() % 7 == 0;
    m.measured_at_ms = m.commit_ms + i;
    rows.push_back(std::move(m));
  }
  return rows;
}

http::Request request(const std::string& shape, const std::string& arch = "", const std::string& target = "") {
  http::Request r;
  r.query = {{"gpu", "NVIDIA H200"}, {"op", "gemm"}, {"dtype", "bf16"}, {"shape", shape}};
  if (!arch.empty()) r.query["arch"] = arch;
  if (!target.empty()) r.query["target"] = target;
  return r;
}

// kport's own families, as the coordinator knows them at start.
std::shared_ptr<const porting::FamilySet> kport_families() {
  static const auto k = [] {
    auto builtin = Families::load_builtin(KPORT_KERNELS_MANIFEST);
    EXPECT_TRUE(builtin.ok()) << builtin.error().message;
    return std::make_shared<const porting::FamilySet>(builtin.ok() ? *builtin : std::vector<porting::OpFamily>{});
  }();
  return k;
}

// A gemm shape in the family's own order, as the harness prints it.
std::string gemm_text(const porting::Shape& s) {
  return "m=" + std::to_string(s.get("m")) + ",n=" + std::to_string(s.get("n")) + ",k=" + std::to_string(s.get("k"));
}

}  // namespace

TEST(BestAnswer, MeasuredAnswersAreByteForByteWhatTheRuleAndTheCodecWrite) {
  std::mt19937_64 rng(16);
  for (int round = 0; round < 80; ++round) {
    auto rows = history(rng, 1 + static_cast<int>(rng() % 50));
    std::vector<porting::DriverSeen> drivers{{"NVIDIA H200", "570.1"}, {"NVIDIA H200", "580.1"}};
    // Odd rounds move figures from another shape by waves of tiles over 132 SMs.
    const bool waves = round % 2 == 1;
    const std::vector<porting::InstanceGeometry> tiles = {
        {"gemm.mma_sync.a", {{{"m", 128}, {"n", 128}}, {{"k", 32}}}},
        {"gemm.wgmma_tma.a", {{{"m", 128}, {"n", 256}}, {{"k", 64}}}},
        {"gemm.wgmma_tma.b", {{{"m", 128}, {"n", 128}}, {{"k", 64}}}}};
    BestIndex::Entry entry(2, porting::PreparedSelection("NVIDIA H200", rows, drivers, waves ? 132 : 0,
                                                         waves ? tiles : std::vector<porting::InstanceGeometry>{}));
    for (int i = 0; i < 40; ++i) {
      std::string shape = i % 4 == 0
                              ? rows[rng() % rows.size()].shape.canonical()
                              : "k=" + std::to_string(1 + rng() % 9000) + ",m=" + std::to_string(1 + rng() % 9000) +
                                    ",n=" + std::to_string(1 + rng() % 9000);
      auto q =
          parse_best_question(request(shape, i % 3 == 0 ? "9.0" : "", i % 5 == 0 ? "sm_90a" : ""), kport_families());
      ASSERT_TRUE(q.ok());
      // What the route wrote before the index: select_best over the rows, to_json, then
      // the question's members.
      porting::SelectionQuery sq{q->gpu, q->arch.empty() ? rows.front().arch : q->arch, q->target, q->shape, q->dtype};
      porting::SelectionInputs in;
      in.on_gpu = rows;
      in.drivers = drivers;
      if (waves) {
        in.sm_count = 132;
        in.geometry = tiles;
      }
      auto sel = porting::select_best(sq, in);
      // The question's members as the API documents them.
      json::object tail;
      tail["query"] =
          json::object{{"gpu", q->gpu},   {"op", q->op},         {"dtype", q->dtype}, {"shape", q->shape.canonical()},
                       {"arch", sq.arch}, {"target", sq.target}, {"repo", ""}};
      std::optional<AskView> got_ask;
      const bool want_ask = !(sel.kind == porting::Selection::Kind::measured && sel.exact_shape);
      if (want_ask)
        tail["measure"] = json::object{
            {"requests", "POST /api/v1/best/requests"},
            {"body", json::object{{"gpu", q->gpu}, {"op", q->op}, {"dtype", q->dtype}, {"shape", gemm_text(q->shape)}}},
            {"list", "GET /api/v1/best/requests?gpu=NVIDIA%20H200"}};
      auto got = measured_answer(entry, *q, got_ask);
      ASSERT_TRUE(got.has_value()) << shape;
      std::string want = "{";
      JsonText w(want);
      write_members(w, sel);
      want += ',';
      want += json::serialize(tail).substr(1);
      ASSERT_EQ(*got, want) << "round " << round << " shape " << shape;
      ASSERT_EQ(got_ask.has_value(), want_ask);
      if (want_ask) {
        EXPECT_EQ(got_ask->shape, q->shape.canonical());
        EXPECT_EQ(got_ask->repo, "") << "rows of no library: an ask of none";
      }
    }
  }
}

// A grouped gemm asked with valid = m is the contiguous shape (every row of a group valid), as
// the harness measures and stores it; valid above m is no shape, refused saying so.
TEST(BestAnswer, AGroupedGemmAskedWithEveryRowValidIsTheContiguousQuestion) {
  auto ask = [](const std::string& shape) {
    http::Request r;
    r.query = {{"gpu", "NVIDIA H200"}, {"op", "grouped_gemm"}, {"dtype", "bf16"}, {"shape", shape}};
    return parse_best_question(r, kport_families());
  };
  auto full = ask("g=4,m=8192,n=4096,k=7168,valid=8192");
  ASSERT_TRUE(full.ok()) << full.error().message;
  auto contiguous = ask("g=4,m=8192,n=4096,k=7168");
  ASSERT_TRUE(contiguous.ok());
  EXPECT_EQ(full->shape, contiguous->shape);
  EXPECT_EQ(full->op_shape_text, "g=4,m=8192,n=4096,k=7168");
  auto over = ask("g=4,m=8192,n=4096,k=7168,valid=9000");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, Errc::invalid_argument);
  EXPECT_NE(over.error().message.find("above m=8192"), std::string::npos) << over.error().message;
}

TEST(JsonText, WritesEveryValueAsTheSerializerDoes) {
  std::vector<json::value> values = {json::value(0.0),
                                     json::value(-0.0),
                                     json::value(1.0),
                                     json::value(100.25),
                                     json::value(1e-7),
                                     json::value(123456789.125),
                                     json::value(1.0 / 3.0),
                                     json::value(2.5e300),
                                     json::value(std::int64_t{0}),
                                     json::value(std::int64_t{-42}),
                                     json::value(INT64_MAX),
                                     json::value(INT64_MIN),
                                     json::value(true),
                                     json::value(false),
                                     json::value(nullptr)};
  std::string every;
  for (int c = 0; c < 128; ++c) every += static_cast<char>(c);
  every += "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  values.emplace_back(every);
  values.emplace_back("a \"quoted\" \\ path/with/slashes");
  values.emplace_back(std::string(600, 'x') + "\n");  // longer than one read of the serializer
  // Text with nothing to escape takes JsonText's own path, not the serializer's.
  std::string printable;
  for (char c = 0x20; c < 0x7f; ++c)
    if (c != '"' && c != '\\') printable += c;
  values.emplace_back(printable);
  values.emplace_back("");
  values.emplace_back("NVIDIA H200");
  values.emplace_back(std::string(600, 'y'));
  values.emplace_back("del \x7f");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  for (int i = 0; i < 200; ++i) values.emplace_back(u(rng));
  for (const auto& v : values) {
    std::string out;
    JsonText w(out);
    if (v.is_double())
      w.num(v.as_double());
    else if (v.is_int64())
      w.num(v.as_int64());
    else if (v.is_bool())
      w.boolean(v.as_bool());
    else if (v.is_null())
      w.null();
    else
      w.str(v.as_string());
    EXPECT_EQ(out, json::serialize(v));
  }
}

class BestIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() / ("kport-best-index-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(m_dir);
    db::Options o;
    o.path = (m_dir / "kport.db").string();
    auto s = db::Store::open(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    m_store = std::move(*s);
  }
  void TearDown() override {
    m_store.reset();
    std::filesystem::remove_all(m_dir);
  }
  void upload(double median_us, const std::string& gpu = "NVIDIA H200") {
    db::ResultRecord r;
    r.commit_sha = std::string(40, 'c');
    r.target = "sm_90a";
    r.family = "gemm";
    r.variant = "wgmma_tma";
    r.instance = "gemm.wgmma_tma.a";
    r.dtype = "bf16";
    r.shape = "m=4096,n=4096,k=4096";
    r.gpu_model = gpu;
    r.arch = "9.0";
    r.driver = "580.1";
    r.status = db::ResultStatus::passed;
    r.median_us = median_us;
    r.stddev_us = 0.1;
    r.samples = 50;
    auto out = m_store->put_results({r});
    ASSERT_TRUE(out.ok()) << out.error().message;
  }
  static double best_median(const BestIndex::Entry& e) {
    return e.prepared().at(0).ranking.front().evidence->median_us;
  }
  std::filesystem::path m_dir;
  std::unique_ptr<db::Store> m_store;
};

TEST_F(BestIndexTest, AnEntryIsServedOnlyWhileTheStoreHoldsItsVersion) {
  BestIndex index(*m_store);
  EXPECT_EQ(index.current("NVIDIA H200", "gemm", "bf16", *kport_families()), nullptr);
  upload(100);
  auto first = index.load("NVIDIA H200", "gemm", "bf16", *kport_families());
  ASSERT_TRUE(first.ok());
  EXPECT_DOUBLE_EQ(best_median(**first), 100);
  EXPECT_EQ(index.current("NVIDIA H200", "gemm", "bf16", *kport_families()), *first)
      << "kept: no write overlapped the read";
  upload(90, "NVIDIA H100");
  EXPECT_EQ(index.current("NVIDIA H200", "gemm", "bf16", *kport_families()), *first)
      << "another GPU model's upload leaves it current";
  upload(80);
  EXPECT_EQ(index.current("NVIDIA H200", "gemm", "bf16", *kport_families()), nullptr)
      << "an acknowledged upload retires it";
  auto second = index.load("NVIDIA H200", "gemm", "bf16", *kport_families());
  ASSERT_TRUE(second.ok());
  EXPECT_DOUBLE_EQ(best_median(**second), 80);
  // Unknown keys are read, answered, and not kept.
  auto none = index.load("Mystery", "gemm", "bf16", *kport_families());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->prepared().rows(), 0u);
  const auto st = index.stats();
  EXPECT_EQ(st.keys, 1u);
  EXPECT_EQ(st.rows, 1u);
  EXPECT_GT(st.bytes, 0u);
}

TEST_F(BestIndexTest, ReadersOnOtherThreadsNeverSeeAnOlderFigureThanTheLastAcknowledged) {
  BestIndex index(*m_store);
  upload(1000);
  std::atomic<double> acknowledged{1000};
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t)
    readers.emplace_back([&] {
      while (!done.load()) {
        const double floor = acknowledged.load();
        auto e = index.current("NVIDIA H200", "gemm", "bf16", *kport_families());
        if (!e) {
          auto loaded = index.load("NVIDIA H200", "gemm", "bf16", *kport_families());
          ASSERT_TRUE(loaded.ok());
          e = *loaded;
        }
        // Figures fall with every upload: an answer above the last acknowledged one is stale.
        EXPECT_LE(best_median(*e), floor);
        (void)e->text(0);
      }
    });
  for (int i = 1; i <= 150; ++i) {
    upload(1000 - i);
    acknowledged = 1000 - i;
    auto e = index.load("NVIDIA H200", "gemm", "bf16", *kport_families());
    ASSERT_TRUE(e.ok());
    ASSERT_DOUBLE_EQ(best_median(**e), 1000 - i);
  }
  done = true;
  for (auto& r : readers) r.join();
}

// A family another library declares, with its own tile keys: a grouped gemm over g
// groups whose instances publish tile_m, tile_n and tile_k. Its figures move to a shape
// that was not measured by its waves, read by the keys it declared, as gemm's do.
api::Family moe_gemm(bool with_geometry, const std::string& n_key = "tile_n") {
  api::Family f;
  f.name = "moe_gemm";
  f.dims = {api::FamilyDim{"g", std::nullopt, 1, 1 << 30}, api::FamilyDim{"m", std::nullopt, 1, 1 << 30},
            api::FamilyDim{"n", std::nullopt, 1, 1 << 30}, api::FamilyDim{"k", std::nullopt, 1, 1 << 30}};
  f.dtypes = {"bf16"};
  f.flops = "2*g*m*n*k";
  if (with_geometry)
    f.geometry = {api::FamilyGeometryDim{"m", {"tile_m"}, {}, {}, {}, {}},
                  api::FamilyGeometryDim{"n", {n_key}, {}, {}, {}, {}},
                  api::FamilyGeometryDim{"k", {}, {"tile_k"}, {}, {}, {}}};
  return f;
}

TEST_F(BestIndexTest, AForeignFamilysDeclaredKeysMoveItsFiguresByWaves) {
  auto builtin = Families::load_builtin(KPORT_KERNELS_MANIFEST);
  ASSERT_TRUE(builtin.ok()) << builtin.error().message;
  Families families(*builtin);
  ASSERT_TRUE(families.learn(*m_store, "grouped", api::LibraryFamilies{"grouped-lib", 0, {moe_gemm(true)}}).ok());
  db::NewRunner gpu{"h200-0", db::RunnerRole::gpu, {}};
  gpu.caps.gpu_model = "NVIDIA H200";
  gpu.caps.arch = "9.0";
  gpu.caps.extra_json = R"({"sm_count":132})";
  ASSERT_TRUE(m_store->register_runner(gpu).ok());
  ASSERT_TRUE(m_store
                  ->upsert_kernel_instances({{"moe_gemm.tc.128x128", "moe_gemm", "tc", "[]",
                                              R"({"tile_m":128,"tile_n":128,"tile_k":64})", std::nullopt, "grouped"},
                                             {"moe_gemm.tc.128x256", "moe_gemm", "tc", "[]",
                                              R"({"tile_m":128,"tile_n":256,"tile_k":64})", std::nullopt, "grouped"}})
                  .ok());
  // Measured at N = 14336 only, where both tiles make one wave over 132 SMs and 128x128
  // is the faster; at N = 28672 its 224 blocks need two waves and 128x256's 112 one.
  for (auto [instance, median] : {std::pair{"moe_gemm.tc.128x128", 100.0}, std::pair{"moe_gemm.tc.128x256", 110.0}}) {
    db::ResultRecord r;
    r.commit_sha = std::string(40, 'c');
    r.target = "sm_90a";
    r.family = "moe_gemm";
    r.variant = "tc";
    r.instance = instance;
    r.dtype = "bf16";
    r.shape = "g=1,m=96,n=14336,k=8192";
    r.gpu_model = "NVIDIA H200";
    r.arch = "9.0";
    r.driver = "580.1";
    r.status = db::ResultStatus::passed;
    r.median_us = median;
    r.stddev_us = 0.1;
    r.samples = 50;
    ASSERT_TRUE(m_store->put_results({r}).ok());
  }
  BestIndex index(*m_store);
  auto best_at = [&](const std::shared_ptr<const porting::FamilySet>& known, const std::string& shape) {
    http::Request req;
    req.query = {{"gpu", "NVIDIA H200"}, {"op", "moe_gemm"}, {"dtype", "bf16"}, {"shape", shape}};
    auto q = parse_best_question(req, known);
    EXPECT_TRUE(q.ok()) << q.error().message;
    auto entry = index.load("NVIDIA H200", "moe_gemm", "bf16", *known);
    EXPECT_TRUE(entry.ok());
    std::optional<AskView> unmeasured;
    auto body = measured_answer(**entry, *q, unmeasured);
    EXPECT_TRUE(body.has_value());
    return std::string(json::parse(body.value_or("{}")).as_object().at("best").as_string());
  };

  const auto declared = families.current();
  auto waves = wave_inputs(*m_store, "NVIDIA H200", *declared, std::string("moe_gemm"));
  ASSERT_TRUE(waves.ok()) << waves.error().message;
  EXPECT_EQ(waves->sm_count, 132);
  ASSERT_EQ(waves->geometry.size(), 2u);
  const porting::Geometry* wide = porting::find_geometry(waves->geometry, "moe_gemm.tc.128x256");
  ASSERT_NE(wide, nullptr);
  ASSERT_EQ(wide->tiles.size(), 2u);
  EXPECT_EQ(wide->tiles[1].dim, "n");
  EXPECT_EQ(wide->tiles[1].size, 256);
  EXPECT_EQ(wide->steps.at(0).dim, "k");
  EXPECT_EQ(wide->steps.at(0).size, 64);
  EXPECT_EQ(best_at(declared, "g=1,m=96,n=14336,k=8192"), "moe_gemm.tc.128x128");
  EXPECT_EQ(best_at(declared, "g=1,m=96,n=28672,k=8192"), "moe_gemm.tc.128x256")
      << "by waves: 128x128 needs two, 128x256 one";
  const auto entry = index.current("NVIDIA H200", "moe_gemm", "bf16", *declared);
  ASSERT_NE(entry, nullptr);

  // The library's next build declares its n tile under a key no instance publishes: its
  // instances have no geometry, the cached entry is not served with the new declaration,
  // and the figures move by problem size, which keeps 128x128 first.
  ASSERT_TRUE(
      families.learn(*m_store, "grouped", api::LibraryFamilies{"grouped-lib", 0, {moe_gemm(true, "cta_n")}}).ok());
  const auto renamed = families.current();
  EXPECT_EQ(index.current("NVIDIA H200", "moe_gemm", "bf16", *renamed), nullptr);
  EXPECT_EQ(index.current("NVIDIA H200", "moe_gemm", "bf16", *declared), entry);
  auto none = wave_inputs(*m_store, "NVIDIA H200", *renamed, std::string("moe_gemm"));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->geometry.empty());
  EXPECT_EQ(best_at(renamed, "g=1,m=96,n=28672,k=8192"), "moe_gemm.tc.128x128");
  // Declaring nothing is the same: no family's keys are read for it.
  ASSERT_TRUE(families.learn(*m_store, "grouped", api::LibraryFamilies{"grouped-lib", 0, {moe_gemm(false)}}).ok());
  EXPECT_TRUE(wave_inputs(*m_store, "NVIDIA H200", *families.current(), std::string("moe_gemm"))->geometry.empty());
  EXPECT_EQ(best_at(families.current(), "g=1,m=96,n=28672,k=8192"), "moe_gemm.tc.128x128");
}

}  // namespace kport::coordinator
