#include "best_index.h"

#include "best_evidence.h"

#include <algorithm>

#include "selection_text.h"
#include "kport/db/best_measurement.h"

namespace kport::coordinator {
namespace {

const porting::GeometryKeys& declared_geometry(const porting::FamilySet& known, std::string_view family) {
  static const porting::GeometryKeys k_none;
  const porting::OpFamily* f = known.find(family);
  return f ? f->geometry : k_none;
}

// The family's dimension rules as declared (none for a family not known: every dim plain).
porting::ShapeRules declared_rules(const porting::FamilySet& known, std::string_view family) {
  const porting::OpFamily* f = known.find(family);
  return f ? f->shape_rules() : porting::ShapeRules{};
}

// Whether `rules` are what `known` declares for `family`, without making a copy: the I/O
// thread asks this for every question it answers from memory.
bool same_rules(const porting::ShapeRules& rules, const porting::FamilySet& known, std::string_view family) {
  const porting::OpFamily* f = known.find(family);
  std::size_t declared = 0;
  if (f)
    for (const auto& d : f->dims) {
      if (d.rule == porting::Shape::DimRule{}) continue;
      ++declared;
      if (rules.rule(d.name) != d.rule) return false;
    }
  return declared == rules.dims().size();
}

}  // namespace

BestIndex::Entry::Entry(std::uint64_t version, porting::PreparedSelection prepared, std::vector<std::string> repos,
                        porting::GeometryKeys geometry_keys, porting::ShapeRules rules)
    : m_version(version),
      m_prepared(std::move(prepared)),
      m_repos(std::move(repos)),
      m_geometry_keys(std::move(geometry_keys)),
      m_rules(std::move(rules)),
      m_prepared_bytes(m_prepared.bytes()) {
  m_text.reserve(m_prepared.shapes().size());
  for (std::size_t i = 0; i < m_prepared.shapes().size(); ++i) m_text.push_back(std::make_unique<Lazy>());
}

const BestIndex::ShapeText& BestIndex::Entry::text(std::size_t shape) const {
  Lazy& lazy = *m_text.at(shape);
  std::call_once(lazy.once, [&] {
    const porting::Selection& sel = m_prepared.at(shape);
    // At the shape itself: the answer to a question there, whatever its own shape's text
    // (the members depend on the distance only, and it is 0).
    const porting::Selection exact =
        m_prepared.answer(m_prepared.shapes()[shape], porting::PreparedSelection::Match{shape, 0});
    JsonText w(lazy.text.exact);
    w.raw('{');
    write_members(w, exact);
    JsonText excluded(lazy.text.excluded);
    write_excluded(excluded, sel);
    if (sel.kind == porting::Selection::Kind::measured)
      lazy.text.moved.emplace(moved_text(m_prepared, shape, lazy.text.excluded));
    std::size_t n = sizeof(ShapeText) + lazy.text.exact.capacity() + lazy.text.excluded.capacity();
    if (lazy.text.moved) n += lazy.text.moved->bytes();
    m_text_bytes.fetch_add(n, std::memory_order_relaxed);
  });
  return lazy.text;
}

std::size_t BestIndex::Entry::bytes() const {
  return sizeof(*this) + m_prepared_bytes + m_text.size() * (sizeof(Lazy) + sizeof(void*)) +
         m_text_bytes.load(std::memory_order_relaxed);
}

BestIndex::BestIndex(db::Store& store, std::size_t max_bytes) : m_store(store), m_max_bytes(max_bytes) {}

std::size_t BestIndex::Hash::operator()(KeyView k) const noexcept {
  std::hash<std::string_view> h;
  std::size_t x = h(k.gpu_model);
  x ^= h(k.family) + 0x9e3779b97f4a7c15ULL + (x << 6) + (x >> 2);
  x ^= h(k.dtype) + 0x9e3779b97f4a7c15ULL + (x << 6) + (x >> 2);
  return x;
}

std::shared_ptr<const BestIndex::Entry> BestIndex::current(std::string_view gpu_model, std::string_view family,
                                                           std::string_view dtype,
                                                           const porting::FamilySet& known) const {
  std::shared_ptr<const Entry> entry;
  {
    std::shared_lock lock(m_mu);
    auto it = m_entries.find(KeyView{gpu_model, family, dtype});
    if (it == m_entries.end()) return nullptr;
    entry = it->second;
  }
  // The version is read after the entry: an entry kept at version v is current exactly
  // while the store still reads v (no write to the key has begun committing since).
  if (m_store.best_evidence_version(gpu_model, family, dtype) != entry->version()) return nullptr;
  if (entry->geometry_keys() != declared_geometry(known, family)) return nullptr;
  if (!same_rules(entry->rules(), known, family)) return nullptr;
  return entry;
}

Result<std::shared_ptr<const BestIndex::Entry>> BestIndex::load(std::string_view gpu_model, std::string_view family,
                                                                std::string_view dtype,
                                                                const porting::FamilySet& known) {
  if (auto e = current(gpu_model, family, dtype, known)) return e;
  const std::uint64_t before = m_store.best_evidence_version(gpu_model, family, dtype);
  auto read = m_store.best_evidence(gpu_model, family, dtype);
  if (!read.ok()) return std::move(read).error();
  std::vector<std::string> repos;
  for (const auto& c : read->rows)
    if (std::find(repos.begin(), repos.end(), c.repo) == repos.end()) repos.push_back(c.repo);
  std::sort(repos.begin(), repos.end());
  // What moves figures to a shape that was not measured; its changes bump the version too.
  // Instances are named within their library: one library's rows take its instances' tiles.
  auto waves = wave_inputs(m_store, std::string(gpu_model), known, std::string(family),
                           repos.size() == 1 ? std::optional<std::string>(repos.front()) : std::nullopt);
  if (!waves.ok()) return std::move(waves).error();
  const std::uint64_t after = m_store.best_evidence_version(gpu_model, family, dtype);
  m_loads.fetch_add(1, std::memory_order_relaxed);
  std::vector<porting::Measurement> rows;
  rows.reserve(read->rows.size());
  for (const auto& c : read->rows) rows.push_back(db::to_measurement(c));
  std::vector<porting::DriverSeen> drivers;
  for (const auto& d : read->drivers) drivers.push_back({std::string(gpu_model), d.driver});
  auto entry = std::make_shared<const Entry>(
      after,
      porting::PreparedSelection(std::string(gpu_model), std::move(rows), std::move(drivers), waves->sm_count,
                                 std::move(waves->geometry), porting::element_bytes(dtype),
                                 declared_rules(known, family)),
      std::move(repos), declared_geometry(known, family), declared_rules(known, family));
  // Kept only when no write to the key was committing or began during the read: then
  // the rows are the committed state of version `after`. Either way this question is
  // answered from what was read, a state committed while it was being asked.
  if (before == after && before % 2 == 0 && entry->prepared().rows() > 0) {
    std::unique_lock lock(m_mu);
    std::size_t held = 0;
    for (const auto& [_, e] : m_entries) held += e->bytes();
    if (held + entry->bytes() > m_max_bytes) m_entries.clear();
    m_entries.insert_or_assign(Key{std::string(gpu_model), std::string(family), std::string(dtype)}, entry);
  }
  return entry;
}

BestIndex::Stats BestIndex::stats() const {
  Stats s;
  std::shared_lock lock(m_mu);
  for (const auto& [_, e] : m_entries) {
    ++s.keys;
    s.rows += e->prepared().rows();
    s.shapes += e->prepared().shapes().size();
    s.bytes += e->bytes();
  }
  s.loads = m_loads.load(std::memory_order_relaxed);
  return s;
}

}  // namespace kport::coordinator
