// The fixture of the OpenAPI document tests: a coordinator (with a hook secret) whose
// served document is loaded into a SchemaCheck, and `ask`, which sends a request and
// validates the answer against what the document says of its operation, status and
// media type, recording which answers were validated.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio.hpp>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hooks/hook_fixture.h"
#include "schema_check.h"

namespace kport::testing {

class OpenApiConformance : public HookTest {
 protected:
  void SetUp() override {
    HookTest::SetUp();
    auto doc = get("/api/v1/openapi.json");
    ASSERT_EQ(doc.status, 200) << doc.raw;
    schema = std::make_unique<SchemaCheck>(doc.body);
  }

  // Sends a request to `path` (the operation `method tmpl`) and validates the answer
  // against the document; the reply is returned for the scenario to go on with.
  JsonReply ask(const std::string& method, const std::string& tmpl, const std::string& path,
                const std::string& body = "", const std::string& token = "", http::HeaderList headers = {},
                const std::string& content_type = "application/json") {
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    if (!body.empty()) headers.emplace_back("Content-Type", content_type);
    std::string upper = method;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto r = client.fetch(upper, url(path), body, headers);
    JsonReply out;
    if (!r.ok()) {
      ADD_FAILURE() << method << " " << path << ": " << r.error().message;
      return out;
    }
    out.status = r->status;
    out.raw = r->body;
    const std::string media(r->header("Content-Type"));
    std::string why;
    const boost::json::value* s = schema->answer_schema(method, tmpl, r->status, media, why);
    if (!s) {
      ADD_FAILURE() << why << "\n" << r->body.substr(0, 400);
      return out;
    }
    const std::string key = method + " " + tmpl + " " + std::to_string(r->status);
    seen.insert(key);
    // An answer the handler gives must be listed with its status; "default" is for what
    // the server answers on any route (413, 500, 503 when overloaded).
    const auto& responses = schema->document().at("paths").at(tmpl).at(method).at("responses").as_object();
    if (!responses.contains(std::to_string(r->status)))
      ADD_FAILURE() << key << " is answered but not documented with its status\n" << r->body.substr(0, 300);
    last_www_authenticate = std::string(r->header("WWW-Authenticate"));
    if (media.rfind("application/json", 0) == 0) {
      auto v = r->json();
      if (!v.ok()) {
        ADD_FAILURE() << key << ": not JSON: " << r->body.substr(0, 200);
        return out;
      }
      out.body = *v;
      for (const auto& e : schema->validate(*v, *s))
        ADD_FAILURE() << key << ": " << e << "\n" << r->body.substr(0, 600);
      validated.insert(key);
    }
    return out;
  }
  // The same for a JSON body; a body the handler accepted (2xx) must also be one the
  // document's request schema accepts.
  JsonReply ask_json(const std::string& method, const std::string& tmpl, const std::string& path,
                     const boost::json::value& body, const std::string& token) {
    auto r = ask(method, tmpl, path, boost::json::serialize(body), token);
    if (r.status < 200 || r.status > 299) return r;
    const auto& op = schema->document().at("paths").at(tmpl).at(method).as_object();
    const auto* request = op.if_contains("requestBody");
    if (!request) {
      ADD_FAILURE() << method << " " << tmpl << " took a body but documents none";
      return r;
    }
    for (const auto& e : schema->validate(body, request->at("content").at("application/json").at("schema")))
      ADD_FAILURE() << method << " " << tmpl << " request: " << e << "\n" << boost::json::serialize(body);
    return r;
  }

  // The head of the event stream's answer (the stream itself never ends).
  std::string event_stream_head() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), proc->port()});
    const std::string request = "GET /api/v1/events?topics=jobs,runners HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    boost::asio::write(socket, boost::asio::buffer(request));
    std::string head;
    boost::system::error_code ec;
    boost::asio::read_until(socket, boost::asio::dynamic_buffer(head), "\r\n\r\n", ec);
    return head;
  }

  // Every documented operation with the values its path parameters take here.
  std::vector<std::pair<std::string, std::string>> operations(const std::string& auth) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [path, item] : schema->document().at("paths").as_object())
      for (const auto& [method, op] : item.as_object())
        if (op.at("x-kport-auth").as_string() == auth) out.emplace_back(std::string(method), std::string(path));
    return out;
  }
  std::size_t operations_total() const {
    std::size_t n = 0;
    for (const auto& [path, item] : schema->document().at("paths").as_object()) n += item.as_object().size();
    return n;
  }
  static std::string concrete(std::string path) {
    const std::pair<const char*, std::string> values[] = {{"{id}", "1"},
                                                          {"{sha256}", std::string(64, 'c')},
                                                          {"{sha}", std::string(40, 'a')},
                                                          {"{target}", "sm_90a"},
                                                          {"{instance}", "gemm.x"}};
    for (const auto& [name, value] : values)
      if (auto at = path.find(name); at != std::string::npos) path.replace(at, std::string(name).size(), value);
    return path;
  }

  std::unique_ptr<SchemaCheck> schema;
  std::set<std::string> seen, validated;
  std::string last_www_authenticate;
};

}  // namespace kport::testing
