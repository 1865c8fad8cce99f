// A stand-in for GitHub's, Gitea's and GitLab's REST APIs (and a webhook receiver): a
// real HTTP server on 127.0.0.1 that records every request and answers as the
// documented API does (201 with the created check run or status; 200 for a check run's
// update), unless a test told it to fail: a status, a body that is not JSON, a huge
// body, or an answer that comes too late.
//
// Told to act as a GitHub App's forge (act_as_app), it also answers
// POST /app/installations/{id}/access_tokens as GitHub documents it: the JWT in the
// Authorization header verified (RS256 signature against the app's public key, alg, iat
// and exp window, iss; jwt_check.h), a fresh installation token issued with its
// expires_at (201); and every call under /repos/ then needs one of the tokens it issued,
// unexpired and not revoked (else 401 Bad credentials).
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "jwt_check.h"
#include "kport/common/crypto.h"
#include "kport/http/router.h"
#include "kport/http/server.h"

namespace kport::testing {

struct ForgeRequest {
  std::string method, path, body;
  std::string target;  // as sent, percent-encoded
  http::HeaderList headers;
  std::chrono::steady_clock::time_point at{};  // when the fake received it
  std::string header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
          }))
        return v;
    return "";
  }
  boost::json::object json() const {
    boost::system::error_code ec;
    auto v = boost::json::parse(body, ec);
    return !ec && v.is_object() ? v.as_object() : boost::json::object{};
  }
};

// What the next request is answered with instead of the documented answer.
struct ForgeFault {
  int status = 500;
  std::string body = R"({"message":"Server Error"})";
  std::chrono::milliseconds delay{0};  // answer only after this
};

// The GitHub App the fake forge knows: its id, its installation, its public key (PEM
// file), and how long the installation tokens it issues live.
struct FakeApp {
  std::int64_t app_id = 0;
  std::int64_t installation_id = 0;
  std::string public_key_file;
  std::chrono::seconds token_life{3600};  // GitHub's: an hour
};

class FakeForge {
 public:
  // With a PEM certificate and key it speaks HTTPS, as forges do.
  explicit FakeForge(std::string cert = "", std::string key = "") : m_scheme(cert.empty() ? "http" : "https") {
    auto router = std::make_shared<http::Router>();
    for (const char* method : {"GET", "POST", "PATCH", "PUT"})
      router->add(method, "/{path...}",
                  [this](http::Request&& req, http::Reply reply) { handle(std::move(req), std::move(reply)); });
    http::ServerOptions so;
    so.port = 0;
    so.threads = 2;
    so.body_limit = 8u << 20;
    so.tls_cert_file = std::move(cert);
    so.tls_key_file = std::move(key);
    m_server = std::make_unique<http::Server>(so, router);
    auto st = m_server->start();
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  }
  ~FakeForge() {
    for (auto& t : m_slow) t.join();
    m_server->stop(std::chrono::milliseconds(0));
  }

  std::string url(const std::string& path = "") const {
    return m_scheme + "://127.0.0.1:" + std::to_string(m_server->port()) + path;
  }

  // The next `n` requests get `fault`.
  void fail_next(int n, ForgeFault fault = {}) {
    std::lock_guard lock(m_mu);
    for (int i = 0; i < n; ++i) m_faults.push_back(fault);
  }
  // Every request gets `fault` until heal().
  void fail_always(ForgeFault fault) {
    std::lock_guard lock(m_mu);
    m_always = fault;
  }
  void heal() {
    std::lock_guard lock(m_mu);
    m_always.reset();
    m_faults.clear();
  }

  // From now on it answers as the forge of `app` (see above).
  void act_as_app(FakeApp app) {
    std::lock_guard lock(m_mu);
    m_app = std::move(app);
  }
  // The installation tokens issued so far take no call any more.
  void revoke_tokens() {
    std::lock_guard lock(m_mu);
    m_tokens.clear();
  }
  // From now on no call under /repos/ is taken, whatever its token (the app lost its
  // permission); exchanges still succeed.
  void take_no_tokens() {
    std::lock_guard lock(m_mu);
    m_take_no_tokens = true;
  }
  // Every installation token issued, in order.
  std::vector<std::string> issued_tokens() const {
    std::lock_guard lock(m_mu);
    return m_issued;
  }
  // Why each refused JWT was refused, in order.
  std::vector<std::string> jwt_errors() const {
    std::lock_guard lock(m_mu);
    return m_jwt_errors;
  }
  // How many calls under /repos/ came with no token it takes (expired, revoked, unknown).
  int refused_tokens() const {
    std::lock_guard lock(m_mu);
    return m_refused_tokens;
  }

  std::vector<ForgeRequest> requests() const {
    std::lock_guard lock(m_mu);
    return m_requests;
  }
  // Waits until at least `n` requests came (at most `timeout`); returns them all.
  std::vector<ForgeRequest> wait_for(std::size_t n,
                                     std::chrono::milliseconds timeout = std::chrono::milliseconds(20'000)) {
    std::unique_lock lock(m_mu);
    m_cv.wait_for(lock, timeout, [&] { return m_requests.size() >= n; });
    return m_requests;
  }

 private:
  void handle(http::Request&& req, http::Reply reply) {
    std::optional<ForgeFault> fault;
    std::int64_t id = 0;
    {
      std::lock_guard lock(m_mu);
      m_requests.push_back(
          ForgeRequest{req.method, req.path, req.body, req.target, req.headers, std::chrono::steady_clock::now()});
      id = static_cast<std::int64_t>(m_requests.size());
      if (m_always) {
        fault = m_always;
      } else if (!m_faults.empty()) {
        fault = m_faults.front();
        m_faults.pop_front();
      }
    }
    m_cv.notify_all();
    http::Response res;
    if (fault) {
      res.status = fault->status;
      res.body = fault->body;
    } else if (auto app = app_answer(req)) {
      res = std::move(*app);
    } else {
      res = documented(req, id);
    }
    if (fault && fault->delay.count() > 0) {
      std::lock_guard lock(m_mu);
      m_slow.emplace_back([reply, res, delay = fault->delay] {
        std::this_thread::sleep_for(delay);
        reply(res);
      });
      return;
    }
    reply(std::move(res));
  }

  static std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }
  static http::Response answer(int status, boost::json::object body) {
    http::Response res;
    res.status = status;
    res.body = boost::json::serialize(body);
    return res;
  }

  // As a GitHub App's forge: the token exchange, or a refusal of a call under /repos/
  // without a valid installation token; nullopt when the documented answer applies.
  std::optional<http::Response> app_answer(const http::Request& req) {
    std::lock_guard lock(m_mu);
    if (!m_app) return std::nullopt;
    const std::string auth = ForgeRequest{req.method, req.path, "", req.target, req.headers}.header("Authorization");
    const std::string exchange_prefix = "/app/installations/";
    if (req.path.rfind(exchange_prefix, 0) == 0) {
      const std::string rest = req.path.substr(exchange_prefix.size());
      const auto slash = rest.find('/');
      if (req.method != "POST" || slash == std::string::npos || rest.substr(slash) != "/access_tokens")
        return answer(404, {{"message", "Not Found"}});
      if (auth.rfind("Bearer ", 0) != 0) {
        m_jwt_errors.push_back("no Bearer JWT");
        return answer(401, {{"message", "A JSON web token could not be decoded"}});
      }
      const auto check =
          check_app_jwt(std::string_view(auth).substr(7), m_app->public_key_file, m_app->app_id, now_s());
      if (!check.ok()) {
        m_jwt_errors.push_back(check.error);
        return answer(401, {{"message", "A JSON web token could not be decoded"},
                            {"documentation_url", "https://docs.github.com/rest"}});
      }
      if (rest.substr(0, slash) != std::to_string(m_app->installation_id))
        return answer(404, {{"message", "Not Found"}, {"documentation_url", "https://docs.github.com/rest"}});
      const std::string token = crypto::random_token("ghs_", 18);
      const std::time_t expires = static_cast<std::time_t>(now_s() + m_app->token_life.count());
      std::tm tm{};
      gmtime_r(&expires, &tm);
      char when[32];
      std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
      m_tokens[token] = expires;
      m_issued.push_back(token);
      return answer(201, {{"token", token},
                          {"expires_at", when},
                          {"permissions", {{"checks", "write"}, {"statuses", "write"}}},
                          {"repository_selection", "selected"}});
    }
    if (req.path.rfind("/repos/", 0) != 0) return std::nullopt;
    std::string token;
    if (auth.rfind("Bearer ", 0) == 0) token = auth.substr(7);
    if (auth.rfind("token ", 0) == 0) token = auth.substr(6);
    auto it = m_tokens.find(token);
    if (m_take_no_tokens || it == m_tokens.end() || now_s() >= it->second) {
      ++m_refused_tokens;
      return answer(401, {{"message", "Bad credentials"}, {"documentation_url", "https://docs.github.com/rest"}});
    }
    return std::nullopt;
  }

  // The documented answers, reduced to what kport reads.
  static http::Response documented(const http::Request& req, std::int64_t id) {
    http::Response res;
    boost::system::error_code ec;
    auto body = boost::json::parse(req.body, ec);
    boost::json::object out = !ec && body.is_object() ? body.as_object() : boost::json::object{};
    if (req.path.find("/check-runs") != std::string::npos && req.method == "PATCH") {
      const auto slash = req.path.rfind('/');
      out["id"] = std::stoll(req.path.substr(slash + 1));
      res.status = 200;
    } else if (req.path.find("/check-runs") != std::string::npos) {
      out["id"] = 7000 + id;
      res.status = 201;
    } else if (req.path.find("/statuses/") != std::string::npos) {
      out["id"] = id;
      res.status = 201;
    } else {
      res.status = 200;
      out = boost::json::object{{"ok", true}};
    }
    res.body = boost::json::serialize(out);
    return res;
  }

  std::string m_scheme;
  std::unique_ptr<http::Server> m_server;
  mutable std::mutex m_mu;
  std::condition_variable m_cv;
  std::vector<ForgeRequest> m_requests;
  std::deque<ForgeFault> m_faults;
  std::optional<ForgeFault> m_always;
  std::vector<std::thread> m_slow;
  std::optional<FakeApp> m_app;
  std::map<std::string, std::int64_t> m_tokens;  // installation token -> when it expires (Unix s)
  std::vector<std::string> m_issued, m_jwt_errors;
  int m_refused_tokens = 0;
  bool m_take_no_tokens = false;
};

}  // namespace kport::testing
