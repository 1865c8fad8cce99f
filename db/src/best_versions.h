// Private: the version of each (GPU model, family, dtype)'s best-kernel evidence (its
// best_candidates rows and result_drivers), bumped by the writer around every commit
// that changes it, so that a reader can keep that evidence in memory and know without
// I/O whether it is still what the database holds (Store::best_evidence_version).
//
// How a change is seen: temporary triggers on the writer's connection (install()) note
// the key of every row inserted, updated or deleted in either table, whichever statement
// or trigger did it (a result upload, a commit recorded after its results), into a
// temporary table that is part of the batch's transaction: a request rolled back takes
// its notes with it. Before COMMIT, before_commit() reads and clears the notes and makes
// each key's version odd; after the COMMIT (or its ROLLBACK) returned, after_commit()
// makes it even again. Both run on the writer thread before any caller of the batch
// hears back.
//
// Thread-safety: version() from any thread (a shared lock and a hash lookup, never I/O);
// before_commit()/after_commit() from the writer thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kport/common/result.h"
#include "sqlite.h"
#include "writer.h"

namespace kport::db::detail {

class BestVersions : public CommitObserver {
 public:
  // Creates the temporary table and triggers on the writer's connection.
  static Status install(Connection& writer);

  std::uint64_t version(std::string_view gpu_model, std::string_view family, std::string_view dtype) const noexcept;
  std::size_t keys() const;

  Status before_commit(Connection& conn) override;
  void after_commit() override;

 private:
  struct KeyView {
    std::string_view gpu_model, family, dtype;
  };
  struct Key {
    std::string gpu_model, family, dtype;
    operator KeyView() const { return {gpu_model, family, dtype}; }  // NOLINT: lookups by view
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(KeyView k) const noexcept;
    std::size_t operator()(const Key& k) const noexcept { return (*this)(KeyView(k)); }
  };
  struct Equal {
    using is_transparent = void;
    static bool same(KeyView a, KeyView b) noexcept {
      return a.gpu_model == b.gpu_model && a.family == b.family && a.dtype == b.dtype;
    }
    bool operator()(KeyView a, KeyView b) const noexcept { return same(a, b); }
    bool operator()(const Key& a, KeyView b) const noexcept { return same(a, b); }
    bool operator()(KeyView a, const Key& b) const noexcept { return same(a, b); }
    bool operator()(const Key& a, const Key& b) const noexcept { return same(a, b); }
  };

  mutable std::shared_mutex m_mu;  // guards the map's structure; versions are atomics
  // Keys changed since open; absent: version 0. Nodes never move, so the writer keeps
  // pointers to the counters of the batch it is committing.
  std::unordered_map<Key, std::atomic<std::uint64_t>, Hash, Equal> m_versions;
  std::vector<std::atomic<std::uint64_t>*> m_committing;  // writer thread only
};

}  // namespace kport::db::detail
