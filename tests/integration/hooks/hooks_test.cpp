// POST /api/v1/hooks/push against a real coordinator: the three senders' formats, bad
// signatures, unknown repositories, malformed payloads, redeliveries (force pushes and
// branch deletes, which need a real repository: push_confirm_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "hook_fixture.h"

namespace kport::testing {
namespace {

using boost::json::object;

class Hooks : public HookTest {
 protected:
  void SetUp() override {
    HookTest::SetUp();
    add_target("sm_90a", "9.0");
    ASSERT_EQ(post("/api/v1/repositories",
                   object{{"name", "org/kernels"}, {"url", "https://example.com/org/kernels.git"}}, k_admin)
                  .status,
              201);
  }
  const std::string zero = std::string(40, '0');
};

TEST_F(Hooks, GithubPushQueuesOneBuildPerTargetAndRecordsTheCommit) {
  std::string parent = commit_sha(1), sha = commit_sha(2);
  auto r = github(push_body("org/kernels", "refs/heads/main", parent, sha, false, parent), "gh-1");
  ASSERT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(r.body.at("outcome").as_string(), "pipeline");
  const auto& p = r.body.at("pipeline").as_object();
  EXPECT_EQ(p.at("reason").as_string(), "push");
  EXPECT_EQ(p.at("commit").as_string(), sha);
  EXPECT_EQ(p.at("ref").as_string(), "refs/heads/main");
  EXPECT_EQ(p.at("repo").as_string(), "org/kernels");
  auto jobs = get("/api/v1/jobs?commit=" + sha);
  ASSERT_EQ(jobs.body.at("items").as_array().size(), 1u) << jobs.raw;
  EXPECT_EQ(jobs.body.at("items").as_array()[0].at("target").as_string(), "sm_90a");
  auto c = get("/api/v1/commits/" + sha);
  EXPECT_EQ(c.status, 200) << c.raw;
  EXPECT_NE(c.raw.find(parent), std::string::npos) << "the push names the parent: " << c.raw;
}

TEST_F(Hooks, GiteaAndGitlabFormatsAreAcceptedAndTheRepositoryFoundByUrl) {
  auto r = gitea(push_body("org/kernels", "refs/heads/main", zero, commit_sha(3)), "gitea-1");
  EXPECT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(r.body.at("source").as_string(), "gitea");
  // GitLab names the project by path and its URLs; match on the registered URL.
  std::string body = boost::json::serialize(object{
      {"object_kind", "push"},
      {"ref", "refs/heads/dev"},
      {"before", zero},
      {"after", commit_sha(4)},
      {"project",
       object{{"path_with_namespace", "group/other-name"}, {"git_http_url", "https://example.com/org/kernels.git"}}},
      {"commits", boost::json::array{
                      object{{"id", commit_sha(4)}, {"message", "m"}, {"timestamp", "2026-11-29T18:00:00+01:00"}}}}});
  r = gitlab(body, "gl-uuid-1");
  EXPECT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(r.body.at("source").as_string(), "gitlab");
  EXPECT_EQ(r.body.at("repo").as_string(), "org/kernels");
  EXPECT_EQ(pipeline_count(), 2);
}

TEST_F(Hooks, BadSignatureIs401AndQueuesNothing) {
  std::string body = push_body("org/kernels", "refs/heads/main", zero, commit_sha(5));
  auto r = github(body, "bad-1", "wrong-secret");
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(r.body.at("error").at("code").as_string(), "unauthorized");
  r = send(body, {{"X-GitHub-Event", "push"}, {"X-GitHub-Delivery", "bad-2"}});  // unsigned
  EXPECT_EQ(r.status, 401) << r.raw;
  r = gitea(body, "bad-3", "wrong-secret");
  EXPECT_EQ(r.status, 401) << r.raw;
  r = gitlab(body, "bad-4", "wrong-token");
  EXPECT_EQ(r.status, 401) << r.raw;
  // A body altered after signing.
  r = send(body + " ", {{"X-GitHub-Event", "push"},
                        {"X-GitHub-Delivery", "bad-5"},
                        {"X-Hub-Signature-256", "sha256=" + hmac_hex(k_hook_secret, body)}});
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(pipeline_count(), 0);
  EXPECT_EQ(job_count(), 0);
  // The same delivery id, now signed correctly, is not blocked by the refused attempts.
  EXPECT_EQ(github(body, "bad-1").status, 201);
}

TEST_F(Hooks, UnknownRepositoryIs404) {
  auto r = github(push_body("someone/else", "refs/heads/main", zero, commit_sha(6)), "unknown-1");
  EXPECT_EQ(r.status, 404) << r.raw;
  EXPECT_NE(r.body.at("error").at("message").as_string().find("someone/else"), std::string::npos) << r.raw;
  EXPECT_EQ(pipeline_count(), 0);
}

TEST_F(Hooks, MalformedPayloadsAre400) {
  for (const std::string& body :
       {std::string("{not json"), std::string("[]"),
        std::string(R"({"ref":"refs/heads/main","before":"x","after":"y","repository":{"full_name":"org/kernels"}})"),
        std::string(R"({"before":")" + zero + R"(","after":")" + commit_sha(7) +
                    R"(","repository":{"full_name":"org/kernels"}})"),
        std::string(R"({"ref":"refs/heads/main","before":")" + zero + R"(","after":")" + commit_sha(7) + R"("})"),
        std::string(R"({"ref":"refs/heads/main","before":")" + zero + R"(","after":")" + commit_sha(7) +
                    R"(","repository":{"full_name":"org/kernels"},"commits":[{"id":"nope"}]})")}) {
    auto r = github(body, "malformed-" + std::to_string(body.size()));
    EXPECT_EQ(r.status, 400) << body << " -> " << r.raw;
    EXPECT_TRUE(r.body.is_object() && r.body.as_object().contains("error")) << r.raw;
  }
  // No sender headers at all.
  auto r = send(push_body("org/kernels", "refs/heads/main", zero, commit_sha(7)), {});
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(pipeline_count(), 0);
}

TEST_F(Hooks, TheSameDeliveryTwiceMakesOnePipeline) {
  std::string body = push_body("org/kernels", "refs/heads/main", zero, commit_sha(8));
  auto first = github(body, "dup-1");
  ASSERT_EQ(first.status, 201) << first.raw;
  auto second = github(body, "dup-1");
  EXPECT_EQ(second.status, 200) << second.raw;
  EXPECT_TRUE(second.body.at("duplicate").as_bool());
  EXPECT_EQ(second.body.at("pipeline").at("id"), first.body.at("pipeline").at("id"));
  EXPECT_EQ(pipeline_count(), 1);
  // GitLab without an event UUID: the same body is the same delivery.
  std::string gl = push_body("org/kernels", "refs/heads/main", commit_sha(8), commit_sha(9));
  http::HeaderList h = {{"X-Gitlab-Event", "Push Hook"}, {"X-Gitlab-Token", k_hook_secret}};
  EXPECT_EQ(send(gl, h).status, 201);
  EXPECT_EQ(send(gl, h).status, 200);
  EXPECT_EQ(pipeline_count(), 2);
}

TEST_F(Hooks, ConcurrentRedeliveriesStillMakeOnePipeline) {
  std::string body = push_body("org/kernels", "refs/heads/main", zero, commit_sha(20));
  http::HeaderList headers = {{"Content-Type", "application/json"},
                              {"X-GitHub-Event", "push"},
                              {"X-GitHub-Delivery", "race-1"},
                              {"X-Hub-Signature-256", "sha256=" + hmac_hex(k_hook_secret, body)}};
  std::vector<int> statuses(8, 0);
  std::vector<std::thread> senders;
  for (std::size_t i = 0; i < statuses.size(); ++i)
    senders.emplace_back([&, i] {
      auto r = http::fetch("POST", url("/api/v1/hooks/push"), body, headers);
      statuses[i] = r.ok() ? r->status : -1;
    });
  for (auto& t : senders) t.join();
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 201), 1);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 200), 7);
  EXPECT_EQ(pipeline_count(), 1);
  EXPECT_EQ(job_count(), 1);
}

TEST_F(Hooks, NonPushEventsAndTagsAreAcknowledgedWithoutPipelines) {
  std::string ping = R"({"zen":"Keep it logically awesome.","hook_id":1})";
  auto r = send(ping, {{"X-GitHub-Event", "ping"},
                       {"X-GitHub-Delivery", "ping-1"},
                       {"X-Hub-Signature-256", "sha256=" + hmac_hex(k_hook_secret, ping)}});
  EXPECT_EQ(r.status, 202) << r.raw;
  r = github(push_body("org/kernels", "refs/tags/v1", zero, commit_sha(10)), "tag-1");
  EXPECT_EQ(r.status, 202) << r.raw;
  EXPECT_EQ(r.body.at("outcome").as_string(), "ignored");
  EXPECT_EQ(pipeline_count(), 0);
}

// Force pushes and deletes are confirmed against a real repository before they cancel
// anything: push_confirm_test.cpp.

}  // namespace
}  // namespace kport::testing
