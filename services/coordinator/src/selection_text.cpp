#include "selection_text.h"

#include <boost/json/detail/format.hpp>
#include <algorithm>
#include <charconv>
#include <iterator>

#include "kport/common/clock.h"

namespace kport::coordinator {
namespace json = boost::json;

JsonText& JsonText::key(std::string_view name) {
  // One append: a member name is short (the longest is 18 bytes).
  char buf[64];
  if (name.size() + 3 > sizeof buf) {
    m_out += '"';
    m_out += name;
    m_out += "\":";
    return *this;
  }
  buf[0] = '"';
  std::copy(name.begin(), name.end(), buf + 1);
  buf[name.size() + 1] = '"';
  buf[name.size() + 2] = ':';
  m_out.append(buf, name.size() + 3);
  return *this;
}

void JsonText::drain() {
  char buf[256];
  while (!m_sr.done()) m_out += m_sr.read(buf, sizeof buf);
}

namespace {

// Printable ASCII other than the quote and the backslash is written as it is by the
// serializer too; only text with something to escape takes the serializer's path.
bool plain(std::string_view s) {
  for (char c : s)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  return true;
}

}  // namespace

JsonText& JsonText::str(std::string_view s) {
  if (plain(s)) {
    const std::size_t at = m_out.size();
    m_out.resize(at + s.size() + 2);
    char* p = m_out.data() + at;
    *p = '"';
    std::copy(s.begin(), s.end(), p + 1);
    p[s.size() + 1] = '"';
    return *this;
  }
  m_sr.reset(s);
  drain();
  return *this;
}

JsonText& JsonText::chars(std::string_view s) {
  if (plain(s)) return raw(s);
  std::string quoted;
  JsonText(quoted).str(s);
  m_out.append(quoted, 1, quoted.size() - 2);
  return *this;
}

JsonText& JsonText::num(double d) {
  // The serializer's own formatting of a double (what it calls for a json::value holding
  // one), without a value and a serializer pass around it.
  char buf[json::detail::max_number_chars + 1];
  m_out.append(buf, json::detail::format_double(buf, d));
  return *this;
}

JsonText& JsonText::num(std::int64_t i) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, i);
  m_out.append(buf, r.ptr);
  return *this;
}

JsonText& JsonText::time(std::int64_t unix_ms) { return unix_ms > 0 ? str(iso8601_utc(unix_ms)) : null(); }

JsonText& JsonText::strings(const std::vector<std::string>& v) {
  raw('[');
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) raw(',');
    str(v[i]);
  }
  return raw(']');
}

void write_evidence(JsonText& w, const porting::Measurement& m) {
  w.raw('{').key("result").num(m.result_id);
  w.next("gpu_model").str(m.gpu_model);
  w.next("arch").str(m.arch);
  w.next("target").str(m.target);
  w.next("commit").str(m.commit);
  w.next("driver").str(m.driver);
  w.next("gpu_uuid").str(m.gpu_uuid);
  w.next("sm_clock_mhz");
  m.sm_clock_mhz > 0 ? w.num(m.sm_clock_mhz) : w.null();
  w.next("shape").str(m.shape.canonical());
  w.next("status").str(m.status);
  w.next("median_us");
  m.median_us > 0 ? w.num(m.median_us) : w.null();
  w.next("stddev_us").num(m.stddev_us);
  w.next("samples").num(m.samples);
  w.next("ratio");
  m.ratio ? w.num(*m.ratio) : w.null();
  w.next("unstable").boolean(m.unstable);
  w.next("runs").num(m.runs);
  w.next("measured").time(m.measured_at_ms);
  w.next("url").raw("\"/api/v1/results/").num(m.result_id).raw('"');
  w.raw('}');
}

namespace {

void write_ranking(JsonText& w, const porting::Selection& s) {
  w.raw('[');
  bool first = true;
  for (const auto& r : s.ranking) {
    if (!first) w.raw(',');
    first = false;
    w.raw('{').key("instance").str(r.instance);
    w.next("variant").str(r.variant);
    w.next("tie_with_best").boolean(r.tie_with_best);
    w.next("slowdown").num(r.slowdown);
    w.next("ranked").boolean(r.ranked);
    w.next("evidence");
    if (!r.evidence)
      w.null();
    else
      write_evidence(w, *r.evidence);
    if (r.estimate_us) w.next("estimate_us").num(*r.estimate_us);
    w.raw('}');
  }
  w.raw(']');
}

}  // namespace

namespace {

// The member k_selection_members[member]; the answer writers name members by index, so
// no name is compared on the way.
void write_member_at(JsonText& w, const porting::Selection& s, std::size_t member) {
  const porting::Ranked* best = s.best();
  switch (member) {
    case 0: {  // kind
      w.str(porting::kind_name(s.kind));
      break;
    }
    case 1: {  // provisional
      w.boolean(s.kind != porting::Selection::Kind::measured);
      break;
    }
    case 2: {  // confidence
      // How sure a measured answer is: exact, or from the nearest measured shape with how
      // such answers fared on this GPU model (porting::NeighbourRegret).
      if (s.kind != porting::Selection::Kind::measured) {
        w.null();
        return;
      }
      w.raw('{').key("basis").str(s.exact_shape ? "measured at this shape" : "nearest measured shape");
      w.next("method").str(s.method);
      w.next("shape_distance").num(s.shape_distance);
      if (const auto& r = s.nearest_shape_regret) {
        w.next("nearest_shape_regret").raw('{').key("shapes").num(r->shapes);
        w.next("median").num(r->median).next("p90").num(r->p90).next("max").num(r->max);
        w.next("worst_shape").str(r->worst_shape).next("worst_from").str(r->worst_from).raw('}');
      }
      w.raw('}');
      break;
    }
    case 3: {  // best
      best ? w.str(best->instance) : w.null();
      break;
    }
    case 4: {  // tied
      w.raw('[');
      bool first = true;
      if (best)
        for (const auto& r : s.ranking)
          if (r.tie_with_best) {
            if (!first) w.raw(',');
            first = false;
            w.str(r.instance);
          }
      w.raw(']');
      break;
    }
    case 5: {  // reason
      w.str(s.reason);
      break;
    }
    case 6: {  // notes
      w.strings(s.notes);
      break;
    }
    case 7: {  // ranked_by
      w.str(s.ranked_by);
      break;
    }
    case 8: {  // candidates_from
      w.str(s.candidates_basis);
      break;
    }
    case 9: {  // matched_shape
      s.matched_shape ? w.str(s.matched_shape->canonical()) : w.null();
      break;
    }
    case 10: {  // exact_shape
      w.boolean(s.exact_shape);
      break;
    }
    case 11: {  // evidence_gpu_model
      w.str(s.evidence_gpu_model);
      break;
    }
    case 12: {  // evidence_arch
      w.str(s.evidence_arch);
      break;
    }
    case 13: {  // evidence
      const auto& e = s.evidence;
      if (e.result_ids.empty()) {
        w.null();
        return;
      }
      w.raw('{').key("gpu_model").str(s.evidence_gpu_model);
      w.next("arch").str(s.evidence_arch);
      w.next("commit").str(e.commits.front());
      w.next("commits").strings(e.commits);
      w.next("driver").str(e.drivers.front());
      w.next("drivers").strings(e.drivers);
      w.next("other_drivers").strings(e.other_drivers);
      w.next("results").raw('[');
      for (std::size_t i = 0; i < e.result_ids.size(); ++i) {
        if (i) w.raw(',');
        w.num(e.result_ids[i]);
      }
      w.raw(']');
      w.next("samples").num(e.samples);
      w.next("measured").time(e.newest_ms);
      w.next("oldest").time(e.oldest_ms);
      w.raw('}');
      break;
    }
    case 14: {  // ranking
      write_ranking(w, s);
      break;
    }
    case 15: {  // excluded
      w.raw('[');
      bool first = true;
      for (const auto& x : s.excluded) {
        if (!first) w.raw(',');
        first = false;
        w.raw('{').key("instance").str(x.instance);
        w.next("variant").str(x.variant);
        w.next("reason").str(x.reason);
        w.next("evidence");
        write_evidence(w, x.evidence);
        w.raw('}');
      }
      w.raw(']');
      break;
    }
    default: w.null();
  }
}

}  // namespace

void write_members(JsonText& w, const porting::Selection& s, const std::string* excluded) {
  constexpr std::size_t k_excluded = std::size(k_selection_members) - 1;
  static_assert(k_selection_members[k_excluded] == "excluded");
  for (std::size_t i = 0; i < std::size(k_selection_members); ++i) {
    if (i) w.raw(',');
    w.key(k_selection_members[i]);
    if (excluded && i == k_excluded)
      w.raw(*excluded);
    else
      write_member_at(w, s, i);
  }
}

void write_excluded(JsonText& w, const porting::Selection& s) {
  write_member_at(w, s, std::size(k_selection_members) - 1);
}

}  // namespace kport::coordinator
