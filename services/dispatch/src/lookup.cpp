// The lookup: parse the query into a stack array, find the table's layout with the
// same keys, then the nearest timed shape. Distances are summed from logarithms taken
// at load (one log per query dimension instead of one per candidate), weighted and
// penalised by porting::Shape::dim_rule as Shape::distance does; whenever another
// shape comes within 1e-9 of the nearest, the candidates that close are re-measured with
// porting::Shape::dim_distance, the very terms Shape::distance sums, and ordered by
// porting::prefer_shape, so exact ties (a query halfway between 1024 and 4096) resolve
// as the API resolves them.
#include <charconv>
#include <cmath>
#include <limits>

#include "impl.h"
#include "kport/porting/selection.h"

namespace kport::dispatch {
namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();
// Far above the rounding of a sum of at most 16 log differences, far below any real
// difference between two distinct integer shapes' distances.
constexpr double k_near = 1e-9;

struct Query {
  std::string_view keys[k_max_dims];
  std::int64_t values[k_max_dims];
  double logs[k_max_dims];
  std::uint8_t aligned[k_max_dims];
  std::size_t n = 0;
};

bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > 16) return false;
  for (char c : key)
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

enum class Parsed { ok, bad, too_many };

// The syntax porting::Shape::parse accepts (tested against it), without allocating.
Parsed parse_query(std::string_view text, Query& q) {
  if (text.empty()) return Parsed::bad;
  std::size_t pos = 0;
  for (;;) {
    std::size_t comma = text.find(',', pos);
    std::string_view part = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) return Parsed::bad;
    std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    if (!valid_key(key) || value.empty()) return Parsed::bad;
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 0) return Parsed::bad;
    if (q.n == k_max_dims) return Parsed::too_many;
    // Insertion keeps the keys sorted, as Shape keeps its dimensions.
    std::size_t i = q.n;
    for (; i > 0 && q.keys[i - 1] > key; --i) {
      q.keys[i] = q.keys[i - 1];
      q.values[i] = q.values[i - 1];
    }
    if (i > 0 && q.keys[i - 1] == key) return Parsed::bad;
    q.keys[i] = key;
    q.values[i] = v;
    ++q.n;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return Parsed::ok;
}

const Layout* layout_of(const Snapshot::Table& t, const Query& q) {
  for (const auto& l : t.layouts) {
    if (l.keys.size() != q.n) continue;
    bool same = true;
    for (std::size_t i = 0; i < q.n && same; ++i) same = l.keys[i] == q.keys[i];
    if (same) return &l;
  }
  return nullptr;
}

double approx_distance(const Layout& l, const ShapeSet& s, std::size_t j, const Query& q) {
  const std::int64_t* v = &s.values[j * q.n];
  const double* lg = &s.logs[j * q.n];
  const std::uint8_t* al = &s.aligned[j * q.n];
  double d = 0;
  for (std::size_t i = 0; i < q.n; ++i) {
    if (v[i] == q.values[i]) continue;
    if (l.exact[i]) return k_inf;
    d += l.weight[i] * std::abs(q.logs[i] - lg[i]);  // inf when exactly one side is 0
    d += l.penalty[i][(al[i] ^ q.aligned[i]) & 3u];
  }
  return d;
}

double exact_distance(const Layout& l, const ShapeSet& s, std::size_t j, const Query& q) {
  const std::int64_t* v = &s.values[j * q.n];
  double total = 0;
  for (std::size_t i = 0; i < q.n; ++i) {
    double term = porting::Shape::dim_distance(l.keys[i], q.values[i], v[i]);
    if (term == k_inf) return k_inf;
    total += term;
  }
  return total;
}

struct Nearest {
  std::size_t index = SIZE_MAX;
  double distance = k_inf;
};

Nearest nearest(const Layout& l, const ShapeSet& s, const Query& q) {
  double best = k_inf, second = k_inf;
  std::size_t at = SIZE_MAX;
  for (std::size_t j = 0; j < s.size(); ++j) {
    double d = approx_distance(l, s, j, q);
    if (d < best) {
      second = best;
      best = d;
      at = j;
    } else if (d < second) {
      second = d;
    }
  }
  if (at == SIZE_MAX) return {};
  if (second - best > k_near) return Nearest{at, exact_distance(l, s, at, q)};
  // Near-ties: the API's own terms and its own preference decide.
  Nearest out;
  std::string_view out_canonical;
  for (std::size_t j = 0; j < s.size(); ++j) {
    if (approx_distance(l, s, j, q) > best + k_near) continue;
    double d = exact_distance(l, s, j, q);
    if (porting::prefer_shape(d, s.canonical[j], out.distance, out_canonical)) {
      out = Nearest{j, d};
      out_canonical = s.canonical[j];
    }
  }
  return out;
}

Answer only(Status s) {
  Answer a;
  a.status = s;
  return a;
}

}  // namespace

const char* status_name(Status s) noexcept {
  switch (s) {
    case Status::exact: return "exact";
    case Status::nearest: return "nearest";
    case Status::no_best: return "no_best";
    case Status::unknown: return "unknown";
    case Status::bad_query: return "bad_query";
  }
  return "unknown";
}

const Snapshot::Table* Snapshot::table(std::string_view op, std::string_view dtype) const noexcept {
  for (const auto& t : m_impl->tables)
    if (t->op == op && t->dtype == dtype) return t.get();
  return nullptr;
}

Answer Snapshot::lookup(std::string_view op, std::string_view dtype, std::string_view shape) const noexcept {
  const Table* t = table(op, dtype);
  if (!t) {
    Query q;
    return only(parse_query(shape, q) == Parsed::bad ? Status::bad_query : Status::unknown);
  }
  return lookup(*t, shape);
}

Answer Snapshot::lookup(const Table& t, std::string_view shape) const noexcept {
  Query q;
  switch (parse_query(shape, q)) {
    case Parsed::bad: return only(Status::bad_query);
    case Parsed::too_many: return only(Status::unknown);  // no table has that many dimensions
    case Parsed::ok: break;
  }
  const Layout* l = layout_of(t, q);
  if (!l) return only(Status::unknown);
  for (std::size_t i = 0; i < q.n; ++i) {
    q.logs[i] = q.values[i] > 0 ? std::log(static_cast<double>(q.values[i])) : -k_inf;
    q.aligned[i] = alignment_bits(l->rules[i], q.values[i]);
  }
  Answer a;
  if (auto n = nearest(*l, l->timed, q); n.index != SIZE_MAX) {
    const Winner& w = l->winners[n.index];
    a.status = n.distance == 0 ? Status::exact : Status::nearest;
    a.instance = w.instance;
    a.variant = w.variant;
    a.matched_shape = l->timed.canonical[n.index];
    a.distance = n.distance;
    a.median_us = w.median_us;
    a.stddev_us = w.stddev_us;
    a.tie = w.tie;
    a.unstable = w.unstable;
    a.result_id = w.result_id;
    return a;
  }
  // Nothing comparable was timed: the nearest shape measured at all answers, as the API
  // does, with no best.
  if (auto n = nearest(*l, l->untimed, q); n.index != SIZE_MAX) {
    a.status = Status::no_best;
    a.matched_shape = l->untimed.canonical[n.index];
    a.distance = n.distance;
    return a;
  }
  return only(Status::unknown);
}

}  // namespace kport::dispatch
