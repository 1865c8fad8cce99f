#include "api.h"

namespace kport::watcher {
namespace json = boost::json;

namespace {

http::ClientOptions client_options(std::string ca_file) {
  http::ClientOptions o;
  o.ca_file = std::move(ca_file);
  return o;
}

}  // namespace

Api::Api(std::string server, std::string token, std::string ca_file)
    : m_server(std::move(server)), m_token(std::move(token)), m_client(client_options(std::move(ca_file))) {
  while (!m_server.empty() && m_server.back() == '/') m_server.pop_back();
}

Result<json::value> Api::call(std::string_view method, const std::string& path, const json::value* body) {
  http::HeaderList headers;
  if (!m_token.empty()) headers.emplace_back("Authorization", "Bearer " + m_token);
  std::string text = body ? json::serialize(*body) : std::string();
  auto r = m_client.fetch(method, m_server + path, text, headers);
  if (!r.ok()) return make_error(Errc::unavailable, std::string(method) + " " + path + ": " + r.error().message);
  boost::system::error_code ec;
  json::value doc = json::parse(r->body, ec);
  if (r->status >= 200 && r->status < 300) {
    if (ec)
      return make_error(Errc::bad_json, std::string(method) + " " + path + " answered something that is not JSON");
    return doc;
  }
  std::string message = r->body.substr(0, 300);
  if (!ec && doc.is_object())
    if (const auto* e = doc.as_object().if_contains("error"); e && e->is_object())
      if (const auto* m = e->as_object().if_contains("message"); m && m->is_string())
        message = std::string(m->as_string());
  Errc code = r->status == 404   ? Errc::not_found
              : r->status == 401 ? Errc::unauthorized
              : r->status == 403 ? Errc::forbidden
              : r->status == 409 ? Errc::conflict
              : r->status == 422 ? Errc::unprocessable
              : r->status >= 500 ? Errc::unavailable
                                 : Errc::invalid_argument;
  return make_error(code, std::string(method) + " " + path + " -> " + std::to_string(r->status) + ": " + message);
}

}  // namespace kport::watcher
