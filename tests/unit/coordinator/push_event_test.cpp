#include "push_event.h"

#include <gtest/gtest.h>

#include <map>

#include "kport/common/crypto.h"

namespace kport::coordinator {
namespace {

const std::string k_before = std::string(39, 'a') + "1";
const std::string k_after = std::string(39, 'b') + "2";
const std::string k_zero(40, '0');

struct Headers {
  std::map<std::string, std::string> h;
  HeaderLookup lookup() const {
    return [this](std::string_view name) -> std::string_view {
      auto it = h.find(std::string(name));
      return it == h.end() ? std::string_view{} : std::string_view(it->second);
    };
  }
};

std::string body(const std::string& extra = "") {
  return R"({"ref":"refs/heads/main","before":")" + k_before + R"(","after":")" + k_after +
         R"(","repository":{"full_name":"org/kernels","clone_url":"https://example.com/org/kernels.git"},"commits":[)"
         R"({"id":")" +
         std::string(39, 'c') +
         R"(3","message":"one","timestamp":"2026-11-29T17:45:00Z","author":{"name":"A","email":"a@x"}},)"
         R"({"id":")" +
         k_after + R"(","message":"two","timestamp":"2026-11-29T18:45:00+01:00"}])" + extra + "}";
}

TEST(PushEvent, SourceComesFromTheSendersHeadersGiteaFirst) {
  Headers gh{{{"X-GitHub-Event", "push"}}};
  EXPECT_EQ(*push_source(gh.lookup()), "github");
  // Gitea also sends GitHub's headers; its own name it.
  Headers gitea{{{"X-GitHub-Event", "push"}, {"X-Gitea-Event", "push"}}};
  EXPECT_EQ(*push_source(gitea.lookup()), "gitea");
  Headers gl{{{"X-Gitlab-Event", "Push Hook"}}};
  EXPECT_EQ(*push_source(gl.lookup()), "gitlab");
  EXPECT_EQ(push_source(Headers{}.lookup()).error().code, Errc::invalid_argument);
}

TEST(PushEvent, SignaturesAreCheckedPerSender) {
  std::string b = body();
  std::string sig = crypto::to_hex(crypto::hmac_sha256("s3cret", b));
  EXPECT_TRUE(verify_push("github", Headers{{{"X-Hub-Signature-256", "sha256=" + sig}}}.lookup(), b, "s3cret").ok());
  EXPECT_TRUE(verify_push("github", Headers{{{"X-Hub-Signature-256", "SHA256=" + sig}}}.lookup(), b, "s3cret").ok());
  EXPECT_EQ(verify_push("github", Headers{{{"X-Hub-Signature-256", sig}}}.lookup(), b, "s3cret").error().code,
            Errc::unauthorized);
  EXPECT_EQ(verify_push("github", Headers{{{"X-Hub-Signature-256", "sha256=" + sig}}}.lookup(), b + "x", "s3cret")
                .error()
                .code,
            Errc::unauthorized);
  EXPECT_TRUE(verify_push("gitea", Headers{{{"X-Gitea-Signature", sig}}}.lookup(), b, "s3cret").ok());
  EXPECT_EQ(verify_push("gitea", Headers{}.lookup(), b, "s3cret").error().code, Errc::unauthorized);
  EXPECT_TRUE(verify_push("gitlab", Headers{{{"X-Gitlab-Token", "s3cret"}}}.lookup(), b, "s3cret").ok());
  EXPECT_EQ(verify_push("gitlab", Headers{{{"X-Gitlab-Token", "s3cre"}}}.lookup(), b, "s3cret").error().code,
            Errc::unauthorized);
  // No secret configured: nothing verifies.
  EXPECT_EQ(verify_push("gitlab", Headers{{{"X-Gitlab-Token", ""}}}.lookup(), b, "").error().code, Errc::unauthorized);
}

TEST(PushEvent, ParsesCommitsWithParentsInPushOrder) {
  Headers h{{{"X-GitHub-Event", "push"}, {"X-GitHub-Delivery", "d-1"}}};
  auto ev = parse_push("github", h.lookup(), body());
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->is_push);
  EXPECT_EQ(ev->delivery_id, "d-1");
  EXPECT_EQ(ev->repo_name, "org/kernels");
  ASSERT_EQ(ev->commits.size(), 2u);
  EXPECT_EQ(ev->commits[0].parent, k_before);
  EXPECT_EQ(ev->commits[1].parent, ev->commits[0].sha);
  EXPECT_EQ(ev->commits[0].author, "A <a@x>");
  EXPECT_EQ(ev->commits[0].time_ms, ev->commits[1].time_ms) << "17:45Z and 18:45+01:00 are the same instant";
  EXPECT_FALSE(ev->deleted);
  EXPECT_FALSE(ev->forced);
}

TEST(PushEvent, ForcedPushesDoNotTakeBeforeAsTheParent) {
  Headers h{{{"X-GitHub-Event", "push"}}};
  auto ev = parse_push("github", h.lookup(), body(R"(,"forced":true)"));
  ASSERT_TRUE(ev.ok());
  EXPECT_TRUE(ev->forced);
  EXPECT_FALSE(ev->commits[0].parent.has_value());
  // Without a delivery header the body names the delivery.
  EXPECT_EQ(ev->delivery_id, "sha256:" + crypto::sha256_hex(body(R"(,"forced":true)")));
}

TEST(PushEvent, DeletesAndMalformedPayloads) {
  Headers h{{{"X-Gitlab-Event", "Push Hook"}}};
  std::string del = R"({"ref":"refs/heads/x","before":")" + k_before + R"(","after":")" + k_zero +
                    R"(","project":{"path_with_namespace":"g/k","git_http_url":"https://e/g/k.git"}})";
  auto ev = parse_push("gitlab", h.lookup(), del);
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->deleted);
  EXPECT_TRUE(ev->commits.empty());
  EXPECT_EQ(ev->repo_name, "g/k");
  EXPECT_EQ(parse_push("gitlab", h.lookup(), "{").error().code, Errc::bad_json);
  EXPECT_EQ(
      parse_push("gitlab", h.lookup(), R"({"ref":"main","before":")" + k_before + R"(","after":")" + k_after + R"("})")
          .error()
          .code,
      Errc::invalid_argument);
  std::string not_array = R"({"ref":"refs/heads/x","before":")" + k_before + R"(","after":")" + k_after +
                          R"(","project":{"path_with_namespace":"g/k"},"commits":{}})";
  EXPECT_EQ(parse_push("gitlab", h.lookup(), not_array).error().code, Errc::invalid_argument);
  // Other events are recognised and not parsed as pushes.
  Headers tag{{{"X-Gitlab-Event", "Tag Push Hook"}}};
  auto other = parse_push("gitlab", tag.lookup(), "not even json");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->is_push);
}

TEST(PushEvent, Iso8601) {
  EXPECT_EQ(parse_iso8601_ms("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_iso8601_ms("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_EQ(parse_iso8601_ms("2000-03-01T00:00:00.250Z"), 951868800250);
  EXPECT_FALSE(parse_iso8601_ms("yesterday").has_value());
  EXPECT_FALSE(parse_iso8601_ms("2026-13-01T00:00:00Z").has_value());
}

}  // namespace
}  // namespace kport::coordinator
