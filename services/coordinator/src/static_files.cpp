#include "static_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kport/common/crypto.h"

namespace kport::coordinator {
namespace fs = std::filesystem;

const char* const k_content_security_policy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

namespace {

std::string content_type(const fs::path& p) {
  auto ext = p.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  return "application/octet-stream";
}

// True when If-None-Match names `etag` ("*", or a list of tags, weak ones included).
bool etag_matches(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    auto comma = header.find(',');
    std::string_view tag = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
    while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
  }
  return false;
}

// index.html names the bundle and the stylesheet with a hash of their content
// (?v=..., written by web/scripts/bundle.mjs): such a URL never changes its content, so
// browsers keep it for good. Everything else is revalidated on each use, which costs a
// 304 when the file did not change (the ETag is a hash of the content).
http::Response serve(const fs::path& root, std::string_view rel, const http::Request& req) {
  if (rel.find('\0') != std::string_view::npos)
    return http::error_response(make_error(Errc::invalid_argument, "bad path"));
  std::error_code ec;
  fs::path full = fs::weakly_canonical(root / fs::path(std::string(rel)).relative_path(), ec);
  // Inside the root, not merely a sibling whose name starts like it ("web-old/...").
  fs::path inside = ec ? fs::path() : full.lexically_relative(root);
  if (ec || inside.empty() || *inside.begin() == ".." || !fs::is_regular_file(full, ec))
    return http::error_response(make_error(Errc::not_found, "no such page: /" + std::string(rel)));
  std::ifstream in(full, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  std::string body = data.str();
  std::string etag = "\"" + crypto::sha256_hex(body).substr(0, 24) + "\"";
  bool unchanged = etag_matches(req.header("If-None-Match"), etag);
  http::Response res = unchanged ? http::text_response(304, std::string(), std::string())
                                 : http::text_response(200, std::move(body), content_type(full));
  res.set_header("Content-Security-Policy", k_content_security_policy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("ETag", etag);
  bool versioned = full.extension() != ".html" && !req.query_or("v").empty();
  res.set_header("Cache-Control", versioned ? "public, max-age=31536000, immutable" : "no-cache");
  return res;
}

}  // namespace

void add_static_routes(http::Router& router, const std::string& dir) {
  std::error_code ec;
  fs::path root = fs::weakly_canonical(fs::path(dir), ec);
  router.add_sync("GET", "/", [root](const http::Request& req) { return serve(root, "index.html", req); }, "/");
  router.add_prefix("/static/", [root](const http::Request& req) { return serve(root, req.param("path"), req); }, "/static/");
}

}  // namespace kport::coordinator
