#include "best_versions.h"

#include <mutex>

namespace kport::db::detail {

namespace {

// TEMP objects live on the writer's connection only: no migration, nothing another
// process or reader sees. An UPDATE notes both keys in case one moved. The note skips a
// key already noted with NOT EXISTS, not OR IGNORE: a trigger's conflict clause yields
// to that of the statement firing it (an upsert's).
std::string note(const char* row) {
  const std::string r(row);
  return "  INSERT INTO best_changed SELECT " + r + ".gpu_model, " + r + ".family, " + r +
         ".dtype WHERE NOT EXISTS"
         " (SELECT 1 FROM best_changed WHERE gpu_model = " +
         r + ".gpu_model AND family = " + r + ".family AND dtype = " + r + ".dtype);\n";
}

std::string install_sql() {
  std::string sql =
      "CREATE TEMP TABLE IF NOT EXISTS best_changed (gpu_model TEXT NOT NULL, family TEXT NOT NULL,"
      " dtype TEXT NOT NULL, PRIMARY KEY (gpu_model, family, dtype)) WITHOUT ROWID;\n";
  for (const char* table : {"best_candidates", "result_drivers"}) {
    const std::string t(table);
    sql += "CREATE TEMP TRIGGER IF NOT EXISTS best_changed_" + t + "_insert AFTER INSERT ON main." + t + " BEGIN\n" +
           note("NEW") + "END;\n";
    sql += "CREATE TEMP TRIGGER IF NOT EXISTS best_changed_" + t + "_update AFTER UPDATE ON main." + t + " BEGIN\n" +
           note("NEW") + note("OLD") + "END;\n";
    sql += "CREATE TEMP TRIGGER IF NOT EXISTS best_changed_" + t + "_delete AFTER DELETE ON main." + t + " BEGIN\n" +
           note("OLD") + "END;\n";
  }
  // What moves figures from another shape to the question (porting/wave_model.h) is part
  // of the evidence too: the instances' published configs (their tiles) and the SM count
  // GPU runners register. A change notes every key it can change.
  auto note_keys = [](const std::string& where) {
    return "  INSERT INTO best_changed SELECT DISTINCT b.gpu_model, b.family, b.dtype FROM main.best_candidates b "
           "WHERE " +
           where +
           " AND NOT EXISTS (SELECT 1 FROM best_changed c WHERE c.gpu_model = b.gpu_model AND c.family = b.family"
           " AND c.dtype = b.dtype);\n";
  };
  sql +=
      "CREATE TEMP TRIGGER IF NOT EXISTS best_changed_instances_insert AFTER INSERT ON main.kernel_instances BEGIN\n" +
      note_keys("b.family = NEW.family") + "END;\n";
  sql +=
      "CREATE TEMP TRIGGER IF NOT EXISTS best_changed_instances_update AFTER UPDATE OF config_json, family ON "
      "main.kernel_instances BEGIN\n" +
      note_keys("b.family = NEW.family") + note_keys("b.family = OLD.family") + "END;\n";
  sql +=
      "CREATE TEMP TRIGGER IF NOT EXISTS best_changed_runners_insert AFTER INSERT ON main.runners WHEN NEW.role = "
      "'gpu' BEGIN\n" +
      note_keys("b.gpu_model = NEW.gpu_model") + "END;\n";
  return sql;
}

}  // namespace

Status BestVersions::install(Connection& writer) { return writer.exec(install_sql()); }

std::size_t BestVersions::Hash::operator()(KeyView k) const noexcept {
  std::hash<std::string_view> h;
  std::size_t x = h(k.gpu_model);
  x ^= h(k.family) + 0x9e3779b97f4a7c15ULL + (x << 6) + (x >> 2);
  x ^= h(k.dtype) + 0x9e3779b97f4a7c15ULL + (x << 6) + (x >> 2);
  return x;
}

std::uint64_t BestVersions::version(std::string_view gpu_model, std::string_view family,
                                    std::string_view dtype) const noexcept {
  std::shared_lock lock(m_mu);
  auto it = m_versions.find(KeyView{gpu_model, family, dtype});
  return it == m_versions.end() ? 0 : it->second.load(std::memory_order_seq_cst);
}

std::size_t BestVersions::keys() const {
  std::shared_lock lock(m_mu);
  return m_versions.size();
}

Status BestVersions::before_commit(Connection& conn) {
  std::vector<Key> changed;
  {
    auto s = conn.prepare("SELECT gpu_model, family, dtype FROM temp.best_changed");
    if (!s) return std::move(s).error();
    for (;;) {
      auto row = s->step();
      if (!row) return std::move(row).error();
      if (!*row) break;
      changed.push_back(Key{s->text(0), s->text(1), s->text(2)});
    }
  }
  if (changed.empty()) return {};
  KPORT_TRY(conn.exec("DELETE FROM temp.best_changed"));
  std::unique_lock lock(m_mu);
  for (auto& k : changed) {
    auto [it, _] = m_versions.try_emplace(std::move(k));
    it->second.fetch_add(1, std::memory_order_seq_cst);  // odd: being committed
    m_committing.push_back(&it->second);
  }
  return {};
}

void BestVersions::after_commit() {
  for (auto* v : m_committing) v->fetch_add(1, std::memory_order_seq_cst);  // even: settled
  m_committing.clear();
}

}  // namespace kport::db::detail
