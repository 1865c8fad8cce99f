// Metrics: request counters and latency histograms per route, rendered in the
// Prometheus text exposition format, plus gauges and collectors that services add.
//
//   kport_http_requests_total{route="/api/v1/best",method="GET",code="2xx"} 12
//   kport_http_request_duration_seconds_bucket{route="/api/v1/best",method="GET",le="0.005"} 11
//
// A Server registers one (route, method) per Router entry, plus route="unmatched",
// method="any" for requests that matched no route (404, 405, malformed, timeouts).
//
// Thread-safety: record() is lock-free (atomics) and may run on any thread; adding
// routes, gauges and collectors takes a mutex; render_prometheus() may run concurrently
// with everything. Gauge and collector callbacks run on the rendering thread, under the
// Metrics lock: they must not call back into this Metrics.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kport::http {

// Counters for one (route, method). Stable address for the Metrics' lifetime.
class RouteStats {
 public:
  // Upper bounds in seconds of the latency buckets (the +Inf bucket is implicit).
  static constexpr std::array<double, 12> k_bounds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                   0.05,   0.1,   0.25,   0.5,   1.0,  5.0};
  RouteStats(std::string route, std::string method);
  void record(int status, std::chrono::nanoseconds elapsed) noexcept;
  std::uint64_t count(int status_class) const noexcept;  // status_class 1..5
  const std::string& route() const noexcept { return m_route; }
  const std::string& method() const noexcept { return m_method; }

 private:
  friend class Metrics;
  std::string m_route, m_method;
  std::array<std::atomic<std::uint64_t>, 5> m_by_class{};
  std::array<std::atomic<std::uint64_t>, k_bounds.size() + 1> m_buckets{};
  std::atomic<std::uint64_t> m_sum_ns{0};
};

class Metrics {
 public:
  using GaugeFn = std::function<double()>;
  // Appends whole Prometheus lines (with their # HELP / # TYPE) to the text.
  using CollectorFn = std::function<void(std::string& out)>;

  // Returns the stats for (route, method), creating them on first use.
  RouteStats& route(std::string_view route, std::string_view method);
  // Registers a gauge `name` (e.g. "kport_queue_depth") read at render time.
  void add_gauge(std::string name, std::string help, GaugeFn fn);
  void add_collector(CollectorFn fn);

  // Gauges the server keeps itself.
  std::atomic<std::int64_t> connections_open{0};
  std::atomic<std::uint64_t> connections_total{0};
  std::atomic<std::uint64_t> connections_rejected{0};
  std::atomic<std::int64_t> connections_reserved{0};       // open connections in the reserve
  std::atomic<std::uint64_t> connections_evicted{0};       // idle reserve connections closed for room
  std::atomic<std::uint64_t> connections_unprivileged{0};  // reserve connections refused at their request
  std::atomic<std::uint64_t> tls_handshakes_failed{0};     // HTTPS: handshakes that failed or timed out
  std::atomic<std::uint64_t> tls_plain_requests{0};        // HTTPS: connections that sent plain HTTP

  std::string render_prometheus() const;

 private:
  struct Gauge {
    std::string name, help;
    GaugeFn fn;
  };
  mutable std::mutex m_mu;
  std::deque<RouteStats> m_routes;
  std::vector<Gauge> m_gauges;
  std::vector<CollectorFn> m_collectors;
};

// Appends the standard process metrics (process_cpu_seconds_total,
// process_start_time_seconds, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds), read from
// /proc/self now. A value that cannot be read is left out. Any thread.
void append_process_metrics(std::string& out);

}  // namespace kport::http
