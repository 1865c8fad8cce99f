// /api/v1/artifacts/{sha256}: content-addressed blobs (harness binaries, fatbins, logs).
// Upload is PUT of the raw bytes to the address of their SHA-256; the store verifies
// the content before it acknowledges, so an artifact is either whole or absent. A
// runner uploads into a job it holds (?job=ID&attempt=N, the holder rule of every other
// write into a job), so a runner without work cannot fill the store; the admin token
// uploads as an operator.
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "codec.h"
#include "context.h"
#include "kport/common/crypto.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

void add_artifact_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "PUT", "/api/v1/artifacts/{sha256}", [&ctx](const Request& req) {
    auto who = authenticate(req, ctx);
    KPORT_HTTP_TRY(who);
    if (who->kind == Principal::Kind::anonymous)
      return http::error_response(make_error(Errc::unauthorized, "uploading artifacts needs a runner or admin token"));
    std::string sha(req.param("sha256"));
    if (!crypto::is_sha256_hex(sha))
      return http::error_response(
          make_error(Errc::invalid_argument, "'" + sha + "' is not a SHA-256 (64 lowercase hex digits)"));
    auto job = int_query(req, "job", 1, std::numeric_limits<std::int64_t>::max());
    KPORT_HTTP_TRY(job);
    auto attempt = int_query(req, "attempt", 1, 1000);
    KPORT_HTTP_TRY(attempt);
    std::optional<db::JobWriter> writer;
    if (who->kind == Principal::Kind::runner) {
      if (!*job || !*attempt)
        return http::error_response(
            make_error(Errc::forbidden,
                       "a runner uploads artifacts only into a job it holds: add ?job=ID&attempt=N of its live lease"));
      writer = db::JobWriter{**job, who->runner_id, static_cast<int>(**attempt)};
    } else if (*job || *attempt) {
      return http::error_response(make_error(
          Errc::invalid_argument, "'job' and 'attempt' name a runner's lease; the admin token uploads without them"));
    }
    std::string name(req.query_or("name", sha));
    std::string kind(req.query_or("kind", "blob"));
    auto a = ctx.store->put_artifact(name, kind, sha, req.body, writer);
    if (!a.ok()) return http::error_response(a.error());
    return http::json_response(201, to_json(*a));
  });

  add_blocking(router, ctx, "GET", "/api/v1/artifacts/{sha256}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::string sha(req.param("sha256"));
    if (!crypto::is_sha256_hex(sha))
      return http::error_response(
          make_error(Errc::invalid_argument, "'" + sha + "' is not a SHA-256 (64 lowercase hex digits)"));
    auto a = ctx.store->get_artifact(sha);
    if (!a.ok()) return http::error_response(a.error());
    if (!*a) return http::error_response(make_error(Errc::not_found, "artifact " + sha + " is not stored"));
    if (req.query_or("meta") == "1") return http::json_ok(to_json(**a));
    std::ifstream in((*a)->path, std::ios::binary);
    std::ostringstream data;
    data << in.rdbuf();
    if (!in)
      return http::error_response(
          make_error(Errc::internal, "artifact " + sha + " is recorded but its file cannot be read"));
    Response res = http::text_response(200, data.str(), "application/octet-stream");
    res.set_header("X-Kport-Sha256", sha);
    std::string file = (*a)->name;
    for (char& c : file)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    res.set_header("Content-Disposition", "attachment; filename=\"" + file + "\"");
    return res;
  });
}

}  // namespace kport::coordinator
