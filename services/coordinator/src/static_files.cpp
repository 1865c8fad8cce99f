#include "static_files.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "kport/common/crypto.h"
#include "kport/common/install_paths.h"
#include "kport/common/log.h"

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

struct StaticFile {
  std::string body;
  std::string etag;  // a hash of the content, quoted
  std::string type;
  bool html = false;
};
using StaticFiles = std::map<std::string, StaticFile, std::less<>>;

// Reads every file under `root` once, at start: a request then costs a map lookup and a
// copy, never a read or a hash on an I/O thread. node_modules (a developer's checkout)
// is never served. Files are taken as they are at start; a new bundle needs a restart,
// as a new binary does.
std::shared_ptr<const StaticFiles> load(const fs::path& root) {
  auto files = std::make_shared<StaticFiles>();
  std::error_code ec;
  std::size_t bytes = 0;
  fs::recursive_directory_iterator it(root, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && it->path().filename() == "node_modules") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    fs::path rel = it->path().lexically_relative(root);
    // A link pointing outside the root is not served.
    fs::path real = fs::weakly_canonical(it->path(), ec);
    fs::path inside = ec ? fs::path() : real.lexically_relative(root);
    if (ec || inside.empty() || *inside.begin() == "..") continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream data;
    data << in.rdbuf();
    if (!in && !in.eof()) {
      log::warn("static file not readable; not served", {{"file", it->path().string()}});
      continue;
    }
    StaticFile f;
    f.body = data.str();
    f.etag = "\"" + crypto::sha256_hex(f.body).substr(0, 24) + "\"";
    f.type = content_type(rel);
    f.html = rel.extension() == ".html";
    bytes += f.body.size();
    files->emplace(rel.generic_string(), std::move(f));
  }
  if (ec) log::warn("static files: cannot list the directory", {{"dir", root.string()}, {"error", ec.message()}});
  log::info("static files loaded", {{"dir", root.string()},
                                    {"files", static_cast<std::int64_t>(files->size())},
                                    {"bytes", static_cast<std::int64_t>(bytes)}});
  return files;
}

// index.html names the bundle and the stylesheet with a hash of their content
// (?v=..., written by web/scripts/bundle.mjs): such a URL never changes its content, so
// browsers keep it for good. Everything else is revalidated on each use, which costs a
// 304 when the file did not change (the ETag is a hash of the content).
http::Response serve(const StaticFiles& files, std::string_view rel, const http::Request& req) {
  if (rel.find('\0') != std::string_view::npos)
    return http::error_response(make_error(Errc::invalid_argument, "bad path"));
  // Only names of loaded files are served, so "..", links and absolute paths can reach
  // nothing else; normalizing lets "js/./app.js" find "js/app.js".
  std::string key = fs::path(std::string(rel)).lexically_normal().relative_path().generic_string();
  auto it = files.find(key);
  if (it == files.end()) return http::error_response(make_error(Errc::not_found, "no such page: /" + std::string(rel)));
  const StaticFile& f = it->second;
  bool unchanged = etag_matches(req.header("If-None-Match"), f.etag);
  http::Response res =
      unchanged ? http::text_response(304, std::string(), std::string()) : http::text_response(200, f.body, f.type);
  res.set_header("Content-Security-Policy", k_content_security_policy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("ETag", f.etag);
  bool versioned = !f.html && !req.query_or("v").empty();
  res.set_header("Cache-Control", versioned ? "public, max-age=31536000, immutable" : "no-cache");
  return res;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string find_dashboard() {
  auto found = install::find_data("web", KPORT_WEB_SOURCE_DIR, "index.html");
  return found ? found->string() : std::string();
}

// The README sends people to the root; a bare 404 there would look like a broken
// server. The answer says where the files were looked for and how to point at them:
// a short page for a browser, the usual JSON error for anything else.
void add_missing_dashboard_route(http::Router& router) {
  std::vector<fs::path> looked = install::data_candidates("web", KPORT_WEB_SOURCE_DIR);
  std::string list;
  std::string items;
  for (const auto& p : looked) {
    list += (list.empty() ? "" : ", ") + p.string();
    items += "<li><code>" + html_escape(p.string()) + "</code></li>";
  }
  std::string message =
      "the dashboard is not served: kport-coordinator was started without --web and found no "
      "index.html in " +
      list +
      "; start it with --web DIR (a checkout's web/ folder) or "
      "install the dashboard into share/kport/web beside the binary";
  std::string page =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>kport: no dashboard</title></head>"
      "<body><h1>kport: the dashboard is not installed here</h1>"
      "<p>kport-coordinator was started without <code>--web</code> and found no <code>index.html</code> in:</p><ul>" +
      items +
      "</ul><p>Start it with <code>--web DIR</code> (a checkout's <code>web/</code> folder), or install the "
      "dashboard into <code>share/kport/web</code> beside the binary (<code>cmake --install</code>, the "
      "kport-coordinator package). The API is served as usual under <code>/api/v1</code> (<a "
      "href=\"/api/v1/openapi.json\">its OpenAPI document</a>).</p>"
      "</body></html>";
  log::warn("dashboard not served: no --web and no dashboard files found", {{"looked_in", list}});
  router.add_sync(
      "GET", "/",
      [message, page](const http::Request& req) {
        if (req.header("Accept").find("text/html") == std::string_view::npos)
          return http::error_response(make_error(Errc::not_found, message));
        http::Response res = http::text_response(404, page, "text/html; charset=utf-8");
        res.set_header("Content-Security-Policy", k_content_security_policy);
        res.set_header("X-Content-Type-Options", "nosniff");
        return res;
      },
      "/");
}

void add_static_routes(http::Router& router, const std::string& dir) {
  std::error_code ec;
  fs::path root = fs::weakly_canonical(fs::path(dir), ec);
  auto files = load(root);
  router.add_sync(
      "GET", "/", [files](const http::Request& req) { return serve(*files, "index.html", req); }, "/");
  router.add_prefix(
      "/static/", [files](const http::Request& req) { return serve(*files, req.param("path"), req); }, "/static/");
}

}  // namespace kport::coordinator
