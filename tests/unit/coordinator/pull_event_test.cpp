// Pull requests (GitHub, Gitea) and merge requests (GitLab) read as the push of their
// head (push_event.h, PushEvent::is_pull).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <map>

#include "push_event.h"

namespace kport::coordinator {
namespace {

namespace json = boost::json;

const std::string k_head = std::string(40, 'd');
const std::string k_base = std::string(40, 'b');
const std::string k_old = std::string(40, 'e');

HeaderLookup headers(std::map<std::string, std::string> h) {
  return [h = std::move(h)](std::string_view name) -> std::string_view {
    auto it = h.find(std::string(name));
    return it == h.end() ? std::string_view{} : std::string_view(it->second);
  };
}

std::string github_pr(const std::string& action, bool with_before = false) {
  json::object o{
      {"action", action},
      {"number", 7},
      {"pull_request", json::object{{"title", "faster gemm"},
                                    {"head", json::object{{"sha", k_head}, {"ref", "feature"}}},
                                    {"base", json::object{{"sha", k_base}, {"ref", "main"}}}}},
      {"repository", json::object{{"full_name", "org/kernels"}, {"clone_url", "https://example.com/org/kernels.git"}}}};
  if (with_before) {
    o["before"] = k_old;
    o["after"] = k_head;
  }
  return json::serialize(o);
}

TEST(PullEvent, GitHubOpenedIsTheHeadWithTheBaseAsParent) {
  auto ev = parse_push("github", headers({{"X-GitHub-Event", "pull_request"}, {"X-GitHub-Delivery", "d1"}}),
                       github_pr("opened"));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->is_pull);
  EXPECT_FALSE(ev->is_push);
  EXPECT_EQ(ev->pull_number, 7);
  EXPECT_EQ(ev->ref, "refs/pull/7/head");
  EXPECT_EQ(ev->after, k_head);
  EXPECT_EQ(ev->before, std::string(40, '0'));
  EXPECT_FALSE(ev->forced);
  EXPECT_EQ(ev->base_ref, "refs/heads/main");
  EXPECT_EQ(ev->repo_name, "org/kernels");
  ASSERT_EQ(ev->commits.size(), 1u);
  EXPECT_EQ(ev->commits[0].sha, k_head);
  EXPECT_EQ(ev->commits[0].parent.value_or(""), k_base);
  EXPECT_EQ(ev->commits[0].message, "faster gemm");
}

TEST(PullEvent, GitHubSynchronizeSupersedesThePreviousHead) {
  auto ev = parse_push("github", headers({{"X-GitHub-Event", "pull_request"}}), github_pr("synchronize", true));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->is_pull);
  EXPECT_TRUE(ev->forced);
  EXPECT_EQ(ev->before, k_old);
}

TEST(PullEvent, ActionsThatKeepTheHeadAreNeitherPushNorPull) {
  for (const char* action : {"labeled", "edited"}) {
    auto ev = parse_push("github", headers({{"X-GitHub-Event", "pull_request"}}), github_pr(action));
    ASSERT_TRUE(ev.ok()) << ev.error().message;
    EXPECT_FALSE(ev->is_pull) << action;
    EXPECT_FALSE(ev->is_push) << action;
    EXPECT_FALSE(ev->is_close) << action;
    EXPECT_EQ(ev->action, action);
  }
}

TEST(PullEvent, ClosedWithoutAMergeIsACloseOfTheHeadsRef) {
  auto body = json::parse(github_pr("closed")).as_object();
  body["pull_request"].as_object()["merged"] = false;
  auto ev = parse_push("github", headers({{"X-GitHub-Event", "pull_request"}}), json::serialize(body));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->is_close);
  EXPECT_FALSE(ev->is_pull);
  EXPECT_FALSE(ev->is_push);
  EXPECT_EQ(ev->ref, "refs/pull/7/head");
  EXPECT_EQ(ev->after, k_head);
  // A merged request's head lives on in its base branch: nothing to cancel.
  body["pull_request"].as_object()["merged"] = true;
  ev = parse_push("github", headers({{"X-GitHub-Event", "pull_request"}}), json::serialize(body));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_FALSE(ev->is_close);
  EXPECT_FALSE(ev->is_pull);
  json::object attrs{
      {"iid", 12}, {"action", "close"}, {"target_branch", "main"}, {"last_commit", json::object{{"id", k_head}}}};
  json::object mr{{"object_kind", "merge_request"},
                  {"object_attributes", attrs},
                  {"project", json::object{{"path_with_namespace", "org/kernels"}}}};
  ev = parse_push("gitlab", headers({{"X-Gitlab-Event", "Merge Request Hook"}}), json::serialize(mr));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->is_close);
  EXPECT_EQ(ev->ref, "refs/merge-requests/12/head");
  mr["object_attributes"].as_object()["action"] = "merge";
  ev = parse_push("gitlab", headers({{"X-Gitlab-Event", "Merge Request Hook"}}), json::serialize(mr));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_FALSE(ev->is_close);
}

TEST(PullEvent, GiteaSynchronizedIsANewHeadWithoutBefore) {
  auto ev = parse_push("gitea", headers({{"X-Gitea-Event", "pull_request"}, {"X-Gitea-Delivery", "g1"}}),
                       github_pr("synchronized"));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->is_pull);
  EXPECT_TRUE(ev->forced);
  EXPECT_EQ(ev->before, std::string(40, '0'));  // the coordinator takes the recorded head
}

TEST(PullEvent, GitLabMergeRequestOpenAndUpdate) {
  json::object attrs{{"iid", 12},
                     {"action", "open"},
                     {"title", "tcgen05 gemm"},
                     {"target_branch", "main"},
                     {"source_branch", "tc"},
                     {"last_commit", json::object{{"id", k_head}}},
                     {"diff_refs", json::object{{"base_sha", k_base}, {"head_sha", k_head}}}};
  json::object o{{"object_kind", "merge_request"},
                 {"project", json::object{{"path_with_namespace", "org/kernels"}}},
                 {"object_attributes", attrs}};
  auto h = headers({{"X-Gitlab-Event", "Merge Request Hook"}, {"X-Gitlab-Event-UUID", "u1"}});
  auto ev = parse_push("gitlab", h, json::serialize(o));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->is_pull);
  EXPECT_EQ(ev->ref, "refs/merge-requests/12/head");
  EXPECT_EQ(ev->commits.at(0).parent.value_or(""), k_base);
  EXPECT_FALSE(ev->forced);
  // An update without oldrev changed only the description.
  o["object_attributes"].as_object()["action"] = "update";
  auto edit = parse_push("gitlab", h, json::serialize(o));
  ASSERT_TRUE(edit.ok());
  EXPECT_FALSE(edit->is_pull);
  o["object_attributes"].as_object()["oldrev"] = k_old;
  auto update = parse_push("gitlab", h, json::serialize(o));
  ASSERT_TRUE(update.ok()) << update.error().message;
  EXPECT_TRUE(update->is_pull);
  EXPECT_TRUE(update->forced);
  EXPECT_EQ(update->before, k_old);
}

TEST(PullEvent, MalformedPullRequestsNameTheField) {
  auto h = headers({{"X-GitHub-Event", "pull_request"}});
  auto no_number = parse_push("github", h, R"({"action":"opened","pull_request":{},"repository":{"full_name":"a/b"}})");
  ASSERT_FALSE(no_number.ok());
  EXPECT_NE(no_number.error().message.find("'number'"), std::string::npos) << no_number.error().message;
  auto no_head = parse_push(
      "github", h,
      R"({"action":"opened","number":1,"pull_request":{"head":{"sha":"xyz"}},"repository":{"full_name":"a/b"}})");
  ASSERT_FALSE(no_head.ok());
  EXPECT_NE(no_head.error().message.find("head commit"), std::string::npos) << no_head.error().message;
  EXPECT_EQ(parse_push("github", h, "[1,2]").error().code, Errc::bad_json);
}

}  // namespace
}  // namespace kport::coordinator
