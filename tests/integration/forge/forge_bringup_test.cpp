// Bring-up milestones and regressions told to the notification webhooks, and the delivery
// queue's retention: through a real coordinator, real runners' API calls and the fake
// webhook receiver.
#include <gtest/gtest.h>

#include <algorithm>

#include "forge_fixture.h"
#include "kport/common/crypto.h"

namespace kport::testing {
namespace {

using boost::json::object;

class BringupTest : public ForgeTest {
 protected:
  std::vector<ForgeRequest> hooks_of(const std::string& event, std::size_t n,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      std::vector<ForgeRequest> out;
      for (auto& r : to("/hooks/kport"))
        if (r.header("X-Kport-Event") == event) out.push_back(r);
      if (out.size() >= n || std::chrono::steady_clock::now() >= end) return out;
      forge.wait_for(forge.requests().size() + 1, std::chrono::milliseconds(200));
    }
  }
  static boost::json::array failing_result() {
    auto rows = passing_result();
    auto& r = rows[0].as_object();
    r["status"] = "failed";
    r["max_rel_err"] = 0.3;
    r.erase("median_us");
    r.erase("stddev_us");
    r.erase("samples");
    return rows;
  }
};

TEST_F(BringupTest, ATargetsFirstStagesAreToldOnceAndADropIsARegression) {
  const std::string builder = register_runner("builder", "build");
  const std::string gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  const std::string a = std::string(39, 'a') + "1", b = std::string(39, 'a') + "2", c = std::string(39, 'a') + "3";
  push(a);
  finish(take(builder), builder, "records", ok_build());
  EXPECT_TRUE(hooks_of("bringup.milestone", 1, std::chrono::milliseconds(0)).empty())
      << "built but not checked: nothing told yet";
  finish(take(gpu), gpu, "results", passing_result());
  auto told = hooks_of("bringup.milestone", 1);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].header("X-Kport-Signature-256"),
            "sha256=" + crypto::to_hex(crypto::hmac_sha256(k_notify_secret, told[0].body)));
  auto body = told[0].json();
  EXPECT_EQ(body.at("target").as_string(), "sm_90a");
  EXPECT_EQ(body.at("commit").as_string(), a);
  EXPECT_EQ(body.at("repo").as_string(), "org/kernels") << "the library whose board it is";
  EXPECT_EQ(body.at("url").as_string(), k_public_url + "/#/target/sm_90a?repo=org%2Fkernels");
  EXPECT_EQ(body.at("progress").at("numerics_passed").as_int64(), 1);
  std::vector<std::string> reached;
  for (const auto& m : body.at("milestones").as_array())
    reached.push_back(std::string(m.at("stage").as_string()) + "/" + std::string(m.at("level").as_string()));
  for (const char* want :
       {"builds/first", "builds/all", "numerics_passed/first", "numerics_passed/all", "measured/first", "measured/all"})
    EXPECT_NE(std::find(reached.begin(), reached.end(), want), reached.end()) << want << " in " << told[0].body;

  // The same stages again at the next commit: nothing new to tell.
  push(b, a);
  finish(take(builder), builder, "records", ok_build());
  finish(take(gpu), gpu, "results", passing_result());
  ASSERT_GE(wait_to("/hooks/kport", 3).size(), 3u);  // the two verdicts, the milestones
  // A commit whose check fails: numerics_passed drops from 1 to 0.
  push(c, b);
  finish(take(builder), builder, "records", ok_build());
  finish(take(gpu), gpu, "results", failing_result());
  auto drops = hooks_of("bringup.regression", 1);
  ASSERT_EQ(drops.size(), 1u);
  auto drop = drops[0].json();
  EXPECT_EQ(drop.at("commit").as_string(), c);
  bool numerics = false;
  for (const auto& r : drop.at("regressions").as_array())
    if (r.at("stage") == "numerics_passed") numerics = r.at("before") == 1 && r.at("after") == 0;
  EXPECT_TRUE(numerics) << drops[0].body;
  // A milestone told again would go out with the drop, before it (one subject, in order).
  EXPECT_EQ(hooks_of("bringup.milestone", 2, std::chrono::milliseconds(0)).size(), 1u) << "each milestone is told once";
}

// A second library building the same target has its own board and its own notices: its
// first builds are its milestones, and its failing check is not a drop from the first
// library's counts (which one mark per target read it as).
TEST_F(BringupTest, TwoLibrariesOfOneTargetAreToldApart) {
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "org/norms"}, {"url", "/srv/git/norms.git"}}, k_admin).status,
            201);
  const std::string builder = register_runner("builder", "build");
  const std::string gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  const std::string a = std::string(39, 'a') + "1", x = std::string(39, 'b') + "1";
  push(a);
  finish(take(builder), builder, "records", ok_build());
  finish(take(gpu), gpu, "results", passing_result());
  ASSERT_EQ(hooks_of("bringup.milestone", 1).size(), 1u);
  auto r = github(push_body("org/norms", "refs/heads/main", std::string(40, '0'), x), "delivery-" + x);
  ASSERT_EQ(r.status, 201) << r.raw;
  finish(take(builder), builder, "records",
         boost::json::array{object{{"family", "norm"}, {"variant", "rows"}, {"status", "ok"}}});
  auto rows = failing_result();
  auto& row = rows[0].as_object();
  row["family"] = "norm";
  row["variant"] = "rows";
  row["instance"] = "norm.rows.w64";
  row["shape"] = "rows=4096,cols=8192";
  finish(take(gpu), gpu, "results", rows);
  auto told = hooks_of("bringup.milestone", 2);
  ASSERT_EQ(told.size(), 2u);
  auto body = told[1].json();
  EXPECT_EQ(body.at("repo").as_string(), "org/norms") << told[1].body;
  EXPECT_EQ(body.at("commit").as_string(), x);
  EXPECT_EQ(body.at("url").as_string(), k_public_url + "/#/target/sm_90a?repo=org%2Fnorms");
  std::vector<std::string> reached;
  for (const auto& m : body.at("milestones").as_array())
    reached.push_back(std::string(m.at("stage").as_string()) + "/" + std::string(m.at("level").as_string()));
  EXPECT_NE(std::find(reached.begin(), reached.end(), "builds/first"), reached.end()) << told[1].body;
  EXPECT_EQ(std::find(reached.begin(), reached.end(), "numerics_passed/first"), reached.end()) << told[1].body;
  EXPECT_TRUE(hooks_of("bringup.regression", 1, std::chrono::milliseconds(500)).empty())
      << "org/norms's failing check is not a drop of org/kernels's counts";
}

class RetentionTest : public ForgeTest {
 public:
  RetentionTest() {
    for (std::string a : {"--delivery-retention-ms", "0", "--delivery-keep", "1"}) extra_args.push_back(a);
  }
};

TEST_F(RetentionTest, DeliveredRowsArePrunedAndTheAttemptCounterStays) {
  ASSERT_EQ(connect("gitea", "status").status, 200);
  const std::string builder = register_runner("builder", "build");
  push(sha);
  ASSERT_EQ(wait_to("/statuses/", 1).size(), 1u);
  fail(take(builder), builder);  // the build fails: the pipeline completes
  ASSERT_GE(wait_to("/statuses/", 2).size(), 2u);
  ASSERT_GE(wait_to("/hooks/kport", 1).size(), 1u);  // the verdict, told last
  // Every delivered row, and none pending or failed, is pruned once delivered: the
  // statuses (pending, failure) and the webhooks (verdict, regression).
  std::string m;
  const auto count = [&](const std::string& name) {
    const auto at = m.find("\n" + name + " ");  // the sample, not its # HELP line
    return at == std::string::npos ? -1 : std::stoll(m.substr(at + name.size() + 2));
  };
  for (int i = 0; i < 100; ++i) {  // the sender's gauges follow its rounds: polled
    m = metrics();
    if (count("kport_deliveries_pruned_total") >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(count("kport_deliveries_pruned_total"), 4) << m;
  EXPECT_NE(m.find("kport_deliveries{state=\"delivered\"} 0"), std::string::npos) << m;
  EXPECT_GE(count("kport_delivery_attempts_total"), 4) << "the attempts of pruned rows still count";
  auto left = get("/api/v1/deliveries?state=delivered");
  EXPECT_EQ(left.body.at("items").as_array().size(), 0u) << left.raw;
}

}  // namespace
}  // namespace kport::testing

namespace kport::testing {
namespace {

TEST_F(ForgeTest, AResourceRegressionIsAnnotatedOnItsKernelSourceLine) {
  ASSERT_EQ(connect("github", "check").status, 200);
  const std::string builder = register_runner("builder", "build");
  const std::string gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  const std::string a = std::string(39, 'f') + "1", b = std::string(39, 'f') + "2";
  auto with_source = [](std::int64_t spill) {
    auto rows = ok_build();
    auto& r = rows[0].as_object();
    r["spill_stores_bytes"] = spill;
    r["spill_loads_bytes"] = spill;
    r["source_path"] = "kernels/gemm/simt/gemm_simt.cu";
    r["source_line"] = 42;
    return rows;
  };
  push(a);
  finish(take(builder), builder, "records", with_source(0));
  finish(take(gpu), gpu, "results", passing_result());
  const auto completed = [](const std::string& commit) {
    return [commit](const boost::json::array& items) {
      return std::any_of(items.begin(), items.end(), [&](const auto& d) {
        return d.at("event") == "pipeline.completed" && d.at("commit").as_string() == commit &&
               d.at("state") == "delivered";
      });
    };
  };
  ASSERT_TRUE(completed(a)(wait_deliveries("kind=check_run", completed(a))));
  push(b, a);
  finish(take(builder), builder, "records", with_source(256));  // spills appear
  finish(take(gpu), gpu, "results", passing_result());
  ASSERT_TRUE(completed(b)(wait_deliveries("kind=check_run", completed(b))));
  auto runs = to("/check-runs");
  ASSERT_FALSE(runs.empty());
  const auto& last = runs.back();  // b's completion, the last state sent
  auto done = last.json();
  ASSERT_EQ(done.at("status").as_string(), "completed") << last.body;
  EXPECT_EQ(done.at("conclusion").as_string(), "failure") << last.body;
  const auto* notes = done.at("output").as_object().if_contains("annotations");
  ASSERT_TRUE(notes && notes->is_array()) << last.body;
  ASSERT_EQ(notes->as_array().size(), 1u);
  const auto& n = notes->as_array()[0].as_object();
  EXPECT_EQ(n.at("path").as_string(), "kernels/gemm/simt/gemm_simt.cu");
  EXPECT_EQ(n.at("start_line").as_int64(), 42);
  EXPECT_EQ(n.at("end_line").as_int64(), 42);
  EXPECT_EQ(n.at("annotation_level").as_string(), "failure");
  EXPECT_NE(std::string(n.at("title").as_string()).find("gemm.simt on sm_90a"), std::string::npos) << last.body;
  EXPECT_FALSE(std::string(n.at("message").as_string()).empty());
  // The stored record answers where its kernel is.
  auto records = get("/api/v1/builds?commit=" + b);
  EXPECT_EQ(records.body.at("items").at(0).at("source_line").as_int64(), 42) << records.raw;
}

}  // namespace
}  // namespace kport::testing
