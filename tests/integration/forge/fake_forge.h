// A stand-in for GitHub's, Gitea's and GitLab's REST APIs (and a webhook receiver): a
// real HTTP server on 127.0.0.1 that records every request and answers as the
// documented API does (201 with the created check run or status; 200 for a check run's
// update), unless a test told it to fail: a status, a body that is not JSON, a huge
// body, or an answer that comes too late.
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kport/http/router.h"
#include "kport/http/server.h"

namespace kport::testing {

struct ForgeRequest {
  std::string method, path, body;
  std::string target;  // as sent, percent-encoded
  http::HeaderList headers;
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
      m_requests.push_back(ForgeRequest{req.method, req.path, req.body, req.target, req.headers});
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
};

}  // namespace kport::testing
