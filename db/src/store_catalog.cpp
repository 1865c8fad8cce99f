// Catalog: targets, GPU models, kernel instances, repositories and commits.
#include "impl.h"
#include "json_text.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

Status require(bool ok, std::string message) {
  if (ok) return {};
  return make_error(Errc::invalid_argument, std::move(message));
}

}  // namespace

Result<bool> Store::upsert_target(const Target& t) {
  KPORT_TRY(require(!t.name.empty(), "target name is empty; expected e.g. \"sm_90a\""));
  KPORT_TRY(require(!t.arch.empty(), "target " + t.name + " has no arch; expected e.g. \"9.0\""));
  auto features = detail::json_text("features_json", t.features_json);
  if (!features) return std::move(features).error();
  const std::int64_t now = m_impl->now();
  return m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto known = c.prepare("SELECT 1 FROM targets WHERE name = ?1");
    if (!known) return std::move(known).error();
    auto row = known->bind(1, t.name).step();
    if (!row) return std::move(row).error();
    const bool is_new = !*row;
    // A re-listed target keeps first_seen and its "new" flag until acknowledged.
    auto up = c.prepare(
        "INSERT INTO targets(name, arch, features_json, toolkit, first_seen_ms, updated_ms, is_new)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?5, 1) ON CONFLICT(name) DO UPDATE SET arch = excluded.arch,"
        " features_json = excluded.features_json, toolkit = excluded.toolkit, updated_ms = excluded.updated_ms");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(t.name, t.arch, *features, t.toolkit, now).run());
    return is_new;
  });
}

Status Store::acknowledge_target(std::string_view name) {
  auto r = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto s = c.prepare("UPDATE targets SET is_new = 0 WHERE name = ?1");
    if (!s) return std::move(s).error();
    KPORT_TRY(s->bind(1, name).run());
    if (c.changes() == 0) return make_error(Errc::not_found, "no target named " + std::string(name));
    return true;
  });
  if (!r) return std::move(r).error();
  return {};
}

Result<std::optional<Target>> Store::get_target(std::string_view name) {
  return m_impl->read<std::optional<Target>>([&](Connection& c) -> Result<std::optional<Target>> {
    auto s = c.prepare(std::string(detail::k_target_select) + " WHERE name = ?1");
    if (!s) return std::move(s).error();
    s->bind(1, name);
    return detail::collect_one<Target>(*s, detail::read_target);
  });
}

Result<std::vector<Target>> Store::list_targets() {
  return m_impl->read<std::vector<Target>>([&](Connection& c) -> Result<std::vector<Target>> {
    auto s = c.prepare(std::string(detail::k_target_select) + " ORDER BY name");
    if (!s) return std::move(s).error();
    return detail::collect<Target>(*s, detail::read_target);
  });
}

Status Store::set_target_check_arches(std::string_view target, const std::vector<std::string>& arches) {
  auto r = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto known = c.prepare("SELECT 1 FROM targets WHERE name = ?1");
    if (!known) return std::move(known).error();
    auto row = known->bind(1, target).step();
    if (!row) return std::move(row).error();
    if (!*row) return make_error(Errc::not_found, "no target named " + std::string(target) + "; upsert it first");
    auto del = c.prepare("DELETE FROM target_check_arches WHERE target = ?1");
    if (!del) return std::move(del).error();
    KPORT_TRY(del->bind(1, target).run());
    for (const auto& arch : arches) {
      auto ins = c.prepare("INSERT OR IGNORE INTO target_check_arches(target, arch) VALUES (?1, ?2)");
      if (!ins) return std::move(ins).error();
      KPORT_TRY(ins->bind_all(target, arch).run());
    }
    return true;
  });
  if (!r) return std::move(r).error();
  return {};
}

Result<std::vector<std::string>> Store::target_check_arches(std::string_view target) {
  return m_impl->read<std::vector<std::string>>([&](Connection& c) -> Result<std::vector<std::string>> {
    auto s = c.prepare("SELECT arch FROM target_check_arches WHERE target = ?1 ORDER BY arch");
    if (!s) return std::move(s).error();
    s->bind(1, target);
    return detail::collect<std::string>(*s, [](const detail::Stmt& st) { return st.text(0); });
  });
}

Result<bool> Store::record_gpu_model(std::string_view name, std::string_view arch, std::string_view driver) {
  KPORT_TRY(require(!name.empty() && !arch.empty(), "a GPU model needs a name and an arch"));
  const std::int64_t now = m_impl->now();
  return m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto m = c.prepare(
        "INSERT INTO gpu_models(name, arch, first_seen_ms, last_seen_ms) VALUES (?1, ?2, ?3, ?3)"
        " ON CONFLICT(name) DO UPDATE SET last_seen_ms = excluded.last_seen_ms, arch = excluded.arch");
    if (!m) return std::move(m).error();
    // changes() cannot tell insert from update, so ask first.
    auto known = c.prepare("SELECT 1 FROM gpu_models WHERE name = ?1");
    if (!known) return std::move(known).error();
    auto row = known->bind(1, name).step();
    if (!row) return std::move(row).error();
    bool is_new = !*row;
    KPORT_TRY(m->bind_all(name, arch, now).run());
    if (!driver.empty()) {
      auto d = c.prepare("INSERT OR IGNORE INTO gpu_drivers(gpu_model, driver, first_seen_ms) VALUES (?1, ?2, ?3)");
      if (!d) return std::move(d).error();
      KPORT_TRY(d->bind_all(name, driver, now).run());
      is_new = is_new || c.changes() > 0;
    }
    return is_new;
  });
}

Result<std::vector<GpuModel>> Store::list_gpu_models() {
  return m_impl->read<std::vector<GpuModel>>([&](Connection& c) -> Result<std::vector<GpuModel>> {
    auto s = c.prepare("SELECT name, arch, first_seen_ms, last_seen_ms FROM gpu_models ORDER BY name");
    if (!s) return std::move(s).error();
    auto models = detail::collect<GpuModel>(*s, [](const detail::Stmt& st) {
      return GpuModel{st.text(0), st.text(1), st.int64(2), st.int64(3), {}};
    });
    if (!models) return std::move(models).error();
    for (auto& m : *models) {
      auto d = c.prepare("SELECT driver FROM gpu_drivers WHERE gpu_model = ?1 ORDER BY driver");
      if (!d) return std::move(d).error();
      d->bind(1, m.name);
      auto drivers = detail::collect<std::string>(*d, [](const detail::Stmt& st) { return st.text(0); });
      if (!drivers) return std::move(drivers).error();
      m.drivers = std::move(*drivers);
    }
    return models;
  });
}

Result<std::vector<porting::SameCase>> Store::same_cases_on_gpus(std::string_view gpu_model, int limit) {
  return m_impl->read<std::vector<porting::SameCase>>([&](Connection& c) -> Result<std::vector<porting::SameCase>> {
    // Each side through results_by_gpu (gpu_model, family, dtype, shape).
    auto s = c.prepare(
        "SELECT a.gpu_uuid, b.gpu_uuid, a.family, a.median_us, b.median_us, coalesce(a.sm_clock_mhz, 0),"
        " coalesce(b.sm_clock_mhz, 0) FROM results a JOIN results b"
        " ON b.gpu_model = a.gpu_model AND b.family = a.family AND b.dtype = a.dtype AND b.shape = a.shape"
        " AND b.instance = a.instance AND b.commit_sha = a.commit_sha AND b.gpu_uuid > a.gpu_uuid"
        " WHERE a.gpu_model = ?1 AND a.gpu_uuid != '' AND a.status = 'passed' AND b.status = 'passed'"
        " AND a.median_us > 0 AND b.median_us > 0 ORDER BY max(a.id, b.id) DESC LIMIT ?2");
    if (!s) return std::move(s).error();
    s->bind_all(gpu_model, static_cast<std::int64_t>(limit));
    return detail::collect<porting::SameCase>(*s, [](const detail::Stmt& st) {
      return porting::SameCase{st.text(0), st.text(1), st.text(2), st.real(3), st.real(4), st.real(5), st.real(6)};
    });
  });
}

Result<int> Store::gpu_sm_count(const std::string& gpu_model) {
  return m_impl->read<int>([&](Connection& c) -> Result<int> {
    auto s = c.prepare(
        "SELECT CAST(json_extract(extra_json, '$.sm_count') AS INTEGER) AS sms FROM runners "
        "WHERE role = 'gpu' AND gpu_model = ?1 AND json_valid(extra_json) AND sms > 0 "
        "ORDER BY registered_ms DESC, id DESC LIMIT 1");
    if (!s) return std::move(s).error();
    s->bind(1, gpu_model);
    auto counts = detail::collect<std::int64_t>(*s, [](const detail::Stmt& st) { return st.int64(0); });
    if (!counts) return std::move(counts).error();
    if (counts->empty() || counts->front() > 1'000'000) return 0;
    return static_cast<int>(counts->front());
  });
}

}  // namespace kport::db
