// The best-kernel evidence /api/v1/best answers from, held in memory per (GPU model,
// family, dtype): the store's best_candidates rows and drivers of the key prepared for
// porting::PreparedSelection, and per shape the answer's members that depend only on
// that shape, serialized once (on first use). With it a measured answer costs the
// nearest-shape search and a few small members, on the HTTP I/O thread.
//
// Never stale: an entry carries the store's best_evidence_version of its key as read
// before and after its rows (both even and equal, or the entry is not kept), and is
// served only while the store's version still reads the same, and only to a question
// whose families declare the family's geometry as the entry was read with (a library's
// new declaration moves figures to unmeasured shapes by other keys). The writer moves a
// version to odd before the COMMIT that changes the key and to even before the write is
// acknowledged, so an answer never predates a committed write: a question that comes
// while the commit settles finds no current entry and is answered from the store.
//
// Bounded: entries exist only for keys with rows, and past max_bytes (estimated, see
// Stats) the index forgets every other entry before keeping a new one.
//
// Thread-safety: all members may be called from any thread; current() never blocks on
// I/O (a shared lock and two hash lookups), load() reads the store (worker pool only).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kport/common/result.h"
#include "kport/db/store.h"
#include "kport/porting/op_shape.h"
#include "kport/porting/prepared_selection.h"
#include "moved_text.h"
#include "selection_text.h"

namespace kport::coordinator {

class BestIndex {
 public:
  static constexpr std::size_t k_default_max_bytes = std::size_t{256} << 20;

  // One shape's answer members, serialized. `exact`: `{` and every member of an answer
  // at the shape itself (distance 0), to which a question adds only its own members;
  // `excluded`: the excluded member's value, the same in an answer from this shape to
  // another (the instances that failed or were not timed here); `moved`: the texts an
  // answer from this shape to another is written from (moved_text.h), when something
  // here ranks.
  struct ShapeText {
    std::string exact;
    std::string excluded;
    std::optional<MovedText> moved;
  };

  class Entry {
   public:
    Entry(std::uint64_t version, porting::PreparedSelection prepared, std::vector<std::string> repos = {},
          porting::GeometryKeys geometry_keys = {}, porting::ShapeRules rules = {});
    std::uint64_t version() const { return m_version; }
    // The family's geometry declaration its instances' geometries were read by.
    const porting::GeometryKeys& geometry_keys() const { return m_geometry_keys; }
    // The family's dimension rules it was prepared by (served only while declared the same).
    const porting::ShapeRules& rules() const { return m_rules; }
    // The libraries (repositories) its rows come from, sorted: an answer from it is one
    // library's only when this holds one.
    const std::vector<std::string>& repos() const { return m_repos; }
    const porting::PreparedSelection& prepared() const { return m_prepared; }
    // Serialized on first use; thread-safe.
    const ShapeText& text(std::size_t shape) const;
    std::size_t bytes() const;  // estimated, the texts serialized so far included

   private:
    struct Lazy {
      std::once_flag once;
      ShapeText text;
    };
    std::uint64_t m_version;
    porting::PreparedSelection m_prepared;
    std::vector<std::string> m_repos;
    porting::GeometryKeys m_geometry_keys;
    porting::ShapeRules m_rules;
    std::size_t m_prepared_bytes;
    std::vector<std::unique_ptr<Lazy>> m_text;
    mutable std::atomic<std::size_t> m_text_bytes{0};
  };

  explicit BestIndex(db::Store& store, std::size_t max_bytes = k_default_max_bytes);

  // The key's entry when it is current; nullptr when there is none, the store has
  // changed the key since (or is committing a change to it), or `known` (the question's
  // families) declares the family's geometry otherwise than the entry was read with.
  std::shared_ptr<const Entry> current(std::string_view gpu_model, std::string_view family, std::string_view dtype,
                                       const porting::FamilySet& known) const;
  // current(), else the key read from the store and prepared, its instances' geometries
  // read by the keys `known` declares for the family (kept when no write overlapped the
  // read and it has rows). Blocks on the store.
  Result<std::shared_ptr<const Entry>> load(std::string_view gpu_model, std::string_view family, std::string_view dtype,
                                            const porting::FamilySet& known);

  struct Stats {
    std::size_t keys = 0, rows = 0, shapes = 0, bytes = 0;
    std::uint64_t loads = 0;  // entries read from the store since start
  };
  Stats stats() const;

 private:
  struct Key {
    std::string gpu_model, family, dtype;
  };
  struct KeyView {
    std::string_view gpu_model, family, dtype;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(KeyView k) const noexcept;
    std::size_t operator()(const Key& k) const noexcept { return (*this)(KeyView{k.gpu_model, k.family, k.dtype}); }
  };
  struct Equal {
    using is_transparent = void;
    static bool same(KeyView a, KeyView b) noexcept {
      return a.gpu_model == b.gpu_model && a.family == b.family && a.dtype == b.dtype;
    }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      return same(view(a), view(b));
    }
    static KeyView view(KeyView k) noexcept { return k; }
    static KeyView view(const Key& k) noexcept { return {k.gpu_model, k.family, k.dtype}; }
  };

  db::Store& m_store;
  const std::size_t m_max_bytes;
  mutable std::shared_mutex m_mu;
  std::unordered_map<Key, std::shared_ptr<const Entry>, Hash, Equal> m_entries;
  std::atomic<std::uint64_t> m_loads{0};
};

}  // namespace kport::coordinator
