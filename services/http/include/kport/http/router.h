// Router: maps (method, path) to a handler, extracting path parameters.
//
// Patterns are literal segments and `{name}` segments that capture one path segment
// ("/api/v1/commits/{sha}"); a pattern whose last segment is `{name...}` captures the
// rest of the path, slashes included ("/static/{file...}"). Literal segments win over
// captures when both match. The route name labels metrics and defaults to the pattern,
// so metric cardinality is bounded by the number of routes, never by the paths seen.
//
// Thread-safety: configure the Router before Server::start(); afterwards it is
// immutable and match() may be called from any thread. add() throws
// std::invalid_argument for a malformed or duplicate pattern (a startup bug).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kport/http/message.h"

namespace kport::http {

// Completes a request. Call exactly once, from any thread, at any later time (long-poll).
// A second call is ignored with a warning. A handler that never calls it leaves the
// client waiting until the server's drain deadline: that is a bug in the handler.
using Reply = std::function<void(Response)>;
// Runs on a server I/O thread; must not block. Exceptions thrown before replying become
// a JSON 500 ("internal") and are logged.
using Handler = std::function<void(Request&&, Reply)>;
// Runs on a server I/O thread and answers at once; exceptions become a JSON 500.
using SyncHandler = std::function<Response(const Request&)>;

struct Route {
  std::string method;
  std::string pattern;
  std::string name;
  Handler handler;  // exactly one of handler / sync_handler is set
  SyncHandler sync_handler;
  std::size_t id = 0;  // index in Router::routes()
};

// The outcome of a lookup.
struct Match {
  enum class Kind { found, not_found, method_not_allowed, bad_parameter };
  Kind kind = Kind::not_found;
  const Route* route = nullptr;
  std::string allow;  // "GET, POST" when kind is method_not_allowed
  std::string error;  // why, when kind is bad_parameter
};

class Router {
 public:
  Router();
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  void add(std::string_view method, std::string_view pattern, Handler handler, std::string route_name = {});
  void add_sync(std::string_view method, std::string_view pattern, SyncHandler handler, std::string route_name = {});
  // Serves GET/HEAD for every path under `prefix` ("/static/"); the rest of the path is
  // the parameter "path". Sugar for add_sync(method, prefix + "{path...}", ...).
  void add_prefix(std::string_view prefix, SyncHandler handler, std::string route_name = {});

  // Looks `path` up for `method`. `path` is still percent-encoded, so an encoded '/'
  // stays inside its segment; captured parameters are decoded into `params`, and one that
  // is malformed, holds NUL or is not UTF-8 gives bad_parameter. HEAD falls back to GET
  // when no HEAD route exists.
  Match match(std::string_view method, std::string_view path, ParamMap& params) const;

  const std::vector<std::unique_ptr<Route>>& routes() const noexcept { return m_routes; }

  struct Node;  // the segment trie; defined in router.cpp

 private:
  void insert(std::unique_ptr<Route> route);
  std::vector<std::unique_ptr<Route>> m_routes;
  std::unique_ptr<Node> m_root;
};

}  // namespace kport::http
