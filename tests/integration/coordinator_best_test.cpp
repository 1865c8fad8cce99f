// /api/v1/best through a real coordinator: answers from the newest commit's results on
// a GPU model, the evidence they cite, provisional answers by ratio among instances that
// build for the target and run the dtype, unranked answers, and clear refusals.
#include "coordinator_fixture.h"

namespace kport::testing {
namespace json = boost::json;

namespace {

const std::string k_shape = "m=4096,n=4096,k=4096";

json::object gemm_result(const std::string& instance, std::optional<double> median_us, const std::string& driver,
                         const std::string& status = "passed", const std::string& dtype = "bf16") {
  json::object r{{"target", "sm_90a"},
                 {"family", "gemm"},
                 {"variant", instance.substr(5, instance.rfind('.') - 5)},
                 {"instance", instance},
                 {"dtype", dtype},
                 {"shape", k_shape},
                 {"toolkit", "13.0"},
                 {"gpu_model", "NVIDIA H200"},
                 {"gpu_uuid", "GPU-1"},
                 {"arch", "9.0"},
                 {"driver", driver},
                 {"status", status},
                 {"seed", 7}};
  if (median_us) {
    r["median_us"] = *median_us;
    r["stddev_us"] = *median_us * 0.002;
    r["samples"] = 100;
    r["baseline"] = "cublas";
    r["baseline_median_us"] = 200.0;
    r["ratio"] = 200.0 / *median_us;
  }
  return r;
}

}  // namespace

class BestAnswerTest : public CoordinatorTest {
 protected:
  void SetUp() override {
    CoordinatorTest::SetUp();
    put_target("sm_90a", "9.0", json::array{"simt", "mma_sync", "wgmma", "tma"});
    put_target("sm_100a", "10.0", json::array{"simt", "mma_sync", "tma", "tcgen05"});
    json::array kernels{instance("gemm.wgmma_tma.a", json::array{"wgmma", "tma"}, json::array{"bf16", "fp16"}),
                        instance("gemm.mma_sync.e", json::array{"mma_sync"}, json::array{"bf16", "fp16"}),
                        instance("gemm.simt.c", json::array{"simt"}, json::array{"bf16", "fp16", "fp32"}),
                        instance("gemm.tcgen05.d", json::array{"tcgen05", "tma"}, json::array{"bf16"})};
    ASSERT_EQ(put("/api/v1/kernels", json::object{{"instances", kernels}}, k_admin).status, 200);
    auto repo = post("/api/v1/repositories", json::object{{"name", "kernels"}, {"url", "/tmp/kernels.git"}}, k_admin);
    ASSERT_EQ(repo.status, 201) << repo.raw;
    m_builder = register_runner("builder-1", "build");
    m_gpu = register_runner("gpu-1", "gpu");
  }

  void put_target(const std::string& name, const std::string& arch, json::array features) {
    auto r = put("/api/v1/targets/" + name, json::object{{"arch", arch}, {"features", std::move(features)}}, k_admin);
    ASSERT_TRUE(r.status == 200 || r.status == 201) << r.raw;
  }

  static json::object instance(const std::string& name, json::array features, json::array dtypes) {
    return json::object{{"name", name},
                        {"family", "gemm"},
                        {"variant", name.substr(5, name.rfind('.') - 5)},
                        {"features", std::move(features)},
                        {"dtypes", std::move(dtypes)}};
  }

  // A commit at `time_ms`, its sm_90a build (what built) and its H200 check (results).
  void validate(const std::string& sha, std::int64_t time_ms, json::array results) {
    auto c = post("/api/v1/commits",
                  json::object{{"sha", sha}, {"repo", "kernels"}, {"message", "gemm"}, {"time_ms", time_ms}}, k_admin);
    ASSERT_EQ(c.status, 201) << c.raw;
    auto p =
        post("/api/v1/pipelines",
             json::object{
                 {"commit", sha}, {"repo", "kernels"}, {"ref", "refs/heads/main"}, {"targets", json::array{"sm_90a"}}},
             k_admin);
    ASSERT_EQ(p.status, 201) << p.raw;
    auto build = claim(m_builder);
    ASSERT_TRUE(build.is_object());
    auto id = std::to_string(build.at("id").as_int64());
    json::array records;
    for (const char* v : {"wgmma_tma", "mma_sync", "simt"})
      records.push_back(json::object{{"target", "sm_90a"}, {"family", "gemm"}, {"variant", v}, {"status", "ok"}});
    ASSERT_EQ(
        post("/api/v1/jobs/" + id + "/builds", json::object{{"attempt", 1}, {"records", records}}, m_builder).status,
        200);
    ASSERT_EQ(post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, m_builder)
                  .status,
              200);
    auto check = claim(m_gpu);
    ASSERT_TRUE(check.is_object());
    auto cid = std::to_string(check.at("id").as_int64());
    auto up =
        post("/api/v1/jobs/" + cid + "/results", json::object{{"attempt", 1}, {"results", std::move(results)}}, m_gpu);
    ASSERT_EQ(up.status, 200) << up.raw;
    ASSERT_EQ(post("/api/v1/jobs/" + cid + "/complete", json::object{{"attempt", 1}}, m_gpu).status, 200);
  }

  JsonReply best(const std::string& gpu, const std::string& dtype, const std::string& extra = "") {
    std::string g = gpu;
    for (std::size_t p; (p = g.find(' ')) != std::string::npos;) g.replace(p, 1, "%20");
    return get("/api/v1/best?gpu=" + g + "&op=gemm&dtype=" + dtype + "&shape=" + k_shape + extra);
  }

  static const json::object* ranked(const JsonReply& r, const std::string& instance) {
    for (const auto& x : r.body.at("ranking").as_array())
      if (x.at("instance").as_string() == instance) return &x.as_object();
    return nullptr;
  }

  std::string m_builder, m_gpu;
};

TEST_F(BestAnswerTest, TheNewestCommitsFiguresAnswerAndTheAnswerSaysWhereFrom) {
  const std::string c1 = commit_sha(1), c2 = commit_sha(2);
  validate(c1, 1'700'000'000'000,
           json::array{gemm_result("gemm.wgmma_tma.a", 100.0, "570.0"), gemm_result("gemm.mma_sync.e", 120.0, "570.0"),
                       gemm_result("gemm.simt.c", 400.0, "570.0")});
  auto first = best("NVIDIA H200", "bf16");
  ASSERT_EQ(first.status, 200) << first.raw;
  EXPECT_EQ(first.body.at("kind").as_string(), "measured");
  EXPECT_EQ(first.body.at("best").as_string(), "gemm.wgmma_tma.a");

  // c2 made wgmma_tma slower and broke simt: the answer follows c2, not the fastest ever.
  validate(c2, 1'700'000'100'000,
           json::array{gemm_result("gemm.wgmma_tma.a", 130.0, "580.1"), gemm_result("gemm.mma_sync.e", 121.0, "580.1"),
                       gemm_result("gemm.simt.c", std::nullopt, "580.1", "failed")});
  auto now = best("NVIDIA H200", "bf16");
  ASSERT_EQ(now.status, 200) << now.raw;
  EXPECT_EQ(now.body.at("kind").as_string(), "measured");
  EXPECT_EQ(now.body.at("best").as_string(), "gemm.mma_sync.e") << now.raw;
  ASSERT_EQ(now.body.at("ranking").as_array().size(), 2u) << now.raw;
  const auto* wgmma = ranked(now, "gemm.wgmma_tma.a");
  ASSERT_NE(wgmma, nullptr);
  EXPECT_DOUBLE_EQ(wgmma->at("evidence").at("median_us").as_double(), 130.0);
  EXPECT_EQ(wgmma->at("evidence").at("commit").as_string(), c2);
  const auto& excluded = now.body.at("excluded").as_array();
  ASSERT_EQ(excluded.size(), 1u);
  EXPECT_EQ(excluded[0].at("instance").as_string(), "gemm.simt.c");
  EXPECT_NE(std::string(excluded[0].at("reason").as_string()).find("failed numerics"), std::string::npos);

  const auto& ev = now.body.at("evidence");
  EXPECT_EQ(ev.at("commit").as_string(), c2);
  EXPECT_EQ(ev.at("driver").as_string(), "580.1");
  EXPECT_EQ(ev.at("other_drivers"), (json::array{"570.0"}));
  EXPECT_EQ(ev.at("results").as_array().size(), 2u);
  EXPECT_EQ(ev.at("samples").as_int64(), 200);
  EXPECT_TRUE(ev.at("measured").is_string());
  bool driver_note = false;
  for (const auto& n : now.body.at("notes").as_array())
    driver_note = driver_note || std::string(n.as_string()).find("570.0") != std::string::npos;
  EXPECT_TRUE(driver_note) << now.raw;

  // A B200 before any sm_100a build: the planner's candidates (no wgmma), ranked by the
  // H200's ratio to cuBLAS; simt failed there on c2, tcgen05 was never measured.
  auto b200 = best("NVIDIA B200", "bf16", "&arch=10.0");
  ASSERT_EQ(b200.status, 200) << b200.raw;
  EXPECT_EQ(b200.body.at("kind").as_string(), "provisional");
  EXPECT_EQ(b200.body.at("best").as_string(), "gemm.mma_sync.e");
  EXPECT_EQ(b200.body.at("ranked_by").as_string(), "ratio_to_baseline");
  EXPECT_EQ(b200.body.at("query").at("target").as_string(), "sm_100a");
  EXPECT_EQ(ranked(b200, "gemm.wgmma_tma.a"), nullptr) << "a Hopper-only instance is never offered to sm_100a";
  const auto* tc = ranked(b200, "gemm.tcgen05.d");
  ASSERT_NE(tc, nullptr);
  EXPECT_FALSE(tc->at("ranked").as_bool());
  EXPECT_NE(std::string(b200.body.at("reason").as_string()).find("vendor baseline"), std::string::npos);
  EXPECT_NE(std::string(b200.body.at("candidates_from").as_string()).find("apply to sm_100a"), std::string::npos);

  // fp32 on the B200: only simt runs it, and nothing of fp32 was measured anywhere.
  auto fp32 = best("NVIDIA B200", "fp32", "&arch=10.0");
  ASSERT_EQ(fp32.status, 200) << fp32.raw;
  EXPECT_EQ(fp32.body.at("kind").as_string(), "unranked");
  EXPECT_TRUE(fp32.body.at("best").is_null());
  ASSERT_EQ(fp32.body.at("ranking").as_array().size(), 1u);
  EXPECT_EQ(fp32.body.at("ranking").as_array()[0].at("instance").as_string(), "gemm.simt.c");
}

TEST_F(BestAnswerTest, AReMeasureOnTheSameCommitReplacesItsFirstFigure) {
  const std::string c1 = commit_sha(1), c2 = commit_sha(2);
  validate(
      c1, 1'700'000'000'000,
      json::array{gemm_result("gemm.wgmma_tma.a", 100.0, "580.1"), gemm_result("gemm.mma_sync.e", 120.0, "580.1")});
  validate(
      c2, 1'700'000'100'000,
      json::array{gemm_result("gemm.wgmma_tma.a", 130.0, "580.1"), gemm_result("gemm.mma_sync.e", 121.0, "580.1")});
  EXPECT_EQ(best("NVIDIA H200", "bf16").body.at("best").as_string(), "gemm.mma_sync.e");
  // The suspected slowdown is measured again on c2 and does not hold.
  validate(c2, 1'700'000'100'000, json::array{gemm_result("gemm.wgmma_tma.a", 118.0, "580.1")});
  auto again = best("NVIDIA H200", "bf16");
  ASSERT_EQ(again.status, 200) << again.raw;
  EXPECT_EQ(again.body.at("best").as_string(), "gemm.wgmma_tma.a") << again.raw;
  const auto& e = again.body.at("ranking").as_array()[0].at("evidence");
  EXPECT_DOUBLE_EQ(e.at("median_us").as_double(), 118.0);
  EXPECT_EQ(e.at("commit").as_string(), c2);
  EXPECT_EQ(e.at("runs").as_int64(), 2);
}

// A host of several GPUs times its cases on each: an answer ranking figures from two GPUs
// of the model says which GPU timed how many at what SM clock, in the answer at the shape
// and in one moved from it, and each figure's evidence names its GPU and clock.
TEST_F(BestAnswerTest, FiguresFromTwoGpusOfTheModelAreNamedWithTheirClocks) {
  auto on = [](json::object r, const char* uuid, double mhz) {
    r["gpu_uuid"] = uuid;
    r["sm_clock_mhz"] = mhz;
    return r;
  };
  validate(commit_sha(1), 1'700'000'000'000,
           json::array{on(gemm_result("gemm.wgmma_tma.a", 100.0, "580.1"), "GPU-aaaa", 1980),
                       on(gemm_result("gemm.mma_sync.e", 120.0, "580.1"), "GPU-bbbb", 1755)});
  const std::string note =
      "the ranked figures were measured on 2 GPUs of NVIDIA H200: GPU-aaaa (1 figure, SM clock 1980 MHz), GPU-bbbb "
      "(1 figure, SM clock 1755 MHz); GPUs of one model can differ beyond a figure's noise, so instances timed on "
      "different GPUs compare less surely than on one (GET /api/v1/gpus/agreement, kport gpus --gpu MODEL: whether "
      "they agree)";
  for (const std::string& shape : {k_shape, std::string("m=4096,n=4096,k=4000")}) {
    auto r = get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=" + shape);
    ASSERT_EQ(r.status, 200) << r.raw;
    bool said = false;
    for (const auto& n : r.body.at("notes").as_array()) said = said || n.as_string() == note;
    EXPECT_TRUE(said) << shape << ": " << r.raw;
    const auto& e = r.body.at("ranking").as_array()[0].at("evidence");
    EXPECT_EQ(e.at("gpu_uuid").as_string(), "GPU-aaaa") << r.raw;
    EXPECT_DOUBLE_EQ(e.at("sm_clock_mhz").to_number<double>(), 1980.0) << r.raw;
  }
}

// The same cases timed at one commit on two GPUs of the model: GET /api/v1/gpus/agreement
// pairs them and says whether the GPUs agree within the noise (compute-bound 1 %), with
// their clocks; a question without a GPU model is refused.
TEST_F(BestAnswerTest, TheGpusOfAModelAreJudgedOnTheCasesBothTimed) {
  auto on = [](json::object r, const char* uuid, double mhz) {
    r["gpu_uuid"] = uuid;
    r["sm_clock_mhz"] = mhz;
    return r;
  };
  const std::string sha = commit_sha(3);
  validate(sha, 1'700'000'000'000,
           json::array{on(gemm_result("gemm.wgmma_tma.a", 100.0, "580.1"), "GPU-aaaa", 1980),
                       on(gemm_result("gemm.mma_sync.e", 120.0, "580.1"), "GPU-aaaa", 1980)});
  validate(sha, 1'700'000'000'000,
           json::array{on(gemm_result("gemm.wgmma_tma.a", 108.0, "580.1"), "GPU-bbbb", 1830),
                       on(gemm_result("gemm.mma_sync.e", 129.6, "580.1"), "GPU-bbbb", 1830),
                       on(gemm_result("gemm.simt.c", 900.0, "580.1"), "GPU-bbbb", 1830)});
  auto r = get("/api/v1/gpus/agreement?gpu=NVIDIA%20H200");
  ASSERT_EQ(r.status, 200) << r.raw;
  const auto& items = r.body.at("items").as_array();
  ASSERT_EQ(items.size(), 1u) << r.raw;
  const auto& pair = items[0].as_object();
  EXPECT_EQ(pair.at("gpus").as_array()[0].as_string(), "GPU-aaaa");
  EXPECT_EQ(pair.at("cases").as_int64(), 2) << "simt was timed on one GPU only";
  EXPECT_FALSE(pair.at("agree").as_bool());
  EXPECT_NEAR(pair.at("median_ratio").to_number<double>(), 1.08, 1e-9);
  EXPECT_DOUBLE_EQ(pair.at("sm_clock_mhz").as_array()[1].to_number<double>(), 1830.0);
  EXPECT_EQ(pair.at("bounds").as_array()[0].at("bound").as_string(), "compute");
  EXPECT_NE(std::string(pair.at("summary").as_string()).find("GPU-aaaa and GPU-bbbb differ: 2 cases"),
            std::string::npos)
      << r.raw;
  auto none = get("/api/v1/gpus/agreement?gpu=NVIDIA%20B200");
  ASSERT_EQ(none.status, 200) << none.raw;
  EXPECT_TRUE(none.body.at("items").as_array().empty());
  auto bad = get("/api/v1/gpus/agreement");
  EXPECT_EQ(bad.status, 400) << bad.raw;
  EXPECT_EQ(bad.body.at("error").at("code").as_string(), "invalid_argument") << bad.raw;
}

TEST_F(BestAnswerTest, AnUnstableFigureWithinNoiseOfAStableOneDoesNotWin) {
  auto shaky = gemm_result("gemm.wgmma_tma.a", 100.0, "580.1");
  shaky["unstable"] = true;
  shaky["stddev_us"] = 1.0;
  auto steady = gemm_result("gemm.mma_sync.e", 100.5, "580.1");
  steady["stddev_us"] = 1.0;
  validate(commit_sha(1), 1'700'000'000'000, json::array{shaky, steady});
  auto r = best("NVIDIA H200", "bf16");
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body.at("best").as_string(), "gemm.mma_sync.e") << r.raw;
  const auto& second = r.body.at("ranking").as_array()[1];
  EXPECT_EQ(second.at("instance").as_string(), "gemm.wgmma_tma.a");
  EXPECT_TRUE(second.at("evidence").at("unstable").as_bool());
  ASSERT_FALSE(r.body.at("notes").as_array().empty());
  EXPECT_NE(std::string(r.body.at("notes").as_array()[0].as_string()).find("unstable"), std::string::npos) << r.raw;
}

TEST_F(BestAnswerTest, QuestionsWithoutAnAnswerAreRefusedClearly) {
  validate(commit_sha(1), 1'700'000'000'000, json::array{gemm_result("gemm.mma_sync.e", 120.0, "580.1")});
  auto fp64 = best("NVIDIA B200", "fp64", "&arch=10.0");
  EXPECT_EQ(fp64.status, 422) << fp64.raw;
  EXPECT_EQ(fp64.body.at("error").at("code").as_string(), "unprocessable");
  EXPECT_NE(std::string(fp64.body.at("error").at("message").as_string()).find("gemm runs bf16, fp16, fp32"),
            std::string::npos)
      << fp64.raw;
  // An unseen Hopper GPU asking for fp32: of what built for sm_90a only simt runs fp32,
  // and no fp32 figure exists anywhere, so the answer lists it, unranked.
  auto h100 = best("NVIDIA H100", "fp32", "&arch=9.0");
  ASSERT_EQ(h100.status, 200) << h100.raw;
  EXPECT_EQ(h100.body.at("kind").as_string(), "unranked");
  EXPECT_EQ(h100.body.at("candidates_from").as_string(), "build for sm_90a");
  auto unknown_target = best("NVIDIA B300", "bf16", "&target=sm_103a");
  EXPECT_EQ(unknown_target.status, 404) << unknown_target.raw;
  EXPECT_NE(std::string(unknown_target.body.at("error").at("message").as_string()).find("sm_103a"), std::string::npos);
  auto no_arch = best("Mystery", "bf16");
  EXPECT_EQ(no_arch.status, 404) << no_arch.raw;
}

TEST_F(BestAnswerTest, AShapeTheFamilyCannotTakeIsTheAskersErrorAndADefaultIsFilledIn) {
  validate(commit_sha(1), 1'700'000'000'000, json::array{gemm_result("gemm.mma_sync.e", 120.0, "580.1")});
  auto ask = [&](const std::string& op, const std::string& shape) {
    return get("/api/v1/best?gpu=NVIDIA%20H200&op=" + op + "&dtype=bf16&shape=" + shape);
  };
  // Each was answered "nothing comparable was measured", as if the shape were a question.
  const std::pair<std::string, std::string> wrong[] = {
      {"m=4096,n=4096", "shape has no 'k'"},
      {"m=4096,n=4096,k=4096,q=1", "shape key 'q' is not a dimension of gemm"},
      {"m=0,n=4096,k=4096", "shape value 0 of 'm' is out of range"},
  };
  for (const auto& [shape, says] : wrong) {
    auto r = ask("gemm", shape);
    EXPECT_EQ(r.status, 400) << shape << ": " << r.raw;
    ASSERT_TRUE(r.body.is_object() && r.body.as_object().contains("error")) << r.raw;
    EXPECT_EQ(r.body.at("error").at("code").as_string(), "invalid_argument") << r.raw;
    const std::string message(r.body.at("error").at("message").as_string());
    EXPECT_NE(message.find(says), std::string::npos) << message;
    EXPECT_NE(message.find(shape), std::string::npos) << message;
  }
  auto causal = ask("attention", "b=1,h=8,l=1024,d=128,causal=2");
  EXPECT_EQ(causal.status, 400) << causal.raw;
  // A shape the family's requirements rule out for every instance names none: gemm_fp8's
  // block scales cover whole 128-wide K blocks (kernels/kport.json, `requires`).
  auto fp8 = [&](const std::string& shape) {
    return get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm_fp8&dtype=e4m3&shape=" + shape);
  };
  auto block = fp8("m=64,n=7168,k=400,scale=2");
  EXPECT_EQ(block.status, 422) << block.raw;
  ASSERT_TRUE(block.body.is_object() && block.body.as_object().contains("error")) << block.raw;
  EXPECT_EQ(block.body.at("error").at("code").as_string(), "unprocessable");
  EXPECT_NE(std::string(block.body.at("error").at("message").as_string())
                .find("no gemm_fp8 instance runs m=64,n=7168,k=400,scale=2: k=400 is not a multiple of 128"),
            std::string::npos)
      << block.raw;
  EXPECT_EQ(fp8("m=64,n=7168,k=100").status, 422);
  // UE8M0 block scales (scale=3) have the same blocks.
  auto ue8m0 = fp8("m=64,n=7168,k=400,scale=3");
  EXPECT_EQ(ue8m0.status, 422) << ue8m0.raw;
  // The same K with per-tensor scales is a question (no gemm_fp8 instance is known here).
  EXPECT_NE(fp8("m=64,n=7168,k=400,scale=0").status, 422);
  auto request =
      post("/api/v1/best/requests",
           json::object{
               {"gpu", "NVIDIA H200"}, {"op", "gemm_fp8"}, {"dtype", "e4m3"}, {"shape", "m=64,n=7168,k=400,scale=2"}},
           k_admin);
  EXPECT_EQ(request.status, 422) << request.raw;
  // A dimension with a default may be left out: the question is the family's whole shape.
  json::object attention{{"name", "attention.simt.f"},
                         {"family", "attention"},
                         {"variant", "simt"},
                         {"features", json::array{"simt"}},
                         {"dtypes", json::array{"bf16"}}};
  ASSERT_EQ(put("/api/v1/kernels", json::object{{"instances", json::array{attention}}}, k_admin).status, 200);
  auto whole = ask("attention", "b=1,h=8,l=1024,d=128");
  ASSERT_EQ(whole.status, 200) << whole.raw;
  EXPECT_EQ(whole.body.at("query").at("shape").as_string(), "b=1,causal=0,d=128,h=8,l=1024") << whole.raw;
}

TEST_F(BestAnswerTest, TheOpenApiDocumentDescribesTheAnswerKindsAndEvidence) {
  auto doc = get("/api/v1/openapi.json");
  ASSERT_EQ(doc.status, 200);
  const auto& ok = doc.body.at("paths").at("/api/v1/best").at("get").at("responses").at("200");
  EXPECT_EQ(ok.at("content").at("application/json").at("schema").at("$ref").as_string(),
            "#/components/schemas/BestAnswer");
  const auto& answer = doc.body.at("components").at("schemas").at("BestAnswer").at("properties");
  EXPECT_EQ(answer.at("kind").at("enum"), (json::array{"measured", "provisional", "unranked"}));
  for (const char* field : {"evidence", "excluded", "notes", "ranked_by", "candidates_from"})
    EXPECT_TRUE(answer.as_object().contains(field)) << field;
  const auto& evidence = doc.body.at("components").at("schemas").at("BestEvidence").at("properties");
  for (const char* field : {"driver", "unstable", "ratio", "runs", "commit"})
    EXPECT_TRUE(evidence.as_object().contains(field)) << field;
}

}  // namespace kport::testing
