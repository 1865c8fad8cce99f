// A pushed commit reported where it came from, through the delivery queue: GitHub check
// runs (queued -> in_progress -> completed), Gitea and GitLab commit statuses, signed
// notification webhooks; the exact requests each forge documents.
#include <gtest/gtest.h>

#include <algorithm>

#include "forge_fixture.h"
#include "kport/common/crypto.h"

namespace kport::testing {
namespace {

using boost::json::object;

TEST_F(ForgeTest, GitHubCheckRunFollowsAPassingPipelineAndWebhooksAreSigned) {
  auto c = connect("github", "check");
  ASSERT_EQ(c.status, 200) << c.raw;
  EXPECT_EQ(c.raw.find(k_forge_token), std::string::npos) << c.raw;
  EXPECT_EQ(c.body.at("state").as_string(), "ok");
  const std::string builder = register_runner("builder", "build");
  const std::string gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  const std::string page = push(sha);

  auto created = wait_to("/check-runs", 1);
  ASSERT_EQ(created.size(), 1u);
  const auto& first = created[0];
  EXPECT_EQ(first.method, "POST");
  EXPECT_EQ(first.target, "/repos/org/kernels/check-runs");
  EXPECT_EQ(first.header("Authorization"), "Bearer " + k_forge_token);
  EXPECT_EQ(first.header("Accept"), "application/vnd.github+json");
  EXPECT_EQ(first.header("X-GitHub-Api-Version"), "2022-11-28");
  EXPECT_EQ(first.header("Content-Type"), "application/json");
  auto body = first.json();
  EXPECT_EQ(body.at("name").as_string(), "kport");
  EXPECT_EQ(body.at("head_sha").as_string(), sha);
  EXPECT_EQ(body.at("status").as_string(), "queued");
  EXPECT_EQ(body.at("details_url").as_string(), page);
  EXPECT_FALSE(body.contains("conclusion"));

  auto build = take(builder);
  auto started = wait_to("/check-runs", 2);
  ASSERT_EQ(started.size(), 2u);
  // The check run the POST created (the fake answered id 7001) is updated, not created again.
  EXPECT_EQ(started[1].method, "PATCH");
  EXPECT_EQ(started[1].target, "/repos/org/kernels/check-runs/7001");
  EXPECT_EQ(started[1].header("Authorization"), "Bearer " + k_forge_token);
  auto progress = started[1].json();
  EXPECT_EQ(progress.at("status").as_string(), "in_progress");
  EXPECT_TRUE(progress.contains("started_at"));
  EXPECT_FALSE(progress.contains("head_sha"));

  finish(build, builder, "records", ok_build());
  finish(take(gpu), gpu, "results", passing_result());
  auto done = wait_to("/check-runs", 3);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[2].method, "PATCH");
  EXPECT_EQ(done[2].target, "/repos/org/kernels/check-runs/7001");
  auto completed = done[2].json();
  EXPECT_EQ(completed.at("status").as_string(), "completed");
  EXPECT_EQ(completed.at("conclusion").as_string(), "success");
  EXPECT_TRUE(completed.contains("completed_at"));
  const auto& output = completed.at("output").as_object();
  EXPECT_EQ(output.at("title").as_string(), "kport: pass (1 builds, 1 results)");
  EXPECT_NE(std::string(output.at("summary").as_string()).find("`" + sha.substr(0, 12) + "`"), std::string::npos)
      << output;

  // The verdict webhook: signed over its exact body, with its event and delivery id. The
  // target's first bring-up milestones are told to the same URL (forge_bringup_test.cpp).
  auto hooks = wait_to("/hooks/kport", 2);
  ASSERT_EQ(hooks.size(), 2u);
  const auto is_verdict = [](const ForgeRequest& r) { return r.header("X-Kport-Event") == "verdict"; };
  ASSERT_EQ(std::count_if(hooks.begin(), hooks.end(), is_verdict), 1);
  const auto& hook = *std::find_if(hooks.begin(), hooks.end(), is_verdict);
  EXPECT_EQ(hook.method, "POST");
  EXPECT_EQ(hook.header("X-Kport-Event"), "verdict");
  EXPECT_EQ(hook.header("X-Kport-Signature-256"),
            "sha256=" + crypto::to_hex(crypto::hmac_sha256(k_notify_secret, hook.body)));
  auto payload = hook.json();
  EXPECT_EQ(payload.at("event").as_string(), "verdict");
  EXPECT_EQ(payload.at("conclusion").as_string(), "success");
  EXPECT_EQ(payload.at("pipeline").at("commit").as_string(), sha);
  EXPECT_EQ(payload.at("verdict").at("status").as_string(), "pass");

  auto all = wait_deliveries("limit=100", [](const boost::json::array& items) {
    return items.size() == 5 &&
           std::all_of(items.begin(), items.end(), [](const auto& d) { return d.at("state") == "delivered"; });
  });
  ASSERT_EQ(all.size(), 5u) << boost::json::serialize(all);
  const auto verdict = std::find_if(all.begin(), all.end(), [](const auto& d) { return d.at("event") == "verdict"; });
  ASSERT_NE(verdict, all.end());
  EXPECT_EQ(hook.header("X-Kport-Delivery"), std::to_string(verdict->at("id").as_int64()));
  EXPECT_EQ(verdict->at("kind").as_string(), "webhook");
  EXPECT_EQ(verdict->at("url").as_string(), forge.url("/…"));    // a webhook's path may be its secret
  EXPECT_EQ(all[4].at("event").as_string(), "pipeline.queued");  // newest first
  EXPECT_EQ(all[4].at("last_status").as_int64(), 201);
  const std::string listed = get("/api/v1/deliveries").raw + get("/api/v1/forges").raw;
  EXPECT_EQ(listed.find(k_forge_token), std::string::npos);
  const std::string m = metrics_with("kport_deliveries{state=\"delivered\"} 5");
  EXPECT_NE(m.find("kport_deliveries{state=\"delivered\"} 5"), std::string::npos) << m;
  EXPECT_NE(m.find("kport_forge_connections_broken 0"), std::string::npos) << m;
  EXPECT_EQ(m.find(k_forge_token), std::string::npos);
  EXPECT_EQ(proc->log().find(k_forge_token), std::string::npos);
}

TEST_F(ForgeTest, ASlowdownIsReportedOnlyOnceItsReMeasureConfirmsIt) {
  ASSERT_EQ(connect("github", "check").status, 200);
  const std::string builder = register_runner("builder", "build");
  const std::string gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  const std::string a = std::string(39, 'a') + "1", b = std::string(39, 'a') + "2";
  push(a);
  ASSERT_EQ(wait_to("/check-runs", 1).size(), 1u);
  auto build_a = take(builder);
  ASSERT_EQ(wait_to("/check-runs", 2).size(), 2u);
  finish(build_a, builder, "records", ok_build());
  finish(take(gpu), gpu, "results", passing_result(100.0));
  auto first = wait_to("/check-runs", 3);
  ASSERT_EQ(first.size(), 3u);
  ASSERT_EQ(first[2].json().at("conclusion").as_string(), "success");
  // Repeated (manual, unreported) pipelines of A give the series its A/A history, so a
  // slowdown can be judged rather than called insufficient data.
  for (double m : {100.3, 99.8, 100.2, 99.9}) {
    ASSERT_EQ(post("/api/v1/pipelines",
                   boost::json::object{{"commit", a},
                                       {"repo", "org/kernels"},
                                       {"ref", "refs/heads/main"},
                                       {"reason", "manual"},
                                       {"targets", boost::json::array{"sm_90a"}}},
                   k_admin)
                  .status,
              201);
    finish(take(builder), builder, "records", ok_build());
    finish(take(gpu), gpu, "results", passing_result(m));
  }
  ASSERT_EQ(to("/check-runs").size(), 3u) << "manual pipelines are not reported";

  // B is 30 % slower: its check ends the pipeline, and the re-measure it asks for is
  // queued into it right after. The report waits for it instead of calling it neutral.
  push(b, a);
  ASSERT_EQ(wait_to("/check-runs", 4).size(), 4u);
  auto build_b = take(builder);
  ASSERT_EQ(wait_to("/check-runs", 5).size(), 5u);
  finish(build_b, builder, "records", ok_build());
  finish(take(gpu), gpu, "results", passing_result(130.0));
  auto remeasure = take(gpu);
  ASSERT_FALSE(remeasure.first.empty()) << "a re-measure was queued";
  finish(remeasure, gpu, "results", paired_result(131.0, 100.1));
  auto runs = wait_to("/check-runs", 6);
  ASSERT_EQ(runs.size(), 6u);
  std::vector<std::string> completed;
  for (const auto& r : runs)
    if (r.json().contains("conclusion")) completed.push_back(std::string(r.json().at("conclusion").as_string()));
  EXPECT_EQ(completed, (std::vector<std::string>{"success", "failure"})) << "never a neutral in between";
  const auto output = runs[5].json().at("output").as_object();
  EXPECT_NE(std::string(output.at("title").as_string()).find("perf_regression"), std::string::npos) << output;
  const std::string summary(output.at("summary").as_string());
  EXPECT_NE(summary.find("median 99.90 us -> 131.00 us"), std::string::npos) << summary;
  EXPECT_NE(summary.find("Reproduce the perf_regression of `gemm.simt`"), std::string::npos) << summary;
}

TEST_F(ForgeTest, GiteaStatusesGoPendingThenFailureForAFailedBuild) {
  ASSERT_EQ(connect("gitea", "status").status, 200);
  const std::string builder = register_runner("builder", "build");
  const std::string page = push(sha);
  ASSERT_EQ(wait_to("/statuses/", 1).size(), 1u);
  auto build = take(builder);
  ASSERT_EQ(wait_to("/statuses/", 2).size(), 2u);
  fail(build, builder);
  auto statuses = wait_to("/statuses/", 3);
  ASSERT_EQ(statuses.size(), 3u);
  const std::vector<std::string> states{"pending", "pending", "failure"};
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    const auto& r = statuses[i];
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/api/v1/repos/org/kernels/statuses/" + sha);
    EXPECT_EQ(r.header("Authorization"), "token " + k_forge_token);
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    auto b = r.json();
    EXPECT_EQ(b.at("state").as_string(), states[i]) << r.body;
    EXPECT_EQ(b.at("context").as_string(), "kport");
    EXPECT_EQ(b.at("target_url").as_string(), page);
    EXPECT_LE(b.at("description").as_string().size(), 140u);
  }
  EXPECT_EQ(statuses[1].json().at("description").as_string(), "kport: validating");
  EXPECT_EQ(std::string(statuses[2].json().at("description").as_string()).rfind("kport: fail", 0), 0u)
      << statuses[2].body;
  // A failed build is a failure and a new failure: both webhooks go out.
  auto hooks = wait_to("/hooks/kport", 2);
  ASSERT_EQ(hooks.size(), 2u);
  EXPECT_EQ(hooks[0].header("X-Kport-Event"), "verdict");
  EXPECT_EQ(hooks[0].json().at("conclusion").as_string(), "failure");
  EXPECT_EQ(hooks[1].header("X-Kport-Event"), "regression");
  EXPECT_FALSE(hooks[1].json().at("regressions").as_array().empty()) << hooks[1].body;
}

TEST_F(ForgeTest, GitLabStatusesNameTheProjectAndRunThenCancel) {
  ASSERT_EQ(connect("gitlab", "status", "org/kernels").status, 200);
  const std::string builder = register_runner("builder", "build");
  const std::string page = push(sha);
  ASSERT_EQ(wait_to("/statuses/", 1).size(), 1u);
  auto build = take(builder);
  ASSERT_EQ(wait_to("/statuses/", 2).size(), 2u);
  auto pipelines = get("/api/v1/pipelines?limit=1");
  const std::string pid = std::to_string(pipelines.body.at("items").at(0).at("id").as_int64());
  ASSERT_EQ(post("/api/v1/pipelines/" + pid + "/cancel", object{}, k_admin).status, 200);
  fail(build, builder);  // the runner sees the cancel and stops: the job ends cancelled
  auto statuses = wait_to("/statuses/", 3);
  ASSERT_EQ(statuses.size(), 3u);
  const std::vector<std::string> states{"pending", "running", "canceled"};
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    EXPECT_EQ(statuses[i].target, "/api/v4/projects/org%2Fkernels/statuses/" + sha);
    EXPECT_EQ(statuses[i].header("PRIVATE-TOKEN"), k_forge_token);
    EXPECT_EQ(statuses[i].header("Authorization"), "");
    auto b = statuses[i].json();
    EXPECT_EQ(b.at("state").as_string(), states[i]) << statuses[i].body;
    EXPECT_EQ(b.at("name").as_string(), "kport");
    EXPECT_EQ(b.at("target_url").as_string(), page);
  }
}

TEST_F(ForgeTest, ConnectionInputIsCheckedWithJsonErrors) {
  auto bad_kind = put("/api/v1/repositories/org%2Fkernels/forge",
                      object{{"kind", "svn"},
                             {"api_url", forge.url()},
                             {"project", "a/b"},
                             {"token_file", (dir.path() / "forge-token").string()}},
                      k_admin);
  EXPECT_EQ(bad_kind.status, 400) << bad_kind.raw;
  EXPECT_EQ(bad_kind.body.at("error").at("code").as_string(), "invalid_argument");
  auto no_file = put(
      "/api/v1/repositories/org%2Fkernels/forge",
      object{{"kind", "github"}, {"api_url", forge.url()}, {"project", "a/b"}, {"token_file", "/nonexistent/token"}},
      k_admin);
  EXPECT_EQ(no_file.status, 422) << no_file.raw;
  // A token file others may read is refused, as a GitHub App's key is, naming the file.
  const auto shared = dir.path() / "shared-token";
  std::ofstream(shared) << "token\n";
  std::filesystem::permissions(shared, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                           std::filesystem::perms::group_read);
  auto readable =
      put("/api/v1/repositories/org%2Fkernels/forge",
          object{{"kind", "github"}, {"api_url", forge.url()}, {"project", "a/b"}, {"token_file", shared.string()}},
          k_admin);
  EXPECT_EQ(readable.status, 422) << readable.raw;
  EXPECT_NE(readable.raw.find("readable by other users; chmod 600"), std::string::npos) << readable.raw;
  EXPECT_NE(readable.raw.find(shared.string()), std::string::npos) << readable.raw;
  auto unknown = put("/api/v1/repositories/nope/forge",
                     object{{"kind", "github"},
                            {"api_url", forge.url()},
                            {"project", "a/b"},
                            {"token_file", (dir.path() / "forge-token").string()}},
                     k_admin);
  EXPECT_EQ(unknown.status, 404) << unknown.raw;
  auto anonymous = put("/api/v1/repositories/org%2Fkernels/forge", object{}, "");
  EXPECT_EQ(anonymous.status, 401);
  auto bad_state = get("/api/v1/deliveries?state=lost");
  EXPECT_EQ(bad_state.status, 400);
  EXPECT_EQ(bad_state.body.at("error").at("code").as_string(), "invalid_argument");
}

}  // namespace
}  // namespace kport::testing
