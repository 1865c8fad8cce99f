// ns per kport-dispatch lookup over 1M random queries, and the peer: the same answers
// from GET /api/v1/best over HTTP in the same run.
//
//   kport-bench-dispatch --synthetic [--lookups N]
//       a snapshot built in memory, larger than today's H200 grids: gemm 3 dtypes x 160
//       shapes x 12 instances, attention 2 x 96 x 6, rmsnorm and softmax 3 x 64 x 6.
//   kport-bench-dispatch --server URL --gpu MODEL [--lookups N] [--http N]
//       the coordinator's snapshot of MODEL, then N /api/v1/best requests for random
//       queries (distinct, so each is computed), checked against the lookups.
// Queries: a random measured shape of a random table, each dimension scaled by a
// log-uniform factor in [1/4, 4] (head dim and causal kept), so most are between grid
// points and a few are exact. All strings are made before the clock starts.
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kport/dispatch/dispatch.h"
#include "kport/dispatch/snapshot_writer.h"
#include "kport/http/client.h"

namespace json = boost::json;
using kport::dispatch::Snapshot;

namespace {

struct Query {
  std::string op, dtype, shape;
};

std::string synthetic_snapshot() {
  std::mt19937_64 rng(7);
  kport::dispatch::SnapshotSource src{"NVIDIA H200", "9.0", 1'800'000'000'000, "2027-01-15T08:00:00.000Z", {}};
  std::int64_t id = 1;
  auto add = [&](const std::string& op, const std::string& dtype, const std::string& shape, int instances,
                 double work) {
    for (int i = 0; i < instances; ++i) {
      kport::porting::Measurement m;
      m.result_id = id++;
      m.instance = op + ".v" + std::to_string(i % 4) + ".cfg" + std::to_string(i);
      m.variant = "v" + std::to_string(i % 4);
      m.target = "sm_90a";
      m.commit = std::string(40, 'c');
      m.commit_ms = 1'700'000'000'000;
      m.driver = "580.65.06";
      m.shape = *kport::porting::Shape::parse(shape);
      m.median_us =
          (3.0 / (1 + i) + work * 1e-7 * (1 + 0.3 * i)) * std::uniform_real_distribution<double>(0.95, 1.05)(rng);
      m.stddev_us = m.median_us * 0.005;
      m.samples = 50;
      m.ratio = 1.0;
      m.measured_at_ms = m.commit_ms;
      src.figures.push_back({op, dtype, m});
    }
  };
  for (const char* dt : {"bf16", "fp16", "fp32"}) {
    for (int m : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768})
      for (auto [n, k] : {std::pair{4096, 4096},
                          {8192, 8192},
                          {4096, 14336},
                          {14336, 4096},
                          {1024, 8192},
                          {8192, 1024},
                          {128256, 4096},
                          {6144, 4096},
                          {2048, 2048},
                          {16384, 16384}})
        add("gemm", dt, "m=" + std::to_string(m) + ",n=" + std::to_string(n) + ",k=" + std::to_string(k), 12,
            double(m) * n * k);
    for (int rows : {1, 16, 128, 1024, 4096, 16384, 32768, 65536})
      for (int cols : {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072}) {
        std::string s = "rows=" + std::to_string(rows) + ",cols=" + std::to_string(cols);
        add("rmsnorm", dt, s, 6, double(rows) * cols);
        add("softmax", dt, s, 6, double(rows) * cols);
      }
  }
  for (const char* dt : {"bf16", "fp16"})
    for (int b : {1, 8})
      for (int h : {8, 32})
        for (int l : {512, 2048, 8192, 32768})
          for (int d : {64, 128, 256})
            for (int causal : {0, 1})
              add("attention", dt,
                  "b=" + std::to_string(b) + ",h=" + std::to_string(h) + ",l=" + std::to_string(l) +
                      ",d=" + std::to_string(d) + ",causal=" + std::to_string(causal),
                  6, double(b) * h * l * l * d);
  return kport::dispatch::write_snapshot(src);
}

// Random queries near the snapshot's own shapes (read from its JSON).
std::vector<Query> queries(const std::string& text, std::size_t n, std::uint64_t seed) {
  struct Table {
    std::string op, dtype;
    std::vector<std::vector<std::pair<std::string, std::int64_t>>> shapes;
  };
  std::vector<Table> tables;
  const json::value doc = json::parse(text);
  for (const auto& t : doc.at("tables").as_array()) {
    Table tab{std::string(t.at("op").as_string()), std::string(t.at("dtype").as_string()), {}};
    std::string last;
    for (const auto& f : t.at("figures").as_array()) {
      std::string s(f.at("shape").as_string());
      if (s == last) continue;
      last = s;
      auto shape = *kport::porting::Shape::parse(s);
      tab.shapes.push_back(shape.dims());
    }
    if (!tab.shapes.empty()) tables.push_back(std::move(tab));
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> scale(std::log(0.25), std::log(4.0));
  std::vector<Query> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& t = tables[rng() % tables.size()];
    const auto& dims = t.shapes[rng() % t.shapes.size()];
    std::string s;
    bool exact = rng() % 16 == 0;
    for (const auto& [k, v] : dims) {
      std::int64_t x = v;
      if (!exact && k != "d" && k != "causal")
        x = std::max<std::int64_t>(1, std::llround(double(v) * std::exp(scale(rng))));
      s += (s.empty() ? "" : ",") + k + "=" + std::to_string(x);
    }
    out.push_back({t.op, t.dtype, std::move(s)});
  }
  return out;
}

double ns_per_lookup(const Snapshot& snap, const std::vector<Query>& qs, std::size_t& found) {
  auto t0 = std::chrono::steady_clock::now();
  std::size_t f = 0;
  for (const auto& q : qs) f += snap.lookup(q.op, q.dtype, q.shape).found();
  auto t1 = std::chrono::steady_clock::now();
  found = f;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(qs.size());
}

double ns_per_table_lookup(const Snapshot& snap, const std::vector<Query>& qs) {
  // The embedding pattern: resolve (op, dtype) once, then look up shapes.
  std::vector<const Snapshot::Table*> tables;
  tables.reserve(qs.size());
  for (const auto& q : qs) tables.push_back(snap.table(q.op, q.dtype));
  auto t0 = std::chrono::steady_clock::now();
  std::size_t f = 0;
  for (std::size_t i = 0; i < qs.size(); ++i) f += snap.lookup(*tables[i], qs[i].shape).found();
  auto t1 = std::chrono::steady_clock::now();
  if (f == 0) std::printf("(no answer found)\n");
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(qs.size());
}

std::string encode(const std::string& s) {
  std::string out;
  for (char c : s) out += c == ' ' ? std::string("%20") : std::string(1, c);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server, gpu;
  bool synthetic = false;
  std::size_t lookups = 1'000'000, http_n = 2000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--synthetic")
      synthetic = true;
    else if (a == "--server")
      server = next();
    else if (a == "--gpu")
      gpu = next();
    else if (a == "--lookups")
      lookups = std::stoul(next());
    else if (a == "--http")
      http_n = std::stoul(next());
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (!synthetic && (server.empty() || gpu.empty())) {
    std::fprintf(stderr,
                 "usage: kport-bench-dispatch --synthetic | --server URL --gpu MODEL [--lookups N] [--http N]\n");
    return 2;
  }
  kport::http::Client client;
  std::string text;
  if (synthetic) {
    text = synthetic_snapshot();
  } else {
    auto r = client.fetch("GET", server + "/api/v1/dispatch/snapshot?gpu=" + encode(gpu));
    if (!r.ok() || r->status != 200) {
      std::fprintf(stderr, "snapshot: %s\n", r.ok() ? r->body.c_str() : r.error().message.c_str());
      return 1;
    }
    text = r->body;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto snap = Snapshot::parse(text);
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!snap.ok()) {
    std::fprintf(stderr, "load: %s\n", snap.error().message.c_str());
    return 1;
  }
  std::size_t figures = 0, timed = 0;
  for (const auto& t : snap->tables()) {
    figures += t.figures;
    timed += t.timed_shapes;
  }
  std::printf("snapshot: %s, %zu bytes, %zu tables, %zu figures, %zu timed shapes; load %.1f ms\n",
              snap->gpu_model().c_str(), text.size(), snap->tables().size(), figures, timed, load_ms);

  auto qs = queries(text, lookups, 20261201);
  std::size_t found = 0;
  ns_per_lookup(*snap, qs, found);  // warm-up
  std::vector<double> runs, table_runs;
  for (int r = 0; r < 5; ++r) {
    runs.push_back(ns_per_lookup(*snap, qs, found));
    table_runs.push_back(ns_per_table_lookup(*snap, qs));
  }
  std::sort(runs.begin(), runs.end());
  std::sort(table_runs.begin(), table_runs.end());
  std::printf("lookup(op, dtype, shape): %.1f ns/lookup median of 5 x %zu (min %.1f, max %.1f); %zu answered\n",
              runs[2], qs.size(), runs.front(), runs.back(), found);
  std::printf("lookup(table, shape):     %.1f ns/lookup median of 5 x %zu (min %.1f, max %.1f)\n", table_runs[2],
              qs.size(), table_runs.front(), table_runs.back());
  if (synthetic || http_n == 0) return 0;

  // The peer: /api/v1/best for distinct random queries (not cached), one connection.
  auto peer = queries(text, http_n, 99);
  std::vector<double> lat;
  std::size_t agree = 0, compared = 0;
  for (const auto& q : peer) {
    std::string url =
        server + "/api/v1/best?gpu=" + encode(gpu) + "&op=" + q.op + "&dtype=" + q.dtype + "&shape=" + q.shape;
    auto s = std::chrono::steady_clock::now();
    auto r = client.fetch("GET", url);
    lat.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count());
    if (!r.ok() || r->status != 200) continue;
    auto body = json::parse(r->body);
    if (body.at("kind").as_string() != "measured") continue;
    ++compared;
    agree += snap->lookup(q.op, q.dtype, q.shape).instance == body.at("best").as_string();
  }
  std::sort(lat.begin(), lat.end());
  double mean = 0;
  for (double l : lat) mean += l;
  mean /= static_cast<double>(lat.size());
  std::printf(
      "peer GET /api/v1/best over HTTP (keep-alive, sequential, %zu distinct queries): mean %.1f us, p50 %.1f us, p99 "
      "%.1f us\n",
      lat.size(), mean, lat[lat.size() / 2], lat[lat.size() * 99 / 100]);
  std::printf("agreement: %zu of %zu measured answers identical\n", agree, compared);
  return agree == compared ? 0 : 1;
}
