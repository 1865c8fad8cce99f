#include "static_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

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

http::Response serve(const fs::path& root, std::string_view rel) {
  if (rel.find('\0') != std::string_view::npos)
    return http::error_response(make_error(Errc::invalid_argument, "bad path"));
  std::error_code ec;
  fs::path full = fs::weakly_canonical(root / fs::path(std::string(rel)).relative_path(), ec);
  auto root_str = root.string();
  if (ec || full.string().compare(0, root_str.size(), root_str) != 0 || !fs::is_regular_file(full, ec))
    return http::error_response(make_error(Errc::not_found, "no such page: /" + std::string(rel)));
  std::ifstream in(full, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  http::Response res = http::text_response(200, data.str(), content_type(full));
  res.set_header("Content-Security-Policy", k_content_security_policy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", full.extension() == ".html" ? "no-cache" : "max-age=300");
  return res;
}

}  // namespace

void add_static_routes(http::Router& router, const std::string& dir) {
  std::error_code ec;
  fs::path root = fs::weakly_canonical(fs::path(dir), ec);
  router.add_sync("GET", "/", [root](const http::Request&) { return serve(root, "index.html"); }, "/");
  router.add_prefix("/static/", [root](const http::Request& req) { return serve(root, req.param("path")); }, "/static/");
}

}  // namespace kport::coordinator
