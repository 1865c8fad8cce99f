// libFuzzer target for everything kport::http does with bytes from the network before a
// handler runs: the Beast request parser under the server's limits, routing of the raw
// target, percent-decoding, query parsing, and URL parsing in the client.
//
// Invariants checked beyond "does not crash": whatever the decoders accept is valid
// UTF-8 without NUL, and a parsed URL always has a host and a non-zero port.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "kport/http/client.h"
#include "kport/http/router.h"
#include "kport/http/uri.h"

namespace {

using namespace kport::http;

void require(bool ok) {
  if (!ok) std::abort();
}

void check_clean(std::string_view s) {
  require(is_valid_utf8(s));
  require(s.find('\0') == std::string_view::npos);
}

const Router& router() {
  static const std::unique_ptr<Router> r = [] {
    auto out = std::make_unique<Router>();
    auto ok = [](const Request&) { return text_response(200, ""); };
    out->add_sync("GET", "/api/v1/commits/{sha}", ok);
    out->add_sync("GET", "/api/v1/targets/{target}/bringup", ok);
    out->add_sync("GET", "/api/v1/jobs/next", ok);
    out->add_sync("DELETE", "/api/v1/jobs/{id}", ok);
    out->add_prefix("/static/", ok);
    return out;
  }();
  return *r;
}

void fuzz_target(std::string_view method, std::string_view target) {
  std::size_t q = target.find('?');
  ParamMap params;
  Match m = router().match(method, target.substr(0, q), params);
  if (m.kind == Match::Kind::found) {
    require(m.route != nullptr);
    for (const auto& [name, value] : params) check_clean(value);
  }
  if (m.kind == Match::Kind::method_not_allowed) require(!m.allow.empty());
  if (q != std::string_view::npos)
    if (auto query = parse_query(target.substr(q + 1)); query.ok())
      for (const auto& [k, v] : *query) {
        check_clean(k);
        check_clean(v);
      }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (auto d = percent_decode(in, true); d.ok()) check_clean(*d);
  if (auto u = parse_url(in); u.ok()) require(!u->host.empty() && u->port != 0 && !u->target.empty());

  namespace bhttp = boost::beast::http;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.body_limit(1u << 16);
  parser.header_limit(8192);
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t used = parser.put(boost::asio::buffer(data, size), ec);
  require(used <= size);
  if (!ec && parser.is_done()) {
    const auto& msg = parser.get();
    fuzz_target(msg.method_string(), msg.target());
  }
  return 0;
}
