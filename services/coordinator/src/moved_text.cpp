#include "moved_text.h"

#include <algorithm>
#include <array>

namespace kport::coordinator {
namespace {

// The text a JsonText writes, as a string (for pieces made once per shape).
template <typename F>
std::string text_of(F&& write) {
  std::string out;
  JsonText w(out);
  write(w);
  return out;
}

std::string quoted(std::string_view s) {
  return text_of([&](JsonText& w) { w.str(s); });
}

std::size_t heap(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

}  // namespace

std::size_t MovedText::bytes() const {
  std::size_t n = sizeof(*this) + figures.capacity() * sizeof(Figure) + heap(head) + heap(after_distance) +
                  heap(reason_before) + heap(reason_after) + heap(drivers_note) + heap(gpus_note) + heap(regret_note) +
                  heap(middle) + heap(other_drivers) + heap(evidence_tail) + heap(excluded);
  for (const auto& f : figures)
    n += heap(f.head) + heap(f.tail) + heap(f.instance) + heap(f.commit) + heap(f.driver) + heap(f.result) +
         heap(f.commits_note);
  return n;
}

MovedText moved_text(const porting::PreparedSelection& p, std::size_t shape, std::string_view excluded) {
  // The members in write_member_at's order and words (selection_text.cpp); what differs
  // per question is left out and written by write_moved.
  const porting::Selection& at = p.at(shape);
  const auto& figures = p.figures(shape);
  const std::string_view method = p.moved_method(shape);
  MovedText t;
  t.figures.resize(figures.size());
  std::vector<std::string_view> commits, drivers;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const porting::Measurement& m = figures[i];
    if (!m.ranks()) continue;
    if (std::find(commits.begin(), commits.end(), m.commit) == commits.end()) commits.push_back(m.commit);
    if (std::find(drivers.begin(), drivers.end(), m.driver) == drivers.end()) drivers.push_back(m.driver);
    MovedText::Figure& f = t.figures[i];
    f.head = text_of([&](JsonText& w) {
      w.raw('{').key("instance").str(m.instance).next("variant").str(m.variant).next("tie_with_best");
    });
    f.tail = text_of([&](JsonText& w) {
      w.next("ranked").boolean(true).next("evidence");
      write_evidence(w, m);
      w.next("estimate_us");
    });
    f.instance = quoted(m.instance);
    f.commit = quoted(m.commit);
    f.driver = quoted(m.driver);
    f.result = text_of([&](JsonText& w) { w.num(m.result_id); });
  }
  // The commits note names the best's commit; the number of commits is the shape's.
  if (commits.size() > 1)
    for (std::size_t i = 0; i < figures.size(); ++i)
      if (figures[i].ranks())
        t.figures[i].commits_note =
            quoted(porting::commits_note(at.evidence_gpu_model, commits.size(), figures[i].commit));
  std::vector<std::string_view> other(at.evidence.other_drivers.begin(), at.evidence.other_drivers.end());
  t.drivers_vary = drivers.size() > 1;
  if (!t.drivers_vary) {
    auto note = porting::drivers_note(at.evidence_gpu_model, drivers, other);
    if (!note.empty()) t.drivers_note = quoted(note);
  }
  // Every figure that ranks at the shape ranks in an answer moved from it (moved() declines
  // when an instance is left out), so the GPUs' note is the shape's.
  std::vector<const porting::Measurement*> ranked;
  for (const auto& m : figures)
    if (m.ranks()) ranked.push_back(&m);
  if (auto note = porting::gpus_note(at.evidence_gpu_model, ranked); !note.empty()) t.gpus_note = quoted(note);
  if (!p.regret_note().empty()) t.regret_note = quoted(p.regret_note());

  t.head = text_of([&](JsonText& w) {
    w.raw('{').key("kind").str(porting::kind_name(porting::Selection::Kind::measured));
    w.next("provisional").boolean(false);
    w.next("confidence").raw('{').key("basis").str("nearest measured shape");
    w.next("method").str(method).next("shape_distance");
  });
  t.after_distance = text_of([&](JsonText& w) {
    if (const auto& r = p.regret()) {
      w.next("nearest_shape_regret").raw('{').key("shapes").num(r->shapes);
      w.next("median").num(r->median).next("p90").num(r->p90).next("max").num(r->max);
      w.next("worst_shape").str(r->worst_shape).next("worst_from").str(r->worst_from).raw('}');
    }
    w.raw('}').next("best");
  });
  const auto reason = porting::stand_in_note(p.canonical()[shape], method, p.sm_count());
  t.reason_before = text_of([&](JsonText& w) { w.next("reason").raw('"').chars(reason.before); });
  t.reason_after = text_of([&](JsonText& w) { w.chars(reason.after).raw('"').next("notes").raw('['); });
  t.middle = text_of([&](JsonText& w) {
    w.raw(']').next("ranked_by").str("estimate_us");
    w.next("candidates_from").str(at.candidates_basis);
    w.next("matched_shape").str(p.canonical()[shape]);
    w.next("exact_shape").boolean(false);
    w.next("evidence_gpu_model").str(at.evidence_gpu_model);
    w.next("evidence_arch").str(at.evidence_arch);
    w.next("evidence").raw('{').key("gpu_model").str(at.evidence_gpu_model);
    w.next("arch").str(at.evidence_arch).next("commit");
  });
  t.other_drivers = text_of(
      [&](JsonText& w) { w.next("other_drivers").strings(at.evidence.other_drivers).next("results").raw('['); });
  // The ranked figures are the same set at the shape and moved from it: the totals are its.
  t.evidence_tail = text_of([&](JsonText& w) {
    w.raw(']').next("samples").num(at.evidence.samples);
    w.next("measured").time(at.evidence.newest_ms).next("oldest").time(at.evidence.oldest_ms);
    w.raw('}').next("ranking").raw('[');
  });
  t.excluded = text_of([&](JsonText& w) { w.raw(']').next("excluded").raw(excluded); });

  t.size = t.head.size() + t.after_distance.size() + t.reason_before.size() + t.reason_after.size() +
           t.drivers_note.size() + t.gpus_note.size() + t.regret_note.size() + t.middle.size() +
           t.other_drivers.size() + t.evidence_tail.size() + t.excluded.size();
  for (const auto& f : t.figures)
    t.size += f.head.size() + f.tail.size() + 2 * f.instance.size() + 2 * f.commit.size() + 2 * f.driver.size() +
              f.result.size() + f.commits_note.size();
  return t;
}

void write_moved(JsonText& w, const MovedText& t, const porting::PreparedSelection& p, std::size_t shape,
                 const porting::PreparedSelection::Moved& moved, std::string_view want, double distance) {
  const auto& places = moved.places;
  const auto& figures = t.figures;
  const MovedText::Figure& best = figures[places.front().figure];
  w.raw(t.head).num(distance).raw(t.after_distance).raw(best.instance);
  w.next("tied").raw('[');
  bool first = true;
  for (const auto& place : places)
    if (place.tie_with_best) {
      if (!first) w.raw(',');
      first = false;
      w.raw(figures[place.figure].instance);
    }
  w.raw(']');
  w.raw(t.reason_before).chars(want).raw(t.reason_after);
  // The notes in select_best's order: a broken tie, the unstable best, commits, drivers,
  // GPUs, the regret.
  first = true;
  auto note = [&](std::string_view quoted_note) {
    if (!first) w.raw(',');
    first = false;
    w.raw(quoted_note);
  };
  if (moved.tie_shape < p.shapes().size()) {
    first = false;
    w.str(porting::tie_note(moved.tie_first, p.canonical()[moved.tie_shape]));
  }
  if (moved.unstable != porting::UnstableBest::none) {
    const bool moved_down = moved.unstable == porting::UnstableBest::moved;
    if (!first) w.raw(',');
    first = false;
    w.str(porting::unstable_note(moved.unstable, places[moved_down ? 1 : 0].m->instance, places[0].m->instance));
  }
  if (!best.commits_note.empty()) note(best.commits_note);  // the best's commit is the evidence's first
  if (t.drivers_vary) {
    std::array<std::string_view, 16> used_small, other_small;
    std::vector<std::string_view> used_big, other_big;
    const auto& other_drivers = p.at(shape).evidence.other_drivers;
    std::span<const std::string_view> used, other;
    if (moved.drivers.size() <= used_small.size() && other_drivers.size() <= other_small.size()) {
      for (std::size_t i = 0; i < moved.drivers.size(); ++i) used_small[i] = places[moved.drivers[i]].m->driver;
      for (std::size_t i = 0; i < other_drivers.size(); ++i) other_small[i] = other_drivers[i];
      used = std::span<const std::string_view>(used_small.data(), moved.drivers.size());
      other = std::span<const std::string_view>(other_small.data(), other_drivers.size());
    } else {
      for (auto d : moved.drivers) used_big.push_back(places[d].m->driver);
      other_big.assign(other_drivers.begin(), other_drivers.end());
      used = used_big;
      other = other_big;
    }
    if (!first) w.raw(',');
    first = false;
    w.str(porting::drivers_note(p.at(shape).evidence_gpu_model, used, other));
  } else if (!t.drivers_note.empty()) {
    note(t.drivers_note);
  }
  if (!t.gpus_note.empty()) note(t.gpus_note);
  if (!t.regret_note.empty()) note(t.regret_note);
  // The evidence: commits best's first, drivers in ranking order, results in ranking order.
  w.raw(t.middle).raw(figures[places[moved.commits.front()].figure].commit);
  w.next("commits").raw('[');
  for (std::size_t i = 0; i < moved.commits.size(); ++i) {
    if (i) w.raw(',');
    w.raw(figures[places[moved.commits[i]].figure].commit);
  }
  w.raw(']').next("driver").raw(figures[places[moved.drivers.front()].figure].driver);
  w.next("drivers").raw('[');
  for (std::size_t i = 0; i < moved.drivers.size(); ++i) {
    if (i) w.raw(',');
    w.raw(figures[places[moved.drivers[i]].figure].driver);
  }
  w.raw(']').raw(t.other_drivers);
  for (std::size_t i = 0; i < places.size(); ++i) {
    if (i) w.raw(',');
    w.raw(figures[places[i].figure].result);
  }
  w.raw(t.evidence_tail);
  for (std::size_t i = 0; i < places.size(); ++i) {
    const auto& place = places[i];
    const MovedText::Figure& f = figures[place.figure];
    if (i) w.raw(',');
    w.raw(f.head).boolean(place.tie_with_best).next("slowdown").num(place.slowdown);
    w.raw(f.tail).num(place.cost).raw('}');
  }
  w.raw(t.excluded);
}

}  // namespace kport::coordinator
