// kport-dispatch agrees with GET /api/v1/best: a snapshot downloaded over real HTTP,
// loaded by the library, and 250 random shapes per family (grid shapes, shapes between
// them, log-space midpoints that tie, shapes nothing comparable was measured for),
// each answered by both.
#include <cmath>
#include <iostream>
#include <map>

#include "dispatch_fixture.h"
#include "kport/dispatch/dispatch.h"

namespace kport::testing {
namespace json = boost::json;
using dispatch::Snapshot;
using dispatch::Status;

namespace {

std::string random_query(const DispatchTest::Family& f, std::mt19937_64& rng, int i) {
  std::string q;
  for (const auto& [key, values] : f.dims.front()) {
    std::int64_t v = 0;
    int mode = i % 8;
    if (key == "d" || key == "causal") {
      // Mostly a measured value (these must match exactly); sometimes one never measured.
      v = (mode == 7) ? (key == "d" ? 96 : 2) : values[rng() % values.size()];
    } else if (mode <= 1) {
      v = values[rng() % values.size()];  // a grid value
    } else if (mode == 2 && values.size() > 1) {
      std::size_t at = rng() % (values.size() - 1);  // the geometric midpoint, when it is an integer
      double mid = std::sqrt(double(values[at]) * double(values[at + 1]));
      v = std::llround(mid);
    } else {
      double lo = std::log(std::max(1, values.front() / 2)), hi = std::log(double(values.back()) * 2);
      v = std::llround(std::exp(std::uniform_real_distribution<double>(lo, hi)(rng)));
    }
    if (i % 16 == 15 && q.empty()) v = 0;  // a zero-sized dimension matches only itself
    q += (q.empty() ? "" : ",") + key + "=" + std::to_string(v);
  }
  return q;
}

}  // namespace

TEST_F(DispatchTest, DispatchAgreesWithTheBestApiOnRandomShapesOfEveryFamily) {
  seed();
  auto snap_reply = snapshot();
  ASSERT_EQ(snap_reply.status, 200) << snap_reply.raw;
  auto snap = Snapshot::parse(snap_reply.raw);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->gpu_model(), "NVIDIA H200");
  EXPECT_EQ(snap->arch(), "9.0");
  ASSERT_FALSE(snap->commits().empty());
  EXPECT_EQ(snap->commits().front(), commit_sha(2));
  EXPECT_EQ(snap->drivers().front(), "590.2");

  std::mt19937_64 rng(42);
  for (const auto& f : families()) {
    std::map<std::string, int> kinds;
    for (int i = 0; i < 250; ++i) {
      // Now and then a dtype nothing was measured in (fp8): the API has only candidates.
      const std::string dtype = i % 32 == 31 ? "fp8" : f.dtypes[static_cast<std::size_t>(i) % f.dtypes.size()];
      const std::string q = random_query(f, rng, i);
      auto api = get("/api/v1/best?gpu=NVIDIA%20H200&op=" + f.op + "&dtype=" + dtype + "&shape=" + q);
      auto mine = snap->lookup(f.op, dtype, q);
      const std::string where = f.op + " " + dtype + " " + q + ": " + api.raw.substr(0, 600);
      std::string kind = api.status == 200 ? std::string(api.body.at("kind").as_string()) : "error";
      bool measured_path = api.status == 200 && !api.body.at("matched_shape").is_null() && kind != "provisional";
      if (kind == "measured") {
        ASSERT_TRUE(mine.found()) << where << " dispatch: " << dispatch::status_name(mine.status);
        EXPECT_EQ(std::string(mine.instance), std::string(api.body.at("best").as_string())) << where;
        EXPECT_EQ(std::string(mine.matched_shape), std::string(api.body.at("matched_shape").as_string())) << where;
        EXPECT_EQ(mine.status == Status::exact, api.body.at("exact_shape").as_bool()) << where;
        EXPECT_EQ(mine.tie, !api.body.at("tied").as_array().empty()) << where;
        const auto& best_ev = api.body.at("ranking").at(0).at("evidence");
        EXPECT_EQ(mine.result_id, best_ev.at("result").as_int64()) << where;
        EXPECT_DOUBLE_EQ(mine.median_us, best_ev.at("median_us").to_number<double>()) << where;
        const auto& best_entry = api.body.at("ranking").at(0).as_object();
        EXPECT_EQ(mine.estimated, best_entry.contains("estimate_us")) << where;
        if (mine.estimated) {
          EXPECT_DOUBLE_EQ(mine.estimate_us, best_entry.at("estimate_us").to_number<double>()) << where;
          // Answers the waves changed: the winner is not the fastest figure where it was measured.
          if (f.op == "gemm" || f.op == "attention") {
            EXPECT_EQ(api.body.at("confidence").at("method").as_string(), "wave_model") << where;
            double fastest_there = best_ev.at("median_us").to_number<double>();
            for (const auto& r : api.body.at("ranking").as_array())
              if (r.at("evidence").is_object())
                fastest_there = std::min(fastest_there, r.at("evidence").at("median_us").to_number<double>());
            if (fastest_there < best_ev.at("median_us").to_number<double>()) ++kinds["moved"];
          }
        }
        ++kinds[mine.status == Status::exact ? "exact" : "nearest"];
      } else if (measured_path) {  // unranked from measurements: every instance failed there
        EXPECT_EQ(kind, "unranked") << where;
        EXPECT_EQ(mine.status, Status::no_best) << where;
        EXPECT_EQ(std::string(mine.matched_shape), std::string(api.body.at("matched_shape").as_string())) << where;
        ++kinds["no_best"];
      } else {  // provisional, unranked without measurements, or an error: nothing measured to go by
        EXPECT_EQ(mine.status, Status::unknown)
            << where << " dispatch: " << dispatch::status_name(mine.status) << " " << mine.instance;
        ++kinds["unknown"];
      }
    }
    std::cout << f.op << ": " << kinds["exact"] << " exact, " << kinds["nearest"] << " nearest (" << kinds["moved"]
              << " moved by waves to another winner), " << kinds["no_best"] << " no_best, " << kinds["unknown"]
              << " unknown, all as /api/v1/best answered\n";
    if (f.op == "gemm" || f.op == "attention") {
      EXPECT_GT(kinds["moved"], 0) << f.op;
    }
    // Each family exercised exact, nearest and unknown answers (and softmax, no_best).
    EXPECT_GT(kinds["exact"], 10) << f.op;
    EXPECT_GT(kinds["nearest"], f.op == "softmax" ? 50 : 100) << f.op;
    EXPECT_GT(kinds["unknown"], f.op == "attention" ? 30 : 10) << f.op;
    if (f.op == "softmax") {
      EXPECT_GT(kinds["no_best"], 0) << f.op;
    }
  }
}

TEST_F(DispatchTest, ASnapshotOfAnUnknownGpuIsA404AndAGpuIsRequired) {
  seed();
  auto unknown = snapshot("NVIDIA%20B300");
  EXPECT_EQ(unknown.status, 404) << unknown.raw;
  EXPECT_EQ(unknown.body.at("error").at("code").as_string(), "not_found");
  EXPECT_NE(std::string(unknown.body.at("error").at("message").as_string()).find("NVIDIA B300"), std::string::npos);
  auto none = get("/api/v1/dispatch/snapshot");
  EXPECT_EQ(none.status, 400) << none.raw;
  EXPECT_EQ(none.body.at("error").at("code").as_string(), "invalid_argument");
  auto doc = get("/api/v1/openapi.json");
  ASSERT_EQ(doc.status, 200);
  const auto& op = doc.body.at("paths").at("/api/v1/dispatch/snapshot").at("get");
  EXPECT_TRUE(op.at("responses").as_object().contains("404"));
  EXPECT_TRUE(doc.body.at("components").at("schemas").as_object().contains("DispatchSnapshot"));
}

TEST_F(DispatchTest, AKnownGpuWithoutResultsIsAnEmptySnapshotThatKnowsNothing) {
  // The GPU runner's registration made the H200 known; nothing was measured yet.
  auto reply = snapshot();
  ASSERT_EQ(reply.status, 200) << reply.raw;
  auto snap = Snapshot::parse(reply.raw);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_TRUE(snap->tables().empty());
  EXPECT_TRUE(snap->commits().empty());
  EXPECT_EQ(snap->lookup("gemm", "bf16", "m=1,n=1,k=1").status, Status::unknown);
}

}  // namespace kport::testing
