// A coordinator with a known hook secret, and helpers that send push webhooks the way
// GitHub, Gitea and GitLab sign them.
#pragma once

#include "coordinator_fixture.h"
#include "kport/common/crypto.h"

namespace kport::testing {

inline const std::string k_hook_secret = "hook-secret-for-tests";

class HookTest : public CoordinatorTest {
 protected:
  HookTest() { extra_args = {"--hook-secret", k_hook_secret}; }

  // A GitHub-style push body; `forced`/`deleted` as GitHub sends them.
  static std::string push_body(const std::string& repo, const std::string& ref, const std::string& before,
                               const std::string& after, bool forced = false, const std::string& parent = "") {
    boost::json::array commits;
    if (after != std::string(40, '0')) {
      boost::json::object c{{"id", after},
                            {"message", "change gemm"},
                            {"timestamp", "2026-11-29T17:45:00Z"},
                            {"author", boost::json::object{{"name", "Dev"}, {"email", "dev@example.com"}}}};
      if (!parent.empty()) c["parents"] = boost::json::array{parent};
      commits.push_back(std::move(c));
    }
    return boost::json::serialize(boost::json::object{
        {"ref", ref},
        {"before", before},
        {"after", after},
        {"forced", forced},
        {"deleted", after == std::string(40, '0')},
        {"repository", boost::json::object{{"full_name", repo}, {"clone_url", "https://example.com/" + repo + ".git"}}},
        {"commits", std::move(commits)}});
  }

  JsonReply send(const std::string& body, http::HeaderList headers) {
    headers.emplace_back("Content-Type", "application/json");
    auto r = client.fetch("POST", url("/api/v1/hooks/push"), body, headers, std::chrono::milliseconds(30'000));
    JsonReply out;
    if (!r.ok()) {
      ADD_FAILURE() << r.error().message;
      return out;
    }
    out.status = r->status;
    out.raw = r->body;
    boost::system::error_code ec;
    out.body = boost::json::parse(r->body, ec);
    return out;
  }
  static std::string hmac_hex(const std::string& secret, const std::string& body) {
    return crypto::to_hex(crypto::hmac_sha256(secret, body));
  }
  JsonReply github(const std::string& body, const std::string& delivery, const std::string& secret = k_hook_secret) {
    return send(body, {{"X-GitHub-Event", "push"},
                       {"X-GitHub-Delivery", delivery},
                       {"X-Hub-Signature-256", "sha256=" + hmac_hex(secret, body)}});
  }
  JsonReply gitea(const std::string& body, const std::string& delivery, const std::string& secret = k_hook_secret) {
    return send(
        body,
        {{"X-Gitea-Event", "push"}, {"X-Gitea-Delivery", delivery}, {"X-Gitea-Signature", hmac_hex(secret, body)}});
  }
  JsonReply gitlab(const std::string& body, const std::string& uuid, const std::string& token = k_hook_secret) {
    return send(body, {{"X-Gitlab-Event", "Push Hook"}, {"X-Gitlab-Event-UUID", uuid}, {"X-Gitlab-Token", token}});
  }

  std::int64_t pipeline_count() {
    auto r = get("/api/v1/pipelines?limit=1000");
    return static_cast<std::int64_t>(r.body.at("items").as_array().size());
  }
  std::int64_t job_count() {
    auto r = get("/api/v1/jobs?limit=1000");
    return static_cast<std::int64_t>(r.body.at("items").as_array().size());
  }
};

}  // namespace kport::testing
