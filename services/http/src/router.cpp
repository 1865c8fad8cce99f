#include "kport/http/router.h"

#include <stdexcept>
#include <utility>

#include "kport/http/uri.h"

namespace kport::http {

// A trie over path segments. Literal children are tried before the capture child, and
// the "rest" capture last, so "/jobs/next" beats "/jobs/{id}" whatever the order of add().
struct Router::Node {
  std::map<std::string, std::unique_ptr<Node>, std::less<>> literals;
  std::unique_ptr<Node> capture;
  std::string capture_name;
  std::vector<const Route*> routes;       // routes ending here, one per method
  std::vector<const Route*> rest_routes;  // "{name...}" routes ending here
  std::string rest_name;
};

namespace {

constexpr std::size_t k_max_captures = 16;

struct Capture {
  std::string_view name, raw;
};

// Splits off the next segment of a path that starts after a '/'.
std::string_view next_segment(std::string_view& rest) {
  std::size_t slash = rest.find('/');
  std::string_view seg = rest.substr(0, slash);
  rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  return seg;
}

// A node holds a handful of methods at most; a linear scan beats a map here.
const Route* find_method(const std::vector<const Route*>& routes, std::string_view method) {
  for (const Route* r : routes)
    if (r->method == method) return r;
  if (method == "HEAD")
    for (const Route* r : routes)
      if (r->method == "GET") return r;
  return nullptr;
}

struct Walker {
  std::string_view method;
  Capture captures[k_max_captures];
  std::size_t n = 0;
  const Route* found = nullptr;
  const std::vector<const Route*>* path_only = nullptr;  // path matched, method did not

  bool accept(const std::vector<const Route*>& routes) {
    if (routes.empty()) return false;
    if ((found = find_method(routes, method))) return true;
    if (!path_only) path_only = &routes;
    return false;
  }

  // `rest` is the unconsumed path; `done` is true when no segment is left.
  bool walk(const Router::Node* node, std::string_view rest, bool done) {
    if (done) {
      if (accept(node->routes)) return true;
      return try_rest(node, rest);
    }
    std::string_view after = rest;
    std::string_view seg = next_segment(after);
    bool last = seg.size() == rest.size();
    if (auto it = node->literals.find(seg); it != node->literals.end())
      if (walk(it->second.get(), after, last)) return true;
    if (node->capture && n < k_max_captures) {
      captures[n++] = {node->capture_name, seg};
      if (walk(node->capture.get(), after, last)) return true;
      --n;
    }
    return try_rest(node, rest);
  }

  bool try_rest(const Router::Node* node, std::string_view rest) {
    if (node->rest_routes.empty() || n >= k_max_captures) return false;
    captures[n++] = {node->rest_name, rest};
    if (accept(node->rest_routes)) return true;
    --n;
    return false;
  }
};

bool is_capture(std::string_view seg) { return seg.size() >= 3 && seg.front() == '{' && seg.back() == '}'; }

}  // namespace

Router::Router() : m_root(std::make_unique<Node>()) {}
Router::~Router() = default;

void Router::insert(std::unique_ptr<Route> route) {
  std::string_view pattern = route->pattern;
  if (pattern.empty() || pattern.front() != '/')
    throw std::invalid_argument("route pattern must start with '/': " + route->pattern);
  Node* node = m_root.get();
  std::string_view rest = pattern.substr(1);
  bool done = rest.empty();
  bool is_rest = false;
  while (!done) {
    std::string_view after = rest;
    std::string_view seg = next_segment(after);
    done = seg.size() == rest.size();
    rest = after;
    if (is_capture(seg) && seg.size() > 5 && seg.substr(seg.size() - 4) == "...}") {
      if (!done) throw std::invalid_argument("'{name...}' must be the last segment: " + route->pattern);
      std::string name(seg.substr(1, seg.size() - 5));
      if (!node->rest_routes.empty() && node->rest_name != name)
        throw std::invalid_argument("conflicting parameter name in " + route->pattern);
      node->rest_name = std::move(name);
      is_rest = true;
      break;
    }
    if (is_capture(seg)) {
      std::string name(seg.substr(1, seg.size() - 2));
      if (!node->capture) {
        node->capture = std::make_unique<Node>();
        node->capture_name = name;
      } else if (node->capture_name != name) {
        throw std::invalid_argument("conflicting parameter name {" + name + "} in " + route->pattern);
      }
      node = node->capture.get();
    } else {
      auto& child = node->literals[std::string(seg)];
      if (!child) child = std::make_unique<Node>();
      node = child.get();
    }
  }
  auto& list = is_rest ? node->rest_routes : node->routes;
  for (const Route* r : list)
    if (r->method == route->method)
      throw std::invalid_argument("duplicate route " + route->method + " " + route->pattern);
  route->id = m_routes.size();
  list.push_back(route.get());
  m_routes.push_back(std::move(route));
}

void Router::add(std::string_view method, std::string_view pattern, Handler handler, std::string route_name) {
  auto r = std::make_unique<Route>();
  r->method = method;
  r->pattern = pattern;
  r->name = route_name.empty() ? std::string(pattern) : std::move(route_name);
  r->handler = std::move(handler);
  insert(std::move(r));
}

void Router::add_sync(std::string_view method, std::string_view pattern, SyncHandler handler, std::string route_name) {
  auto r = std::make_unique<Route>();
  r->method = method;
  r->pattern = pattern;
  r->name = route_name.empty() ? std::string(pattern) : std::move(route_name);
  r->sync_handler = std::move(handler);
  insert(std::move(r));
}

void Router::add_prefix(std::string_view prefix, SyncHandler handler, std::string route_name) {
  std::string pattern(prefix);
  if (pattern.empty() || pattern.back() != '/') pattern.push_back('/');
  pattern += "{path...}";
  add_sync("GET", pattern, std::move(handler), std::move(route_name));
}

// Captures are collected as views into the raw path and decoded only once the whole
// path matched, so a failed branch of the walk costs no allocation.
Match Router::match(std::string_view method, std::string_view path, ParamMap& params) const {
  Match m;
  if (path.empty() || path.front() != '/') return m;
  Walker w;
  w.method = method;
  std::string_view rest = path.substr(1);
  if (!w.walk(m_root.get(), rest, rest.empty())) {
    if (w.path_only) {
      m.kind = Match::Kind::method_not_allowed;
      for (const Route* r : *w.path_only) {
        if (!m.allow.empty()) m.allow += ", ";
        m.allow += r->method;
        if (r->method == "GET") m.allow += ", HEAD";
      }
    }
    return m;
  }
  for (std::size_t i = 0; i < w.n; ++i) {
    auto value = percent_decode(w.captures[i].raw);
    if (!value) {
      m.kind = Match::Kind::bad_parameter;
      m.error = "path parameter '" + std::string(w.captures[i].name) + "': " + value.error().message;
      return m;
    }
    params.insert_or_assign(std::string(w.captures[i].name), std::move(*value));
  }
  m.kind = Match::Kind::found;
  m.route = w.found;
  return m;
}

}  // namespace kport::http
