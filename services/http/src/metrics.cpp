#include "kport/http/metrics.h"

#include <cstdio>

namespace kport::http {
namespace {

// Label values are route patterns and method names we chose, but escape anyway so a
// strange route name cannot break the exposition format.
void append_label(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
}

void append_number(std::string& out, double v) {
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%.9g", v);
  out.append(buf, static_cast<std::size_t>(n));
}

void append_labels(std::string& out, const RouteStats& s) {
  out += "{route=\"";
  append_label(out, s.route());
  out += "\",method=\"";
  append_label(out, s.method());
  out.push_back('"');
}

}  // namespace

RouteStats::RouteStats(std::string route, std::string method)
    : m_route(std::move(route)), m_method(std::move(method)) {}

// Relaxed atomics: each counter only has to be exact by itself; a scrape that sees the
// count and the sum of one request a moment apart is harmless.
void RouteStats::record(int status, std::chrono::nanoseconds elapsed) noexcept {
  int cls = status / 100;
  if (cls < 1 || cls > 5) cls = 5;
  m_by_class[static_cast<std::size_t>(cls - 1)].fetch_add(1, std::memory_order_relaxed);
  double seconds = std::chrono::duration<double>(elapsed).count();
  std::size_t b = 0;
  while (b < k_bounds.size() && seconds > k_bounds[b]) ++b;
  m_buckets[b].fetch_add(1, std::memory_order_relaxed);
  auto ns = elapsed.count() < 0 ? 0 : static_cast<std::uint64_t>(elapsed.count());
  m_sum_ns.fetch_add(ns, std::memory_order_relaxed);
}

std::uint64_t RouteStats::count(int status_class) const noexcept {
  if (status_class < 1 || status_class > 5) return 0;
  return m_by_class[static_cast<std::size_t>(status_class - 1)].load(std::memory_order_relaxed);
}

RouteStats& Metrics::route(std::string_view route, std::string_view method) {
  std::lock_guard lock(m_mu);
  for (auto& s : m_routes)
    if (s.route() == route && s.method() == method) return s;
  return m_routes.emplace_back(std::string(route), std::string(method));
}

void Metrics::add_gauge(std::string name, std::string help, GaugeFn fn) {
  std::lock_guard lock(m_mu);
  m_gauges.push_back({std::move(name), std::move(help), std::move(fn)});
}

void Metrics::add_collector(CollectorFn fn) {
  std::lock_guard lock(m_mu);
  m_collectors.push_back(std::move(fn));
}

std::string Metrics::render_prometheus() const {
  std::string out;
  out.reserve(4096);
  std::lock_guard lock(m_mu);
  out +=
      "# HELP kport_http_requests_total HTTP requests answered, by route and status class.\n"
      "# TYPE kport_http_requests_total counter\n";
  for (const auto& s : m_routes) {
    for (int cls = 1; cls <= 5; ++cls) {
      std::uint64_t n = s.count(cls);
      if (n == 0) continue;
      out += "kport_http_requests_total";
      append_labels(out, s);
      out += ",code=\"";
      out.push_back(static_cast<char>('0' + cls));
      out += "xx\"} ";
      out += std::to_string(n);
      out.push_back('\n');
    }
  }
  out +=
      "# HELP kport_http_request_duration_seconds Time from a complete request to its response.\n"
      "# TYPE kport_http_request_duration_seconds histogram\n";
  // Buckets are stored per interval and summed here, because Prometheus buckets are
  // cumulative ("le") and adding into all upper buckets on each request costs more.
  for (const auto& s : m_routes) {
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b <= RouteStats::k_bounds.size(); ++b) {
      cumulative += s.m_buckets[b].load(std::memory_order_relaxed);
      out += "kport_http_request_duration_seconds_bucket";
      append_labels(out, s);
      out += ",le=\"";
      if (b == RouteStats::k_bounds.size())
        out += "+Inf";
      else
        append_number(out, RouteStats::k_bounds[b]);
      out += "\"} ";
      out += std::to_string(cumulative);
      out.push_back('\n');
    }
    out += "kport_http_request_duration_seconds_sum";
    append_labels(out, s);
    out += "} ";
    append_number(out, static_cast<double>(s.m_sum_ns.load(std::memory_order_relaxed)) * 1e-9);
    out += "\nkport_http_request_duration_seconds_count";
    append_labels(out, s);
    out += "} " + std::to_string(cumulative) + "\n";
  }
  auto gauge = [&out](std::string_view name, std::string_view help, double v) {
    out += "# HELP ";
    out += name;
    out.push_back(' ');
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += " gauge\n";
    out += name;
    out.push_back(' ');
    append_number(out, v);
    out.push_back('\n');
  };
  gauge("kport_http_connections_open", "Open client connections.", static_cast<double>(connections_open.load()));
  out +=
      "# HELP kport_http_connections_total Connections accepted.\n"
      "# TYPE kport_http_connections_total counter\nkport_http_connections_total " +
      std::to_string(connections_total.load()) + "\n";
  out +=
      "# HELP kport_http_connections_rejected_total Connections refused over max_connections.\n"
      "# TYPE kport_http_connections_rejected_total counter\n"
      "kport_http_connections_rejected_total " +
      std::to_string(connections_rejected.load()) + "\n";
  gauge("kport_http_connections_reserved", "Open connections admitted into the reserve.",
        static_cast<double>(connections_reserved.load()));
  out +=
      "# HELP kport_http_connections_evicted_total Idle reserve connections closed to admit new ones.\n"
      "# TYPE kport_http_connections_evicted_total counter\nkport_http_connections_evicted_total " +
      std::to_string(connections_evicted.load()) + "\n";
  out +=
      "# HELP kport_http_connections_unprivileged_total Reserve connections whose first request was not privileged.\n"
      "# TYPE kport_http_connections_unprivileged_total counter\nkport_http_connections_unprivileged_total " +
      std::to_string(connections_unprivileged.load()) + "\n";
  out +=
      "# HELP kport_http_tls_handshakes_failed_total HTTPS connections whose TLS handshake failed or timed out.\n"
      "# TYPE kport_http_tls_handshakes_failed_total counter\nkport_http_tls_handshakes_failed_total " +
      std::to_string(tls_handshakes_failed.load()) + "\n";
  out +=
      "# HELP kport_http_tls_plain_requests_total Connections to an HTTPS port that sent plain HTTP (answered 400).\n"
      "# TYPE kport_http_tls_plain_requests_total counter\nkport_http_tls_plain_requests_total " +
      std::to_string(tls_plain_requests.load()) + "\n";
  for (const auto& g : m_gauges) gauge(g.name, g.help, g.fn());
  for (const auto& c : m_collectors) c(out);
  return out;
}

}  // namespace kport::http
