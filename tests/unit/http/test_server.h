// A Server on 127.0.0.1 port 0 with a Router that each test fills before start().
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "kport/http/client.h"
#include "kport/http/server.h"

namespace kport::http::test {

class ServerFixture : public ::testing::Test {
 protected:
  void start() {
    options.threads = 2;
    server = std::make_unique<Server>(options, router);
    auto st = server->start();
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_NE(server->port(), 0);
  }
  void TearDown() override {
    if (server) server->stop(std::chrono::milliseconds{500});
  }
  std::string url(std::string_view target) const {
    return "http://127.0.0.1:" + std::to_string(server->port()) + std::string(target);
  }
  ClientResponse get(std::string_view target) {
    auto r = client.fetch("GET", url(target));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? std::move(r).value() : ClientResponse{};
  }
  // The "code" of a JSON error body, "" when the body is not one.
  static std::string error_code(const ClientResponse& r) {
    auto v = r.json();
    if (!v.ok() || !v->is_object()) return {};
    auto* err = v->as_object().if_contains("error");
    if (!err || !err->is_object()) return {};
    auto* code = err->as_object().if_contains("code");
    return code && code->is_string() ? std::string(code->as_string()) : std::string();
  }

  ServerOptions options;
  std::shared_ptr<Router> router = std::make_shared<Router>();
  std::unique_ptr<Server> server;
  Client client;
};

}  // namespace kport::http::test
