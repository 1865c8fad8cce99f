#include "kport/http/metrics.h"

#include <gtest/gtest.h>

namespace kport::http {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(Metrics, CountsByStatusClassAndBucketsLatency) {
  Metrics m;
  auto& best = m.route("/api/v1/best", "GET");
  best.record(200, microseconds{300});
  best.record(204, milliseconds{3});
  best.record(404, milliseconds{20});
  best.record(503, std::chrono::seconds{30});
  EXPECT_EQ(&m.route("/api/v1/best", "GET"), &best) << "one slot per (route, method)";
  std::string text = m.render_prometheus();
  EXPECT_NE(text.find(R"(kport_http_requests_total{route="/api/v1/best",method="GET",code="2xx"} 2)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(code="4xx"} 1)"), std::string::npos);
  EXPECT_NE(text.find(R"(code="5xx"} 1)"), std::string::npos);
  EXPECT_NE(text.find(R"(_bucket{route="/api/v1/best",method="GET",le="0.0005"} 1)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(_bucket{route="/api/v1/best",method="GET",le="0.005"} 2)"), std::string::npos);
  EXPECT_NE(text.find(R"(_bucket{route="/api/v1/best",method="GET",le="+Inf"} 4)"), std::string::npos);
  EXPECT_NE(text.find(R"(kport_http_request_duration_seconds_count{route="/api/v1/best",method="GET"} 4)"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE kport_http_request_duration_seconds histogram"), std::string::npos);
}

TEST(Metrics, RendersServiceGaugesAndCollectors) {
  Metrics m;
  int depth = 7;
  m.add_gauge("kport_queue_depth", "Jobs waiting.", [&depth] { return static_cast<double>(depth); });
  m.add_collector([](std::string& out) { out += "kport_runners_online{role=\"gpu\"} 3\n"; });
  std::string text = m.render_prometheus();
  EXPECT_NE(text.find("# TYPE kport_queue_depth gauge\nkport_queue_depth 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kport_runners_online{role=\"gpu\"} 3\n"), std::string::npos);
  depth = 9;
  EXPECT_NE(m.render_prometheus().find("kport_queue_depth 9\n"), std::string::npos);
}

TEST(Metrics, EscapesLabelValues) {
  Metrics m;
  m.route("we\"ird\\route", "GET").record(200, microseconds{1});
  EXPECT_NE(m.render_prometheus().find(R"(route="we\"ird\\route")"), std::string::npos);
}

}  // namespace
}  // namespace kport::http
