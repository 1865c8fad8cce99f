// The lookup: parse the query into a stack array, find the table's layout with the
// same keys, then the nearest timed shape. Distances are summed from logarithms taken
// at load (one log per query dimension instead of one per candidate), weighted and
// penalised by the family's rules (the table's `dims`) as Shape::distance does, each distinct value's
// term computed once per lookup (ShapeSet::distinct); whenever another
// shape comes within 1e-9 of the nearest, the candidates that close are re-measured with
// porting::Shape::dim_distance, the very terms Shape::distance sums, and ordered by
// porting::prefer_shape, so exact ties (a query halfway between 1024 and 4096) resolve
// as the API resolves them.
#include <algorithm>
#include <bit>
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

// The query's value of `key`, -1 when it has none.
std::int64_t value_of(const Query& q, std::string_view key) {
  for (std::size_t i = 0; i < q.n; ++i)
    if (q.keys[i] == key) return q.values[i];
  return -1;
}

// porting::rules_out over the query's own values: a requirement whose dim or condition
// the query leaves out rules nothing out (the API fills defaults; a query without them
// finds no layout).
bool ruled_out(const Snapshot::Table& t, const Query& q) {
  return std::any_of(t.requirements.begin(), t.requirements.end(), [&](const porting::ShapeRequirement& r) {
    return porting::rules_out(r, [&](std::string_view key) { return value_of(q, key); });
  });
}

const Layout* layout_of(const Snapshot::Table& t, const Query& q) {
  for (const auto& l : t.layouts) {
    if (l.keys.size() != q.n) continue;
    bool same = true;
    for (std::size_t i = 0; i < q.n && same; ++i) same = same_text(l.keys[i], q.keys[i]);
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

// approx_distance's term of each distinct value of `s` (ShapeSet::distinct) against the
// query, so a shape's approximate distance is the sum of its dimensions' terms; false
// when `s` keeps no such index.
bool fill_terms(const Layout& l, const ShapeSet& s, const Query& q, double* terms) {
  if (s.slot.empty()) return false;
  for (std::size_t i = 0; i < q.n; ++i)
    for (std::uint32_t k = s.distinct_first[i]; k < s.distinct_first[i + 1]; ++k) {
      if (s.distinct[k] == q.values[i])
        terms[k] = 0;
      else if (l.exact[i])
        terms[k] = k_inf;
      else  // inf when exactly one side is 0
        terms[k] = l.weight[i] * std::abs(q.logs[i] - s.distinct_logs[k]) +
                   l.penalty[i][(s.distinct_aligned[k] ^ q.aligned[i]) & 3u];
    }
  return true;
}

// The approximate distance of shape j: from the terms when fill_terms() gave them.
struct Approx {
  const Layout& l;
  const ShapeSet& s;
  const Query& q;
  const double* terms;  // nullptr: term by term
  double operator()(std::size_t j) const {
    if (!terms) return approx_distance(l, s, j, q);
    const std::uint16_t* at = &s.slot[j * q.n];
    double d = 0;
    for (std::size_t i = 0; i < q.n; ++i) d += terms[at[i]];
    return d;
  }
};

double exact_distance(const Layout& l, const ShapeSet& s, std::size_t j, const Query& q) {
  const std::int64_t* v = &s.values[j * q.n];
  double total = 0;
  for (std::size_t i = 0; i < q.n; ++i) {
    double term = porting::Shape::dim_distance(l.rules[i], q.values[i], v[i]);
    if (term == k_inf) return k_inf;
    total += term;
  }
  return total;
}

struct Nearest {
  std::size_t index = SIZE_MAX;
  double distance = k_inf;
};

// How many bounded instances run other code at shape j than at the query
// (porting::path_changes).
int changes(const ShapeSet& s, std::size_t j, std::uint64_t query_own) {
  return s.own.empty() ? 0 : std::popcount(s.own[j] ^ query_own);
}

// The runs of `s` (ShapeSet::run_first) with their lower bound, the least first: the
// run's own term plus the smallest term of every other dimension. Shapes of a run whose
// bound exceeds the nearest distance found by more than k_near can be neither the
// nearest nor a near-tie, so the passes skip that run.
struct Runs {
  struct Run {
    double bound;
    std::uint32_t run;
  };
  Run list[k_max_distinct];
  std::size_t n = 0;  // 0: no runs; visit every shape
};

void order_runs(const ShapeSet& s, const Query& q, const double* terms, Runs& out) {
  out.n = 0;
  // Path changes outrank distance (porting::prefer_match), so a bound on distance alone
  // prunes only where no instance is bounded.
  if (!terms || !s.own.empty() || s.run_first.size() < 3) return;
  const std::size_t g = s.group_dim;
  double rest = 0;
  for (std::size_t i = 0; i < q.n; ++i) {
    if (i == g) continue;
    double least = k_inf;
    for (std::uint32_t k = s.distinct_first[i]; k < s.distinct_first[i + 1]; ++k) least = std::min(least, terms[k]);
    rest += least;
  }
  std::size_t least = 0;
  for (std::uint32_t r = 0; r + 1 < s.run_first.size(); ++r) {
    const std::uint32_t j = s.order[s.run_first[r]];
    out.list[out.n++] = Runs::Run{terms[s.slot[j * q.n + g]] + rest, r};
    if (out.list[out.n - 1].bound < out.list[least].bound) least = out.n - 1;
  }
  // The run with the least bound first, so the nearest distance found early prunes the
  // rest; the others in their order (sorting them cost more than it saved).
  std::swap(out.list[0], out.list[least]);
}

// Calls f(j) for each shape of `s` that may lie within limit() + k_near of the query:
// every shape, or those of each run whose bound is within it.
template <class Limit, class F>
void visit(const ShapeSet& s, const Runs& runs, const Limit& limit, const F& f) {
  if (runs.n == 0) {
    for (std::size_t j = 0; j < s.size(); ++j) f(j);
    return;
  }
  for (std::size_t r = 0; r < runs.n; ++r) {
    if (runs.list[r].bound == k_inf || runs.list[r].bound > limit() + k_near) continue;
    const std::uint32_t run = runs.list[r].run;
    for (std::uint32_t o = s.run_first[run]; o < s.run_first[run + 1]; ++o) f(s.order[o]);
  }
}

// porting::prefer_match's order: the fewest path changes, then the nearest.
Nearest nearest(const Layout& l, const ShapeSet& s, const Query& q, std::uint64_t query_own) {
  double terms[k_max_distinct];
  const Approx approx{l, s, q, fill_terms(l, s, q, terms) ? terms : nullptr};
  Runs runs;
  order_runs(s, q, approx.terms, runs);
  double best = k_inf, second = k_inf;
  int best_changes = 0;
  std::size_t at = SIZE_MAX;
  visit(
      s, runs, [&] { return best; },
      [&](std::size_t j) {
        double d = approx(j);
        if (d == k_inf) return;
        const int c = changes(s, j, query_own);
        if (at != SIZE_MAX && c > best_changes) return;
        if (at == SIZE_MAX || c < best_changes) {
          second = k_inf;
          best = d;
          best_changes = c;
          at = j;
        } else if (d < best) {
          second = best;
          best = d;
          at = j;
        } else if (d < second) {
          second = d;
        }
      });
  if (at == SIZE_MAX) return {};
  if (second - best > k_near) return Nearest{at, exact_distance(l, s, at, q)};
  // Near-ties: the API's own terms and its own preference decide.
  Nearest out;
  std::string_view out_canonical;
  visit(
      s, runs, [&] { return best; },
      [&](std::size_t j) {
        if (changes(s, j, query_own) != best_changes || approx(j) > best + k_near) return;
        double d = exact_distance(l, s, j, q);
        if (porting::prefer_shape(d, s.canonical[j], out.distance, out_canonical)) {
          out = Nearest{j, d};
          out_canonical = s.canonical[j];
        }
      });
  return out;
}

// The API's ranking (porting::select_best from another shape) of the figures at timed
// shape j moved to the query: each instance's estimate (porting::estimate_at over its
// WorkPlan), the fastest first and ties by name; an unstable best gives way to the first
// stable figure within noise of it; the winner ties when the next in that order is
// within noise of it.
// No member initializers: rank_estimates' array of k_max_figures is filled as it goes,
// and zeroing 6 KB per lookup cost more than the ranking.
struct Estimated {
  std::uint32_t figure;
  double cost, noise;
};

bool before(const Layout& l, const Estimated& a, const Estimated& b) {
  if (a.cost != b.cost) return a.cost < b.cost;
  return l.figures[a.figure].instance < l.figures[b.figure].instance;  // indices order as names
}

// A figure's estimate at the query (porting::estimate_at over its WorkPlan).
double moved_cost(const Layout& l, const Figure& fig, const Query& q, int sm_count) {
  const double to = plan_work(l.plans[fig.instance], q.values, sm_count);
  return (fig.work <= 0 || to <= 0) ? fig.median_us : fig.median_us * (to / fig.work);
}

// The API's tie-break (porting::detail::break_tie): when estimates tie with the best
// (est[best]), the nearest other timed shape on as many path changes from the query as
// shape j and within porting::k_tie_reach times j's distance of it (porting::prefer_shape's
// order, walked without allocating: each step takes the nearest shape after the last one
// tried) where every tied instance has a figure and, moved to the query, they do not all
// tie with the fastest of them: that one's index in est. SIZE_MAX when none tells them
// apart.
std::size_t break_tie(const Layout& l, std::size_t j, const Query& q, std::uint64_t query_own, int sm_count,
                      const Estimated* est, std::size_t n, std::size_t best) {
  std::uint32_t tied[k_max_figures];
  std::size_t n_tied = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (i == best || porting::costs_tie(est[best].cost, est[best].noise, est[i].cost, est[i].noise))
      tied[n_tied++] = static_cast<std::uint32_t>(i);
  if (n_tied < 2) return SIZE_MAX;
  const ShapeSet& s = l.timed;
  const int want_changes = changes(s, j, query_own);
  const double reach = porting::k_tie_reach * exact_distance(l, s, j, q);
  double cost[k_max_figures], noise[k_max_figures];
  double last_d = -1;
  std::string_view last_canonical;
  for (;;) {
    // The nearest shape after (last_d, last_canonical) in prefer_shape's order.
    std::size_t at = SIZE_MAX;
    double at_d = k_inf;
    std::string_view at_canonical;
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (k == j || changes(s, k, query_own) != want_changes) continue;
      const double d = exact_distance(l, s, k, q);
      if (d > reach) continue;
      const std::string_view c = s.canonical[k];
      const bool after = last_d < 0 || d > last_d || (d == last_d && c < last_canonical);
      if (after && porting::prefer_shape(d, c, at_d, at_canonical)) at = k, at_d = d, at_canonical = c;
    }
    if (at == SIZE_MAX) return SIZE_MAX;
    last_d = at_d;
    last_canonical = at_canonical;
    bool all = true;
    for (std::size_t t = 0; t < n_tied && all; ++t) {
      const std::uint32_t inst = l.figures[est[tied[t]].figure].instance;
      const Figure* fig = nullptr;
      for (std::uint32_t f = l.first[at]; f < l.first[at + 1] && !fig; ++f)
        if (l.figures[f].instance == inst) fig = &l.figures[f];
      all = fig != nullptr;
      if (!all) break;
      cost[t] = moved_cost(l, *fig, q, sm_count);
      noise[t] = fig->stddev_us * cost[t] / fig->median_us;
    }
    if (!all) continue;
    std::size_t fastest = 0;
    for (std::size_t t = 1; t < n_tied; ++t)
      if (cost[t] < cost[fastest] || (cost[t] == cost[fastest] && l.figures[est[tied[t]].figure].instance <
                                                                      l.figures[est[tied[fastest]].figure].instance))
        fastest = t;
    for (std::size_t t = 0; t < n_tied; ++t)
      if (t != fastest && !porting::costs_tie(cost[fastest], noise[fastest], cost[t], noise[t])) return tied[fastest];
  }
}

void rank_estimates(const Snapshot::Table& t, const Layout& l, std::size_t j, const Query& q, std::uint64_t query_own,
                    int sm_count, Answer& a) {
  Estimated est[k_max_figures];
  est[0] = Estimated{l.first[j], 0, 0};  // a timed shape has a ranking figure (index_table)
  std::size_t n = 0;
  for (std::uint32_t f = l.first[j]; f < l.first[j + 1]; ++f) {
    const Figure& fig = l.figures[f];
    const WorkPlan& plan = l.plans[fig.instance];
    bool runs = true;  // porting::runs_within: beyond a limit the instance is no candidate
    for (std::uint8_t i = 0; i < plan.n_limits; ++i)
      runs = runs && porting::within_limit(q.values[plan.limit_at[i]], plan.limit[i]);
    for (std::uint8_t i = 0; i < plan.n_multiples; ++i)
      runs = runs && porting::within_multiple(q.values[plan.multiple_at[i]], plan.multiple[i]);
    for (std::uint8_t i = 0; i < plan.n_byte_limits; ++i)
      runs = runs && porting::within(*plan.byte_limit[i], q.values[plan.byte_limit_at[i]], l.element_bytes);
    if (!runs) continue;
    const double cost = moved_cost(l, fig, q, sm_count);
    est[n++] = Estimated{f, cost, fig.stddev_us * cost / fig.median_us};
  }
  if (n == 0) {  // every figure's instance is beyond its limits: as the API, no best
    a.status = Status::no_best;
    return;
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (before(l, est[i], est[best])) best = i;
  // A broken tie puts its instance first; the rest keep their order.
  if (std::size_t first = break_tie(l, j, q, query_own, sm_count, est, n, best); first != SIZE_MAX) best = first;
  std::size_t win = best;
  if (l.figures[est[best].figure].unstable) {
    std::size_t stable = SIZE_MAX;
    for (std::size_t i = 0; i < n; ++i) {
      if (i == best || l.figures[est[i].figure].unstable) continue;
      if (!porting::costs_tie(est[best].cost, est[best].noise, est[i].cost, est[i].noise)) continue;
      if (stable == SIZE_MAX || before(l, est[i], est[stable])) stable = i;
    }
    if (stable != SIZE_MAX) win = stable;
  }
  // The next after the winner: the displaced best, or the fastest of the rest.
  std::size_t next = SIZE_MAX;
  if (win != best) {
    next = best;
  } else {
    for (std::size_t i = 0; i < n; ++i)
      if (i != win && (next == SIZE_MAX || before(l, est[i], est[next]))) next = i;
  }
  const Figure& w = l.figures[est[win].figure];
  const TableInstance& inst = t.instances[w.instance];
  a.instance = inst.name;
  a.variant = inst.variant;
  a.median_us = w.median_us;
  a.stddev_us = w.stddev_us;
  a.unstable = w.unstable;
  a.result_id = w.result_id;
  a.estimated = true;
  a.estimate_us = est[win].cost;
  a.tie = next != SIZE_MAX && porting::costs_tie(est[win].cost, est[win].noise, est[next].cost, est[next].noise);
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
    case Status::ruled_out: return "ruled_out";
  }
  return "unknown";
}

const Snapshot::Table* Snapshot::table(std::string_view op, std::string_view dtype) const noexcept {
  for (const auto& t : m_impl->tables)
    if (same_text(t->op, op) && same_text(t->dtype, dtype)) return t.get();
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
  if (ruled_out(t, q)) return only(Status::ruled_out);
  const Layout* l = layout_of(t, q);
  if (!l) return only(Status::unknown);
  for (std::size_t i = 0; i < q.n; ++i) {
    // A dimension that must match exactly adds 0 or infinity, never a log distance.
    q.logs[i] = l->exact[i] ? 0 : q.values[i] > 0 ? std::log(static_cast<double>(q.values[i])) : -k_inf;
    q.aligned[i] = alignment_bits(l->rules[i], q.values[i]);
  }
  const std::uint64_t query_own = l->paths.empty() ? 0 : own_paths(*l, q.values);
  Answer a;
  if (auto n = nearest(*l, l->timed, q, query_own); n.index != SIZE_MAX) {
    a.status = n.distance == 0 ? Status::exact : Status::nearest;
    a.matched_shape = l->timed.canonical[n.index];
    a.distance = n.distance;
    if (a.status == Status::nearest) {
      rank_estimates(t, *l, n.index, q, query_own, m_impl->sm_count, a);
      return a;
    }
    const Winner& w = l->winners[n.index];
    a.instance = w.instance;
    a.variant = w.variant;
    a.median_us = w.median_us;
    a.stddev_us = w.stddev_us;
    a.tie = w.tie;
    a.unstable = w.unstable;
    a.result_id = w.result_id;
    return a;
  }
  // Nothing comparable was timed: the nearest shape measured at all answers, as the API
  // does, with no best.
  if (auto n = nearest(*l, l->untimed, q, query_own); n.index != SIZE_MAX) {
    a.status = Status::no_best;
    a.matched_shape = l->untimed.canonical[n.index];
    a.distance = n.distance;
    return a;
  }
  return only(Status::unknown);
}

}  // namespace kport::dispatch
