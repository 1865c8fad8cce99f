// Forge connections, the reports of push pipelines and the outgoing delivery queue
// (migration 0012).
#include "impl.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::check_delivery;
using detail::Connection;
using detail::insert_delivery;

namespace {

constexpr const char* k_connection_select =
    "SELECT repo, kind, api_url, project, token_file, mode, broken_reason, broken_ms, created_ms, updated_ms,"
    " app_id, installation_id, private_key_file FROM forge_connections";

ForgeConnection read_connection(const detail::Stmt& s, int at = 0) {
  ForgeConnection c;
  c.repo = s.text(at + 0);
  c.kind = s.text(at + 1);
  c.api_url = s.text(at + 2);
  c.project = s.text(at + 3);
  c.token_file = s.text(at + 4);
  c.mode = s.text(at + 5);
  c.broken_reason = s.opt_text(at + 6);
  c.broken_ms = s.opt_int64(at + 7);
  c.created_ms = s.int64(at + 8);
  c.updated_ms = s.int64(at + 9);
  c.app_id = s.opt_int64(at + 10);
  c.installation_id = s.opt_int64(at + 11);
  c.private_key_file = s.opt_text(at + 12).value_or("");
  return c;
}

constexpr const char* k_delivery_select =
    "SELECT d.id, d.kind, d.subject, d.repo, d.pipeline_id, d.event, d.commit_sha, d.method, d.url, d.body, d.state,"
    " d.attempts, d.max_attempts, d.next_attempt_ms, d.last_status, d.last_error, d.created_ms, d.updated_ms,"
    " d.finished_ms FROM deliveries d";

Delivery read_delivery(const detail::Stmt& s) {
  Delivery d;
  d.id = s.int64(0);
  d.kind = s.text(1);
  d.subject = s.text(2);
  d.repo = s.opt_text(3);
  d.pipeline_id = s.opt_int64(4);
  d.event = s.text(5);
  d.commit_sha = s.text(6);
  d.method = s.text(7);
  d.url = s.text(8);
  d.body = s.text(9);
  d.state = s.text(10);
  d.attempts = s.int32(11);
  d.max_attempts = s.int32(12);
  d.next_attempt_ms = s.int64(13);
  if (auto st = s.opt_int64(14)) d.last_status = static_cast<int>(*st);
  d.last_error = s.text(15);
  d.created_ms = s.int64(16);
  d.updated_ms = s.int64(17);
  d.finished_ms = s.opt_int64(18);
  return d;
}

Status check_connection(const ForgeConnection& c) {
  if (c.kind != "github" && c.kind != "gitea" && c.kind != "gitlab")
    return make_error(Errc::invalid_argument, "field 'kind' must be github, gitea or gitlab, not '" + c.kind + "'");
  if (c.mode != "check" && c.mode != "status")
    return make_error(Errc::invalid_argument, "field 'mode' must be check or status, not '" + c.mode + "'");
  if (c.mode == "check" && c.kind != "github")
    return make_error(Errc::invalid_argument, "field 'mode': check runs are GitHub's; use mode status for " + c.kind);
  if (c.api_url.empty()) return make_error(Errc::invalid_argument, "field 'api_url' must not be empty");
  if (c.project.empty()) return make_error(Errc::invalid_argument, "field 'project' must not be empty");
  const bool app = c.app_id || c.installation_id || !c.private_key_file.empty();
  if (app && !c.token_file.empty())
    return make_error(Errc::invalid_argument,
                      "give either 'token_file' or a GitHub App's 'app_id', 'installation_id' and "
                      "'private_key_file', not both");
  if (!app) {
    if (c.token_file.empty()) return make_error(Errc::invalid_argument, "field 'token_file' must not be empty");
    return {};
  }
  if (c.kind != "github")
    return make_error(Errc::invalid_argument,
                      "GitHub App credentials are GitHub's; " + c.kind + " takes a 'token_file'");
  if (!c.app_id || *c.app_id < 1)
    return make_error(Errc::invalid_argument, "field 'app_id' must be the GitHub App's id, an integer >= 1");
  if (!c.installation_id || *c.installation_id < 1)
    return make_error(Errc::invalid_argument,
                      "field 'installation_id' must be the app's installation id, an integer >= 1");
  if (c.private_key_file.empty())
    return make_error(Errc::invalid_argument, "field 'private_key_file' must not be empty");
  return {};
}

Result<std::optional<ForgeConnection>> load_connection(Connection& c, std::string_view repo) {
  auto s = c.prepare(std::string(k_connection_select) + " WHERE repo = ?1");
  if (!s) return std::move(s).error();
  s->bind(1, repo);
  return detail::collect_one<ForgeConnection>(*s, [](const detail::Stmt& r) { return read_connection(r); });
}

// The reports a statement selects as (pipeline_id, state, check_run_id, repo), each with
// its pipeline and its repository's connection; a report whose pipeline is gone is left out.
Result<std::vector<PendingReport>> load_reports(Connection& c, detail::Stmt& s) {
  struct Row {
    std::int64_t pipeline_id;
    std::string state;
    std::optional<std::int64_t> check_run_id;
    std::string repo;
  };
  auto rows = detail::collect<Row>(s, [](const detail::Stmt& r) {
    return Row{r.int64(0), r.text(1), r.opt_int64(2), r.text(3)};
  });
  if (!rows) return std::move(rows).error();
  std::vector<PendingReport> out;
  for (auto& row : *rows) {
    auto p = detail::load_pipeline(c, row.pipeline_id);
    if (!p) return std::move(p).error();
    if (!*p) continue;
    auto conn = load_connection(c, row.repo);
    if (!conn) return std::move(conn).error();
    PendingReport pr;
    pr.pipeline = std::move(**p);
    if (*conn) pr.connection = std::move(**conn);
    if (row.state != "new") pr.reported = row.state;
    pr.check_run_id = row.check_run_id;
    out.push_back(std::move(pr));
  }
  return out;
}

}  // namespace

Result<ForgeConnection> Store::put_forge_connection(const ForgeConnection& in) {
  KPORT_TRY(check_connection(in));
  const std::int64_t now = m_impl->now();
  return m_impl->write<ForgeConnection>([&](Connection& c) -> Result<ForgeConnection> {
    auto repo = detail::repository_id(c, in.repo);
    if (!repo) return std::move(repo).error();
    auto up = c.prepare(
        "INSERT INTO forge_connections(repo, kind, api_url, project, token_file, mode, created_ms, updated_ms,"
        " app_id, installation_id, private_key_file)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9, ?10) ON CONFLICT(repo) DO UPDATE SET kind = excluded.kind,"
        " api_url = excluded.api_url, project = excluded.project, token_file = excluded.token_file,"
        " mode = excluded.mode, app_id = excluded.app_id, installation_id = excluded.installation_id,"
        " private_key_file = excluded.private_key_file, broken_reason = NULL, broken_ms = NULL,"
        " updated_ms = excluded.updated_ms");
    if (!up) return std::move(up).error();
    const std::optional<std::string> key_file =
        in.private_key_file.empty() ? std::nullopt : std::optional<std::string>(in.private_key_file);
    KPORT_TRY(up->bind_all(in.repo, in.kind, in.api_url, in.project, in.token_file, in.mode, now, in.app_id,
                           in.installation_id, key_file)
                  .run());
    auto loaded = load_connection(c, in.repo);
    if (!loaded) return std::move(loaded).error();
    if (!*loaded) return make_error(Errc::internal, "forge connection of '" + in.repo + "' vanished");
    return std::move(**loaded);
  });
}

Result<std::optional<ForgeConnection>> Store::get_forge_connection(std::string_view repo) {
  return m_impl->read<std::optional<ForgeConnection>>([&](Connection& c) { return load_connection(c, repo); });
}

Result<std::vector<ForgeConnection>> Store::list_forge_connections() {
  return m_impl->read<std::vector<ForgeConnection>>([&](Connection& c) -> Result<std::vector<ForgeConnection>> {
    auto s = c.prepare(std::string(k_connection_select) + " ORDER BY repo");
    if (!s) return std::move(s).error();
    return detail::collect<ForgeConnection>(*s, [](const detail::Stmt& r) { return read_connection(r); });
  });
}

Status Store::mark_forge_broken(std::string_view repo, std::string_view reason) {
  const std::int64_t now = m_impl->now();
  auto done = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto s =
        c.prepare("UPDATE forge_connections SET broken_reason = ?2, broken_ms = ?3, updated_ms = ?3 WHERE repo = ?1");
    if (!s) return std::move(s).error();
    KPORT_TRY(s->bind_all(repo, reason, now).run());
    return true;
  });
  if (!done.ok()) return std::move(done).error();
  return {};
}

Result<std::vector<PendingReport>> Store::pending_reports(int limit) {
  KPORT_TRY(detail::check_limit(limit));
  return m_impl->read<std::vector<PendingReport>>([&](Connection& c) -> Result<std::vector<PendingReport>> {
    auto s = c.prepare(
        "SELECT fr.pipeline_id, fr.state, fr.check_run_id, fr.repo FROM forge_reports fr"
        " WHERE fr.state != 'completed' ORDER BY fr.pipeline_id LIMIT ?1");
    if (!s) return std::move(s).error();
    s->bind(1, limit);
    return load_reports(c, *s);
  });
}

Result<std::vector<PendingReport>> Store::commit_reports(std::string_view commit_sha, int limit) {
  KPORT_TRY(detail::check_limit(limit));
  return m_impl->read<std::vector<PendingReport>>([&](Connection& c) -> Result<std::vector<PendingReport>> {
    auto s = c.prepare(
        "SELECT fr.pipeline_id, fr.state, fr.check_run_id, fr.repo FROM forge_reports fr"
        " JOIN pipelines p ON p.id = fr.pipeline_id WHERE p.commit_sha = ?1 ORDER BY fr.pipeline_id DESC LIMIT ?2");
    if (!s) return std::move(s).error();
    s->bind_all(commit_sha, limit);
    return load_reports(c, *s);
  });
}

namespace detail {

Status check_delivery(const NewDelivery& d) {
  if (d.kind != "check_run" && d.kind != "commit_status" && d.kind != "webhook")
    return make_error(Errc::invalid_argument,
                      "delivery kind must be check_run, commit_status or webhook, not '" + d.kind + "'");
  if (d.subject.empty() || d.url.empty() || d.event.empty())
    return make_error(Errc::invalid_argument, "a delivery needs a subject, an event and a url");
  if (d.max_attempts < 1) return make_error(Errc::invalid_argument, "a delivery needs max_attempts >= 1");
  return {};
}

Status insert_delivery(Connection& c, const NewDelivery& d, std::int64_t now) {
  auto ins = c.prepare(
      "INSERT INTO deliveries(kind, subject, repo, pipeline_id, event, commit_sha, method, url, body, max_attempts,"
      " next_attempt_ms, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?11)");
  if (!ins) return std::move(ins).error();
  return ins
      ->bind_all(d.kind, d.subject, d.repo, d.pipeline_id, d.event, d.commit_sha, d.method, d.url, d.body,
                 d.max_attempts, now)
      .run();
}

}  // namespace detail

Result<bool> Store::advance_report(std::int64_t pipeline_id, std::string_view state,
                                   const std::vector<NewDelivery>& deliveries) {
  if (state != "queued" && state != "in_progress" && state != "completed")
    return make_error(Errc::invalid_argument,
                      "a report's state is queued, in_progress or completed, not '" + std::string(state) + "'");
  for (const auto& d : deliveries) KPORT_TRY(check_delivery(d));
  const std::int64_t now = m_impl->now();
  return m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto up = c.prepare(
        "UPDATE forge_reports SET state = ?2, updated_ms = ?3 WHERE pipeline_id = ?1 AND state != ?2"
        " AND state != 'completed'");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(pipeline_id, state, now).run());
    if (c.changes() == 0) return false;
    for (const auto& d : deliveries) KPORT_TRY(insert_delivery(c, d, now));
    return true;
  });
}

Result<std::vector<std::pair<Delivery, std::optional<std::int64_t>>>> Store::due_deliveries(std::int64_t now_ms,
                                                                                            int limit) {
  KPORT_TRY(detail::check_limit(limit));
  using Due = std::pair<Delivery, std::optional<std::int64_t>>;
  return m_impl->read<std::vector<Due>>([&](Connection& c) -> Result<std::vector<Due>> {
    // The oldest pending delivery of each subject is the only candidate: a forge sees a
    // pipeline's states in the order they happened, whatever the retries.
    auto q = c.prepare(
        "SELECT d.id, d.kind, d.subject, d.repo, d.pipeline_id, d.event, d.commit_sha, d.method, d.url, d.body, "
        "d.state,"
        " d.attempts, d.max_attempts, d.next_attempt_ms, d.last_status, d.last_error, d.created_ms, d.updated_ms,"
        " d.finished_ms, fr.check_run_id FROM deliveries d"
        " LEFT JOIN forge_reports fr ON fr.pipeline_id = d.pipeline_id AND fr.repo = d.repo"
        " LEFT JOIN forge_connections fc ON fc.repo = d.repo"
        " WHERE d.state = 'pending' AND d.next_attempt_ms <= ?1 AND fc.broken_reason IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.subject = d.subject AND e.state = 'pending' AND e.id < "
        "d.id)"
        " ORDER BY d.next_attempt_ms, d.id LIMIT ?2");
    if (!q) return std::move(q).error();
    q->bind_all(now_ms, limit);
    return detail::collect<Due>(*q, [](const detail::Stmt& r) { return Due{read_delivery(r), r.opt_int64(19)}; });
  });
}

Status Store::record_delivery_attempt(const DeliveryAttempt& a) {
  const std::int64_t now = m_impl->now();
  auto done = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto s = c.prepare(std::string(k_delivery_select) + " WHERE d.id = ?1");
    if (!s) return std::move(s).error();
    s->bind(1, a.id);
    auto found = detail::collect_one<Delivery>(*s, read_delivery);
    if (!found) return std::move(found).error();
    if (!*found) return make_error(Errc::not_found, "no delivery " + std::to_string(a.id));
    const Delivery& d = **found;
    if (d.state != "pending") return make_error(Errc::conflict, "delivery " + std::to_string(a.id) + " is " + d.state);
    const int attempts = d.attempts + 1;
    std::string state = "pending";
    std::string error = a.error;
    std::int64_t next = d.next_attempt_ms;
    switch (a.outcome) {
      case DeliveryAttempt::Outcome::delivered: state = "delivered"; break;
      case DeliveryAttempt::Outcome::failed: state = "failed"; break;
      case DeliveryAttempt::Outcome::refused: break;  // waits for the connection to be repaired
      case DeliveryAttempt::Outcome::retry:
        if (attempts >= d.max_attempts) {
          state = "failed";
          error = "gave up after " + std::to_string(attempts) + " attempts: " + a.error;
        } else {
          next = a.next_attempt_ms;
        }
        break;
    }
    auto up = c.prepare(
        "UPDATE deliveries SET state = ?2, attempts = ?3, next_attempt_ms = ?4, last_status = ?5, last_error = ?6,"
        " updated_ms = ?7, finished_ms = CASE WHEN ?2 = 'pending' THEN NULL ELSE ?7 END WHERE id = ?1");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(a.id, state, attempts, next, a.status, error, now).run());
    if (a.check_run_id && d.pipeline_id && d.repo) {
      auto run = c.prepare("UPDATE forge_reports SET check_run_id = ?3 WHERE pipeline_id = ?1 AND repo = ?2");
      if (!run) return std::move(run).error();
      KPORT_TRY(run->bind_all(*d.pipeline_id, *d.repo, *a.check_run_id).run());
    }
    if (a.outcome == DeliveryAttempt::Outcome::refused && d.repo) {
      auto broken =
          c.prepare("UPDATE forge_connections SET broken_reason = ?2, broken_ms = ?3, updated_ms = ?3 WHERE repo = ?1");
      if (!broken) return std::move(broken).error();
      KPORT_TRY(broken->bind_all(*d.repo, a.error, now).run());
    }
    return true;
  });
  if (!done.ok()) return std::move(done).error();
  return {};
}

Result<std::optional<Delivery>> Store::get_delivery(std::int64_t id) {
  return m_impl->read<std::optional<Delivery>>([&](Connection& c) -> Result<std::optional<Delivery>> {
    auto s = c.prepare(std::string(k_delivery_select) + " WHERE d.id = ?1");
    if (!s) return std::move(s).error();
    s->bind(1, id);
    return detail::collect_one<Delivery>(*s, read_delivery);
  });
}

Result<Page<Delivery>> Store::list_deliveries(const DeliveryFilter& f) {
  KPORT_TRY(detail::check_limit(f.limit));
  return m_impl->read<Page<Delivery>>([&](Connection& c) -> Result<Page<Delivery>> {
    detail::Where w;
    w.add("d.state = ?", f.state);
    w.add("d.repo = ?", f.repo);
    w.add("d.kind = ?", f.kind);
    w.add("d.pipeline_id = ?", f.pipeline_id);
    w.add("d.id < ?", f.before_id);
    auto s =
        c.prepare(std::string(k_delivery_select) + w.sql() + " ORDER BY d.id DESC LIMIT " + std::to_string(f.limit));
    if (!s) return std::move(s).error();
    w.bind(*s);
    auto rows = detail::collect<Delivery>(*s, read_delivery);
    if (!rows) return std::move(rows).error();
    return detail::make_page(std::move(*rows), f.limit, [](const Delivery& d) { return d.id; });
  });
}

Result<DeliveryStats> Store::delivery_stats() {
  return m_impl->read<DeliveryStats>([&](Connection& c) -> Result<DeliveryStats> {
    DeliveryStats st;
    st.by_state = {{"pending", 0}, {"delivered", 0}, {"failed", 0}};
    auto s = c.prepare("SELECT state, count(*), coalesce(sum(attempts), 0) FROM deliveries GROUP BY state");
    if (!s) return std::move(s).error();
    for (;;) {
      auto row = s->step();
      if (!row) return std::move(row).error();
      if (!*row) break;
      st.by_state[s->text(0)] = s->int64(1);
      st.attempts += s->int64(2);
    }
    auto t = c.prepare("SELECT pruned, pruned_attempts FROM delivery_tally WHERE id = 1");
    if (!t) return std::move(t).error();
    auto trow = t->step();
    if (!trow) return std::move(trow).error();
    if (*trow) {
      st.pruned = t->int64(0);
      st.attempts += t->int64(1);
    }
    auto b = c.prepare("SELECT count(*) FROM forge_connections WHERE broken_reason IS NOT NULL");
    if (!b) return std::move(b).error();
    auto row = b->step();
    if (!row) return std::move(row).error();
    if (*row) st.broken_connections = b->int64(0);
    return st;
  });
}

Result<std::int64_t> Store::prune_deliveries(std::int64_t finished_before_ms, std::int64_t keep) {
  if (keep < 0) return make_error(Errc::invalid_argument, "keep must be 0 or more");
  return m_impl->write<std::int64_t>([&](Connection& c) -> Result<std::int64_t> {
    // The rows to remove: delivered and old, or delivered beyond the newest `keep`.
    constexpr const char* k_doomed =
        " FROM deliveries WHERE state = 'delivered' AND (finished_ms < ?1 OR id NOT IN"
        " (SELECT id FROM deliveries WHERE state = 'delivered' ORDER BY id DESC LIMIT ?2))";
    auto tally = c.prepare(std::string("UPDATE delivery_tally SET pruned = pruned + (SELECT count(*)") + k_doomed +
                           "), pruned_attempts = pruned_attempts + (SELECT coalesce(sum(attempts), 0)" + k_doomed +
                           ") WHERE id = 1");
    if (!tally) return std::move(tally).error();
    KPORT_TRY(tally->bind_all(finished_before_ms, keep).run());
    auto del = c.prepare(std::string("DELETE") + k_doomed);
    if (!del) return std::move(del).error();
    KPORT_TRY(del->bind_all(finished_before_ms, keep).run());
    return static_cast<std::int64_t>(c.changes());
  });
}

Result<BringupMark> Store::bringup_mark(std::string_view target, std::string_view repo) {
  return m_impl->read<BringupMark>([&](Connection& c) -> Result<BringupMark> {
    BringupMark m;
    m.target = std::string(target);
    m.repo = std::string(repo);  // bound as text: an empty string_view would bind NULL
    auto s = c.prepare("SELECT commit_sha, counts_json FROM bringup_marks WHERE target = ?1 AND repo = ?2");
    if (!s) return std::move(s).error();
    auto row = s->bind_all(target, m.repo).step();
    if (!row) return std::move(row).error();
    if (!*row) return m;
    m.commit_sha = s->opt_text(0);
    m.counts_json = s->text(1);
    auto each =
        c.prepare("SELECT value FROM bringup_marks, json_each(milestones_json) WHERE target = ?1 AND repo = ?2");
    if (!each) return std::move(each).error();
    each->bind_all(target, m.repo);
    auto names = detail::collect<std::string>(*each, [](const detail::Stmt& st) { return st.text(0); });
    if (!names) return std::move(names).error();
    m.milestones = std::move(*names);
    return m;
  });
}

Status Store::put_bringup_mark(const BringupMark& m, const std::vector<NewDelivery>& deliveries) {
  if (m.target.empty() || m.counts_json.empty())
    return make_error(Errc::invalid_argument, "a bring-up mark needs a target and its counts");
  for (const auto& d : deliveries) KPORT_TRY(check_delivery(d));
  const std::int64_t now = m_impl->now();
  auto done = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    // Milestone names are the coordinator's own words (stage/level); kept as plain text.
    std::string list = "[";
    for (std::size_t i = 0; i < m.milestones.size(); ++i) {
      if (i) list += ",";
      list += "\"";
      for (char ch : m.milestones[i])
        if (ch != '"' && ch != '\\' && static_cast<unsigned char>(ch) >= 0x20) list += ch;
      list += "\"";
    }
    list += "]";
    auto up = c.prepare(
        "INSERT INTO bringup_marks(target, commit_sha, counts_json, milestones_json, updated_ms, repo)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(target, repo) DO UPDATE SET commit_sha = excluded.commit_sha,"
        " counts_json = excluded.counts_json, milestones_json = excluded.milestones_json,"
        " updated_ms = excluded.updated_ms");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(m.target, m.commit_sha, m.counts_json, list, now, m.repo).run());
    for (const auto& d : deliveries) KPORT_TRY(insert_delivery(c, d, now));
    return true;
  });
  if (!done.ok()) return std::move(done).error();
  return {};
}

}  // namespace kport::db
