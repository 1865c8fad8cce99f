// Catalog, continued: kernel families/variants/instances, repositories and commits.
#include "impl.h"
#include "json_text.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

Status Store::upsert_kernel_instances(const std::vector<KernelInstance>& instances) {
  std::vector<KernelInstance> clean;
  clean.reserve(instances.size());
  for (const auto& k : instances) {
    if (k.name.empty() || k.family.empty() || k.variant.empty())
      return make_error(Errc::invalid_argument, "kernel instance \"" + k.name + "\" needs a name, family and variant");
    KernelInstance c = k;
    auto f = detail::json_text("features_json of " + k.name, k.features_json, "[]");
    if (!f) return std::move(f).error();
    auto cfg = detail::json_text("config_json of " + k.name, k.config_json);
    if (!cfg) return std::move(cfg).error();
    c.features_json = std::move(*f);
    c.config_json = std::move(*cfg);
    if (c.dtypes)
      for (const auto& d : *c.dtypes)
        if (d.empty() || d.size() > 16)
          return make_error(Errc::invalid_argument, "kernel instance \"" + k.name + "\" lists a dtype \"" + d +
                                                        "\"; expected a short name such as bf16");
    clean.push_back(std::move(c));
  }
  const std::int64_t now = m_impl->now();
  auto r = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    for (const auto& k : clean) {
      auto fam = c.prepare("INSERT OR IGNORE INTO kernel_families(name) VALUES (?1)");
      if (!fam) return std::move(fam).error();
      KPORT_TRY(fam->bind(1, k.family).run());
      auto var = c.prepare(
          "INSERT INTO kernel_variants(family, name, features_json) VALUES (?1, ?2, ?3)"
          " ON CONFLICT(family, name) DO UPDATE SET features_json = excluded.features_json");
      if (!var) return std::move(var).error();
      KPORT_TRY(var->bind_all(k.family, k.variant, k.features_json).run());
      // A publisher that does not report dtypes leaves the ones known before in place.
      auto inst = c.prepare(
          "INSERT INTO kernel_instances(name, family, variant, features_json, config_json, updated_ms, dtypes_json,"
          " repo) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(repo, name) DO UPDATE SET family = "
          "excluded.family,"
          " variant = excluded.variant, features_json = excluded.features_json,"
          " config_json = excluded.config_json, updated_ms = excluded.updated_ms,"
          " dtypes_json = coalesce(excluded.dtypes_json, kernel_instances.dtypes_json)");
      if (!inst) return std::move(inst).error();
      std::optional<std::string> dtypes;
      if (k.dtypes) dtypes = detail::strings_to_json(*k.dtypes);
      KPORT_TRY(inst->bind_all(k.name, k.family, k.variant, k.features_json, k.config_json, now, dtypes, k.repo).run());
    }
    return true;
  });
  if (!r) return std::move(r).error();
  return {};
}

Status Store::upsert_kernel_variants(const std::vector<KernelVariant>& variants) {
  std::vector<KernelVariant> clean;
  clean.reserve(variants.size());
  for (const auto& v : variants) {
    if (v.family.empty() || v.variant.empty())
      return make_error(Errc::invalid_argument,
                        "kernel variant \"" + v.family + "." + v.variant + "\" needs a family and a variant");
    auto f = detail::json_text("features of " + v.family + "." + v.variant, v.features_json, "[]");
    if (!f) return std::move(f).error();
    clean.push_back(KernelVariant{v.family, v.variant, std::move(*f)});
  }
  auto r = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    for (const auto& v : clean) {
      auto fam = c.prepare("INSERT OR IGNORE INTO kernel_families(name) VALUES (?1)");
      if (!fam) return std::move(fam).error();
      KPORT_TRY(fam->bind(1, v.family).run());
      auto var = c.prepare(
          "INSERT INTO kernel_variants(family, name, features_json) VALUES (?1, ?2, ?3)"
          " ON CONFLICT(family, name) DO UPDATE SET features_json = excluded.features_json");
      if (!var) return std::move(var).error();
      KPORT_TRY(var->bind_all(v.family, v.variant, v.features_json).run());
    }
    return true;
  });
  if (!r) return std::move(r).error();
  return {};
}

Result<std::vector<KernelInstance>> Store::list_kernel_instances(std::optional<std::string> family) {
  return m_impl->read<std::vector<KernelInstance>>([&](Connection& c) -> Result<std::vector<KernelInstance>> {
    detail::Where where;
    where.add("family = ?", family);
    auto s =
        c.prepare("SELECT name, family, variant, features_json, config_json, dtypes_json, repo FROM kernel_instances" +
                  where.sql() + " ORDER BY family, variant, name, repo");
    if (!s) return std::move(s).error();
    where.bind(*s);
    return detail::collect<KernelInstance>(*s, [](const detail::Stmt& st) {
      KernelInstance k{st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), std::nullopt};
      if (auto d = st.opt_text(5)) k.dtypes = detail::strings_from_json(*d);
      k.repo = st.text(6);
      return k;
    });
  });
}

Result<std::vector<KernelVariant>> Store::list_kernel_variants(std::optional<std::string> family) {
  return m_impl->read<std::vector<KernelVariant>>([&](Connection& c) -> Result<std::vector<KernelVariant>> {
    detail::Where where;
    where.add("family = ?", family);
    auto s =
        c.prepare("SELECT family, name, features_json FROM kernel_variants" + where.sql() + " ORDER BY family, name");
    if (!s) return std::move(s).error();
    where.bind(*s);
    return detail::collect<KernelVariant>(*s, [](const detail::Stmt& st) {
      return KernelVariant{st.text(0), st.text(1), st.text(2)};
    });
  });
}

Status Store::put_families(const std::string& repo, const std::string& library,
                           const std::vector<FamilyRecord>& families) {
  std::vector<std::string> definitions;
  for (const auto& f : families) {
    if (f.name.empty()) return make_error(Errc::invalid_argument, "a family of library '" + library + "' needs a name");
    auto d = detail::json_text("definition of family " + f.name, f.definition_json);
    if (!d) return std::move(d).error();
    definitions.push_back(std::move(*d));
  }
  const std::int64_t now = m_impl->now();
  auto r = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto gone = c.prepare("DELETE FROM op_families WHERE repo = ?1 AND library = ?2");
    if (!gone) return std::move(gone).error();
    KPORT_TRY(gone->bind_all(repo, library).run());
    for (std::size_t i = 0; i < families.size(); ++i) {
      auto ins = c.prepare(
          "INSERT INTO op_families(repo, library, name, position, definition_json, updated_ms)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
          " ON CONFLICT(repo, library, name) DO UPDATE SET definition_json = excluded.definition_json");
      if (!ins) return std::move(ins).error();
      KPORT_TRY(
          ins->bind_all(repo, library, families[i].name, static_cast<std::int64_t>(i), definitions[i], now).run());
    }
    return true;
  });
  if (!r) return std::move(r).error();
  return {};
}

Result<std::vector<FamilyRecord>> Store::list_families() {
  return m_impl->read<std::vector<FamilyRecord>>([&](Connection& c) -> Result<std::vector<FamilyRecord>> {
    auto s = c.prepare(
        "SELECT repo, library, name, definition_json, updated_ms FROM op_families"
        " ORDER BY updated_ms, repo, library, position");
    if (!s) return std::move(s).error();
    return detail::collect<FamilyRecord>(*s, [](const detail::Stmt& st) {
      return FamilyRecord{st.text(0), st.text(1), st.text(2), st.text(3), st.int64(4)};
    });
  });
}

Result<Repository> Store::upsert_repository(std::string_view name, std::string_view url) {
  if (name.empty() || url.empty())
    return make_error(Errc::invalid_argument, "a repository needs a name and a url or path");
  const std::int64_t now = m_impl->now();
  return m_impl->write<Repository>([&](Connection& c) -> Result<Repository> {
    auto up = c.prepare(
        "INSERT INTO repositories(name, url, created_ms) VALUES (?1, ?2, ?3)"
        " ON CONFLICT(name) DO UPDATE SET url = excluded.url");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(name, url, now).run());
    auto get = c.prepare("SELECT id, name, url, created_ms FROM repositories WHERE name = ?1");
    if (!get) return std::move(get).error();
    get->bind(1, name);
    auto row = detail::collect_one<Repository>(*get, [](const detail::Stmt& s) {
      return Repository{s.int64(0), s.text(1), s.text(2), s.int64(3)};
    });
    if (!row) return std::move(row).error();
    return std::move(**row);
  });
}

Result<std::vector<Repository>> Store::list_repositories() {
  return m_impl->read<std::vector<Repository>>([&](Connection& c) -> Result<std::vector<Repository>> {
    auto s = c.prepare("SELECT id, name, url, created_ms FROM repositories ORDER BY name");
    if (!s) return std::move(s).error();
    return detail::collect<Repository>(*s, [](const detail::Stmt& st) {
      return Repository{st.int64(0), st.text(1), st.text(2), st.int64(3)};
    });
  });
}

Status Store::put_commit(const Commit& commit) {
  if (commit.sha.size() < 7)
    return make_error(Errc::invalid_argument, "commit sha \"" + commit.sha + "\" is too short; send the full sha");
  const std::int64_t now = m_impl->now();
  auto r = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto repo_id = detail::repository_id(c, commit.repo);
    if (!repo_id) return std::move(repo_id).error();
    // Commits are immutable in git, so a known sha is left as it is.
    auto ins = c.prepare(
        "INSERT OR IGNORE INTO commits(sha, repo_id, parent_sha, message, author, time_ms, created_ms)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!ins) return std::move(ins).error();
    KPORT_TRY(ins->bind_all(commit.sha, *repo_id, commit.parent_sha, commit.message, commit.author, commit.time_ms, now)
                  .run());
    return true;
  });
  if (!r) return std::move(r).error();
  return {};
}

Result<std::optional<Commit>> Store::get_commit(std::string_view sha) {
  return m_impl->read<std::optional<Commit>>([&](Connection& c) -> Result<std::optional<Commit>> {
    auto s = c.prepare(
        "SELECT c.sha, r.name, c.parent_sha, c.message, c.author, c.time_ms"
        " FROM commits c JOIN repositories r ON r.id = c.repo_id WHERE c.sha = ?1");
    if (!s) return std::move(s).error();
    s->bind(1, sha);
    return detail::collect_one<Commit>(*s, [](const detail::Stmt& st) {
      return Commit{st.text(0), st.text(1), st.opt_text(2), st.text(3), st.text(4), st.int64(5)};
    });
  });
}

}  // namespace kport::db
