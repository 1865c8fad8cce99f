#include "api.h"

#include <cctype>
#include <cstdio>
#include <ostream>

#include "kport/api/repository.h"

namespace kport::cli {
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

Reply Api::call(std::string_view method, const std::string& path, const json::value* body) {
  http::HeaderList h;
  if (!m_token.empty()) h.emplace_back("Authorization", "Bearer " + m_token);
  auto r = m_client.fetch(method, m_server + path, body ? json::serialize(*body) : std::string(), h);
  Reply out;
  if (!r.ok()) {
    out.error = "cannot reach the coordinator at " + m_server + ": " + r.error().message;
    return out;
  }
  out.status = r->status;
  boost::system::error_code ec;
  out.body = json::parse(r->body, ec);
  if (r->status >= 400) {
    out.error = "HTTP " + std::to_string(r->status);
    if (!ec && out.body.is_object())
      if (const auto* e = out.body.as_object().if_contains("error"); e && e->is_object())
        if (const auto* m = e->as_object().if_contains("message"); m && m->is_string())
          out.error = std::string(m->as_string());
  } else if (ec) {
    out.error = "the coordinator answered HTTP " + std::to_string(r->status) + " with a body that is not JSON";
    out.status = 0;
  }
  return out;
}

int exit_code_for(const Reply& r) {
  if (r.status == 0 || r.status == 401 || r.status == 403 || r.status >= 500) return 3;
  return 2;
}

int report(std::ostream& err, std::string_view cmd, std::string_view what, const Reply& r) {
  err << "kport " << cmd << ": " << what << (what.empty() ? "" : ": ") << r.error << "\n";
  return exit_code_for(r);
}

int unreadable(std::ostream& err, std::string_view cmd, std::string_view what, const Error& e) {
  err << "kport " << cmd << ": the coordinator's answer to " << what << " does not read: " << e.message << "\n";
  return 3;
}

std::int64_t num(const json::value& v, std::string_view key, std::int64_t fallback) {
  if (!v.is_object()) return fallback;
  const auto* x = v.as_object().if_contains(key);
  return x && x->is_number() ? x->to_number<std::int64_t>() : fallback;
}

std::string cell(const json::value& v, std::string_view key) {
  if (!v.is_object()) return "-";
  const auto* x = v.as_object().if_contains(key);
  if (!x || x->is_null()) return "-";
  if (x->is_string()) return x->as_string().empty() ? "-" : std::string(x->as_string());
  if (x->is_int64() || x->is_uint64()) return std::to_string(x->to_number<std::int64_t>());
  if (x->is_double()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", x->as_double());
    return buf;
  }
  if (x->is_bool()) return x->as_bool() ? "yes" : "no";
  return json::serialize(*x);
}

bool is_target(const std::string& t) {
  if (t.size() < 5 || t.rfind("sm_", 0) != 0) return false;
  std::string digits = t.substr(3);
  if (digits.back() == 'a' || digits.back() == 'f') digits.pop_back();
  return digits.size() >= 2 && digits.size() <= 3 && digits.find_first_not_of("0123456789") == std::string::npos;
}

std::string encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += static_cast<char>(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace kport::cli

namespace kport::cli {

int pick_repo(Api& api, std::string& repo, std::string_view cmd, std::ostream& err) {
  if (!repo.empty()) return 0;
  auto r = api.call("GET", "/api/v1/repositories");
  if (!r.error.empty()) return report(err, cmd, "cannot list repositories", r);
  auto repos = read_answer(r, api::read_repository_list);
  if (!repos.ok()) return unreadable(err, cmd, "GET /api/v1/repositories", repos.error());
  if (repos->size() == 1) {
    repo = repos->front().name;
    return 0;
  }
  err << "kport " << cmd << ": name the repository with --repo (" << repos->size() << " are registered:";
  for (const auto& i : *repos) err << " " << i.name;
  err << ")\n";
  return 2;
}

}  // namespace kport::cli
