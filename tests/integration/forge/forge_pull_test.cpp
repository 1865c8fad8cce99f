// Pull and merge requests: their head is validated and reported on it, a new head
// supersedes the old one (its queued jobs cancelled, its report concluded cancelled), and
// a request closed without a merge cancels its queued and running jobs.
#include <gtest/gtest.h>

#include "forge_fixture.h"

namespace kport::testing {
namespace {

using boost::json::object;

const std::string k_base = std::string(40, 'b');
const std::string k_head1 = std::string(39, 'd') + "1";
const std::string k_head2 = std::string(39, 'd') + "2";

class PullTest : public ForgeTest {
 protected:
  static std::string pr_body(const std::string& action, const std::string& head, const std::string& before = "") {
    object o{{"action", action},
             {"number", 7},
             {"pull_request", object{{"title", "faster gemm"},
                                     {"head", object{{"sha", head}, {"ref", "feature"}}},
                                     {"base", object{{"sha", k_base}, {"ref", "main"}}}}},
             {"repository", object{{"full_name", "org/kernels"}}}};
    if (!before.empty()) {
      o["before"] = before;
      o["after"] = head;
    }
    return boost::json::serialize(o);
  }
  JsonReply github_pr(const std::string& body, const std::string& delivery) {
    return send(body, {{"X-GitHub-Event", "pull_request"},
                       {"X-GitHub-Delivery", delivery},
                       {"X-Hub-Signature-256", "sha256=" + hmac_hex(k_hook_secret, body)}});
  }
  JsonReply gitea_pr(const std::string& body, const std::string& delivery) {
    return send(body, {{"X-Gitea-Event", "pull_request"},
                       {"X-Gitea-Delivery", delivery},
                       {"X-Gitea-Signature", hmac_hex(k_hook_secret, body)}});
  }
};

TEST_F(PullTest, GitHubPullRequestIsCheckedOnItsHeadAndANewHeadSupersedesTheOld) {
  ASSERT_EQ(connect("github", "check").status, 200);
  auto opened = github_pr(pr_body("opened", k_head1), "pr-1");
  ASSERT_EQ(opened.status, 201) << opened.raw;
  EXPECT_EQ(opened.body.at("ref").as_string(), "refs/pull/7/head");
  EXPECT_EQ(opened.body.at("commit").as_string(), k_head1);
  const auto& p1 = opened.body.at("pipeline");
  EXPECT_NE(std::string(p1.at("note").as_string()).find("github pull request #7 opened into refs/heads/main"),
            std::string::npos)
      << p1;
  auto first = wait_to("/check-runs", 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].json().at("head_sha").as_string(), k_head1);

  auto labeled = github_pr(pr_body("labeled", k_head1), "pr-2");
  EXPECT_EQ(labeled.status, 202) << labeled.raw;
  EXPECT_EQ(labeled.body.at("outcome").as_string(), "ignored");

  auto sync = github_pr(pr_body("synchronize", k_head2, k_head1), "pr-3");
  ASSERT_EQ(sync.status, 201) << sync.raw;
  EXPECT_EQ(sync.body.at("commit").as_string(), k_head2);
  EXPECT_GE(sync.body.at("superseded_jobs").as_int64(), 1);
  // The old head's check run concludes cancelled; the new head gets its own.
  auto runs = wait_to("/check-runs", 3);
  ASSERT_EQ(runs.size(), 3u);
  bool old_cancelled = false, new_queued = false;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    auto b = runs[i].json();
    if (runs[i].method == "PATCH" && runs[i].target == "/repos/org/kernels/check-runs/7001")
      old_cancelled = b.at("status") == "completed" && b.at("conclusion") == "cancelled";
    if (runs[i].method == "POST") new_queued = b.at("head_sha").as_string() == k_head2 && b.at("status") == "queued";
  }
  EXPECT_TRUE(old_cancelled) << runs[1].body << "\n" << runs[2].body;
  EXPECT_TRUE(new_queued) << runs[1].body << "\n" << runs[2].body;

  // A replay of the first synchronize (a fresh delivery id) is older than the recorded head.
  auto replay = github_pr(pr_body("synchronize", k_head2, k_head1), "pr-4");
  EXPECT_EQ(replay.status, 202) << replay.raw;
  EXPECT_EQ(replay.body.at("superseded_jobs").as_int64(), 0);
}

TEST_F(PullTest, AClosedPullRequestCancelsItsQueuedAndRunningJobsAndItsCheckConcludesCancelled) {
  add_target("sm_100a", "10.0");
  ASSERT_EQ(connect("github", "check").status, 200);
  ASSERT_EQ(github_pr(pr_body("opened", k_head1), "pr-1").status, 201);
  ASSERT_EQ(wait_to("/check-runs", 1).size(), 1u);  // queued
  const std::string builder = register_runner("builder", "build");
  auto running = take(builder);  // one build runs; the other waits in the queue
  ASSERT_FALSE(running.first.empty());
  ASSERT_EQ(wait_to("/check-runs", 2).size(), 2u);  // in_progress

  auto closed = boost::json::parse(pr_body("closed", k_head1)).as_object();
  closed["pull_request"].as_object()["merged"] = false;
  const std::string body = boost::json::serialize(closed);
  auto r = github_pr(body, "pr-close");
  ASSERT_EQ(r.status, 202) << r.raw;
  EXPECT_EQ(r.body.at("outcome").as_string(), "deleted");
  EXPECT_EQ(r.body.at("ref").as_string(), "refs/pull/7/head");
  EXPECT_EQ(r.body.at("superseded_jobs").as_int64(), 2) << "the queued build and the running one";
  EXPECT_NE(std::string(r.body.at("note").as_string()).find("closed without merging"), std::string::npos) << r.raw;
  // The close is recorded: its redelivery changes nothing.
  auto again = github_pr(body, "pr-close");
  EXPECT_EQ(again.status, 200) << again.raw;
  EXPECT_TRUE(again.body.at("duplicate").as_bool());

  // The running build learns it at its heartbeat and gives the job back: cancelled.
  auto beat = post("/api/v1/runners/heartbeat",
                   boost::json::object{{"job", std::stoll(running.first)}, {"attempt", running.second}}, builder);
  ASSERT_EQ(beat.status, 200) << beat.raw;
  EXPECT_TRUE(beat.body.at("cancel_requested").as_bool());
  fail(running, builder);
  auto job = get("/api/v1/jobs/" + running.first);
  EXPECT_EQ(job.body.at("status").as_string(), "cancelled") << job.raw;
  EXPECT_TRUE(claim(builder).is_null()) << "nothing of the closed request is left to build";

  auto runs = wait_to("/check-runs", 3);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[2].method, "PATCH");
  auto last = runs[2].json();
  EXPECT_EQ(last.at("status").as_string(), "completed") << runs[2].body;
  EXPECT_EQ(last.at("conclusion").as_string(), "cancelled") << runs[2].body;
  EXPECT_EQ(last.at("output").at("title").as_string(), "kport: cancelled");

  // A merged request cancels nothing: its head lives on in the base branch.
  closed["pull_request"].as_object()["merged"] = true;
  auto merged = github_pr(boost::json::serialize(closed), "pr-merged");
  EXPECT_EQ(merged.status, 202) << merged.raw;
  EXPECT_EQ(merged.body.at("outcome").as_string(), "ignored");
}

TEST_F(PullTest, GiteaSynchronizedSupersedesTheRecordedHead) {
  ASSERT_EQ(connect("gitea", "status").status, 200);
  ASSERT_EQ(gitea_pr(pr_body("opened", k_head1), "g-1").status, 201);
  ASSERT_EQ(wait_to("/statuses/", 1).size(), 1u);
  auto sync = gitea_pr(pr_body("synchronized", k_head2), "g-2");
  ASSERT_EQ(sync.status, 201) << sync.raw;
  EXPECT_GE(sync.body.at("superseded_jobs").as_int64(), 1);
  auto statuses = wait_to("/statuses/", 3);
  ASSERT_EQ(statuses.size(), 3u);
  std::map<std::string, std::vector<std::string>> by_sha;
  for (const auto& r : statuses)
    by_sha[r.target.substr(r.target.rfind('/') + 1)].push_back(std::string(r.json().at("state").as_string()));
  EXPECT_EQ(by_sha[k_head1], (std::vector<std::string>{"pending", "error"}));  // cancelled: error on Gitea
  EXPECT_EQ(by_sha[k_head2], (std::vector<std::string>{"pending"}));
}

TEST_F(PullTest, GitLabMergeRequestIsReportedOnItsHead) {
  ASSERT_EQ(connect("gitlab", "status", "7").status, 200);
  const std::string body = boost::json::serialize(
      object{{"object_kind", "merge_request"},
             {"project", object{{"path_with_namespace", "org/kernels"}}},
             {"object_attributes", object{{"iid", 3},
                                          {"action", "open"},
                                          {"title", "tc"},
                                          {"target_branch", "main"},
                                          {"last_commit", object{{"id", k_head1}}},
                                          {"diff_refs", object{{"base_sha", k_base}, {"head_sha", k_head1}}}}}});
  auto r = send(
      body,
      {{"X-Gitlab-Event", "Merge Request Hook"}, {"X-Gitlab-Event-UUID", "mr-1"}, {"X-Gitlab-Token", k_hook_secret}});
  ASSERT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(r.body.at("ref").as_string(), "refs/merge-requests/3/head");
  auto statuses = wait_to("/statuses/", 1);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].target, "/api/v4/projects/7/statuses/" + k_head1);
  EXPECT_EQ(statuses[0].json().at("state").as_string(), "pending");
}

}  // namespace
}  // namespace kport::testing
