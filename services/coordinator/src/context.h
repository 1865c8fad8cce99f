// What every route handler of the coordinator shares: configuration, the store, the
// event hub, the claim broker, and the worker pool that runs database-bound work off
// the HTTP I/O threads.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kport/coordinator/config.h"
#include "kport/db/store.h"
#include "kport/http/events.h"
#include "kport/http/router.h"

namespace kport::coordinator {

class BestAsks;
class Families;
class BestIndex;
class ClaimBroker;

// Who sent a request, after authentication.
struct Principal {
  enum class Kind { anonymous, admin, runner } kind = Kind::anonymous;
  std::int64_t runner_id = 0;
  std::string runner_name;
};

class RegistrationGate;
class TokenCache;

struct Context {
  Config config;
  db::Store* store = nullptr;
  http::EventHub* events = nullptr;
  ClaimBroker* broker = nullptr;
  boost::asio::thread_pool* workers = nullptr;
  RegistrationGate* registration = nullptr;  // the registration token and its rate limit
  // Where a ref of a repository points, asked of the repository itself (the seam to the
  // outside git servers; git::remote_ref in production): the sha, nullopt when the ref
  // does not exist, unavailable when the repository cannot be reached.
  std::function<Result<std::optional<std::string>>(const std::string& url, const std::string& ref)> ref_lookup;
  TokenCache* tokens = nullptr;     // live runner tokens in memory, for the connection reserve
  BestAsks* best_asks = nullptr;    // /api/v1/best questions answered without a measurement
  BestIndex* best_index = nullptr;  // /api/v1/best's evidence in memory, never stale
  // The first-parent path from a good to a bad commit of a repository, oldest first, both
  // included (a bisection's commits; git::Workspace::first_parent_path over a cached
  // workspace beside the database in production).
  std::function<Result<std::vector<std::string>>(const std::string& url, const std::string& good,
                                                 const std::string& bad, std::size_t limit)>
      commit_path{};
  Families* families = nullptr;  // the op families known (families.h)
};

using BlockingHandler = std::function<http::Response(const http::Request&)>;

// Registers a handler that runs on the worker pool, since it may wait on the database.
// An exception it throws becomes a JSON 500.
void add_blocking(http::Router& router, Context& ctx, std::string_view method, std::string_view pattern,
                  BlockingHandler handler);

// ---- authentication (auth.cpp) -------------------------------------------------------
// The TOKEN of an "Authorization: Bearer TOKEN" header value (scheme case-insensitive);
// empty for anything else.
std::string_view bearer_of(std::string_view authorization);
// Whether an Authorization header value carries a token this coordinator accepts (admin,
// the current registration token, a live runner's), from memory only: what the HTTP
// server asks, on its I/O thread, before a request may take a reserve slot.
bool reserve_worthy(std::string_view authorization, Context& ctx);
// Reads "Authorization: Bearer TOKEN". No header: anonymous. An admin token compares in
// constant time; anything else is looked up as a runner token (stored hashed). A token
// that matches neither is unauthorized (401), never silently anonymous.
Result<Principal> authenticate(const http::Request& req, Context& ctx);
// Reads: anyone when open_reads, else any valid token.
Result<Principal> require_reader(const http::Request& req, Context& ctx);
// Writes reserved to operators.
Result<Principal> require_admin(const http::Request& req, Context& ctx);
// Runner calls (heartbeat, claim, results): a runner token (an admin token is refused:
// 403, so the actor of every upload is known).
Result<Principal> require_runner(const http::Request& req, Context& ctx);
// The registration token, compared in constant time.
// The current, unexpired registration token within the registration rate; on a 429
// retry_after_s says when to come back.
Status require_registration(const http::Request& req, Context& ctx, int& retry_after_s);

// ---- route groups (routes_*.cpp) -----------------------------------------------------
void add_catalog_routes(http::Router& router, Context& ctx);
void add_pipeline_routes(http::Router& router, Context& ctx);
void add_runner_routes(http::Router& router, Context& ctx);
void add_result_routes(http::Router& router, Context& ctx);
void add_artifact_routes(http::Router& router, Context& ctx);
void add_admin_routes(http::Router& router, Context& ctx);          // token rotation and revocation
void add_dashboard_routes(http::Router& router, Context& ctx);      // one answer per dashboard page
void add_pipeline_page_routes(http::Router& router, Context& ctx);  // the pipeline and job pages
void add_best_request_routes(http::Router& router, Context& ctx);   // /api/v1/best/requests
void add_dispatch_routes(http::Router& router, Context& ctx);       // kport-dispatch snapshots
void add_forge_routes(http::Router& router, Context& ctx);          // forge connections, /api/v1/deliveries
void add_bisection_routes(http::Router& router, Context& ctx);      // /api/v1/bisections

// The OpenAPI 3 document describing /api/v1 (openapi.cpp).
const std::string& openapi_document();

// Shared request helpers (routes_util.cpp).
// Parses a positive integer path parameter; invalid_argument naming it otherwise.
Result<std::int64_t> id_param(const http::Request& req, std::string_view name);
// Parses ?limit= (1..1000) and ?before= (cursor).
Status page_params(const http::Request& req, int& limit, std::optional<std::int64_t>& before);
// Parses an optional integer query parameter in min..max (absent: nullopt); anything
// else, such as ?since_ms=yesterday, is an invalid_argument naming the parameter.
Result<std::optional<std::int64_t>> int_query(const http::Request& req, std::string_view name, std::int64_t min,
                                              std::int64_t max);
// Parses an optional ?repo= naming a known repository (a kernel library); absent:
// nullopt; a name the store does not know is not_found, saying where the names are listed.
Result<std::optional<std::string>> repo_query(const http::Request& req, Context& ctx);

}  // namespace kport::coordinator

// Returns the error response from the enclosing handler when an auth check fails.
#define KPORT_AUTH(call)                                                     \
  do {                                                                       \
    auto kport_auth_ = (call);                                               \
    if (!kport_auth_.ok()) return http::error_response(kport_auth_.error()); \
  } while (0)
// Same for any Result-returning call whose error should become the response.
#define KPORT_HTTP_TRY(call) KPORT_AUTH(call)
