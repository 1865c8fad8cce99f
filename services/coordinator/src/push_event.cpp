// The three senders agree on the shape of a push (ref, before, after, commits[],
// repository) and differ in headers, signatures and where the repository's name lives.
#include "push_event.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>

#include "kport/common/crypto.h"
#include "kport/common/utf8.h"

namespace kport::coordinator {
namespace json = boost::json;

namespace {

// A pushed commit's message is kept to 4 KiB, cut on a character boundary: a cut
// inside a multi-byte character would make every answer that shows it invalid UTF-8.
constexpr std::size_t k_max_message_bytes = 4096;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

const json::value* at(const json::object& o, std::string_view key) { return o.if_contains(key); }

std::string string_at(const json::object& o, std::string_view key) {
  const auto* v = at(o, key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

void add_url(std::vector<std::string>& urls, const json::object& o, std::string_view key) {
  if (auto s = string_at(o, key); !s.empty() && std::find(urls.begin(), urls.end(), s) == urls.end()) urls.push_back(s);
}

int digits(std::string_view s, std::size_t pos, std::size_t n) {
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + doe - 719468;
}

// The repository's name and URLs, from GitLab's project or the others' repository.
void read_repository(const json::object& o, PushEvent& ev) {
  const json::object* repo = nullptr;
  if (const auto* r = at(o, "repository"); r && r->is_object()) repo = &r->as_object();
  const json::object* project = nullptr;
  if (const auto* p = at(o, "project"); p && p->is_object()) project = &p->as_object();
  if (project) {
    ev.repo_name = string_at(*project, "path_with_namespace");
    for (auto k : {"git_http_url", "git_ssh_url", "http_url", "ssh_url", "web_url", "url"})
      add_url(ev.repo_urls, *project, k);
  }
  if (repo) {
    if (ev.repo_name.empty()) ev.repo_name = string_at(*repo, "full_name");
    if (ev.repo_name.empty()) ev.repo_name = string_at(*repo, "name");
    for (auto k : {"clone_url", "ssh_url", "git_url", "html_url", "git_http_url", "git_ssh_url", "url", "homepage"})
      add_url(ev.repo_urls, *repo, k);
  }
}

const json::object* object_at(const json::object& o, std::string_view key) {
  const auto* v = at(o, key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

bool is_pull_event(std::string_view source, std::string_view event) {
  return source == "gitlab" ? event == "Merge Request Hook" : event == "pull_request";
}

// A pull or merge request as the push of its head (see PushEvent::is_pull).
Result<PushEvent> parse_pull(PushEvent ev, const json::object& o) {
  read_repository(o, ev);
  if (ev.repo_name.empty() && ev.repo_urls.empty())
    return make_error(Errc::invalid_argument,
                      "the pull request names no repository (repository.full_name or project.path_with_namespace)");
  std::string head, title;
  const bool gitlab = ev.source == "gitlab";
  const json::object* attrs = object_at(o, gitlab ? "object_attributes" : "pull_request");
  if (!attrs)
    return make_error(Errc::invalid_argument, gitlab ? "field 'object_attributes' must be an object"
                                                     : "field 'pull_request' must be an object");
  title = utf8::clip(string_at(*attrs, "title"), k_max_message_bytes);
  ev.action = string_at(gitlab ? *attrs : o, "action");
  bool new_head = false;
  if (gitlab) {
    const auto* iid = at(*attrs, "iid");
    if (!iid || !iid->is_int64() || iid->as_int64() <= 0)
      return make_error(Errc::invalid_argument, "field 'object_attributes.iid' must be a positive integer");
    ev.pull_number = iid->as_int64();
    if (const auto* last = object_at(*attrs, "last_commit")) head = string_at(*last, "id");
    ev.base_ref = "refs/heads/" + string_at(*attrs, "target_branch");
    if (const auto* refs = object_at(*attrs, "diff_refs")) ev.base_sha = string_at(*refs, "base_sha");
    ev.before = string_at(*attrs, "oldrev");
    // An update without oldrev changed the description or labels, not the head.
    new_head = ev.action == "update" && !ev.before.empty();
    ev.is_close = ev.action == "close";
    if (ev.action != "open" && ev.action != "reopen" && !new_head && !ev.is_close) return ev;
    ev.ref = "refs/merge-requests/" + std::to_string(ev.pull_number) + "/head";
  } else {
    const auto* number = at(o, "number");
    if (!number || !number->is_int64() || number->as_int64() <= 0)
      return make_error(Errc::invalid_argument, "field 'number' must be a positive integer");
    ev.pull_number = number->as_int64();
    if (const auto* h = object_at(*attrs, "head")) head = string_at(*h, "sha");
    if (const auto* b = object_at(*attrs, "base")) {
      ev.base_sha = string_at(*b, "sha");
      ev.base_ref = "refs/heads/" + string_at(*b, "ref");
    }
    ev.before = string_at(o, "before");  // GitHub's synchronize names the previous head
    new_head = ev.action == "synchronize" || ev.action == "synchronized";
    // A merged request's head lives on in its base branch, whose push validates it.
    const auto* merged = at(*attrs, "merged");
    ev.is_close = ev.action == "closed" && !(merged && merged->is_bool() && merged->as_bool());
    if (ev.action != "opened" && ev.action != "reopened" && !new_head && !ev.is_close) return ev;
    ev.ref = "refs/pull/" + std::to_string(ev.pull_number) + "/head";
  }
  if (!is_full_sha(head))
    return make_error(Errc::invalid_argument, "the pull request's head commit must be a full sha");
  if (!ev.base_sha.empty() && !is_full_sha(ev.base_sha))
    return make_error(Errc::invalid_argument, "the pull request's base sha must be a full sha");
  if (!ev.before.empty() && !is_full_sha(ev.before))
    return make_error(Errc::invalid_argument, "field 'before' must be a full commit sha");
  if (ev.before.empty()) ev.before = std::string(40, '0');
  ev.after = head;
  if (ev.is_close) return ev;
  ev.is_pull = true;
  ev.forced = new_head;
  PushedCommit c;
  c.sha = head;
  if (!ev.base_sha.empty()) c.parent = ev.base_sha;
  c.message = title;
  ev.commits.push_back(std::move(c));
  return ev;
}

}  // namespace

bool is_full_sha(std::string_view s) {
  return (s.size() == 40 || s.size() == 64) && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool is_null_sha(std::string_view s) { return is_full_sha(s) && s.find_first_not_of('0') == std::string_view::npos; }

std::optional<std::int64_t> parse_iso8601_ms(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.fff](Z|+HH:MM|-HH:MM)
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != ' ') || t[13] != ':' || t[16] != ':')
    return std::nullopt;
  int y = digits(t, 0, 4), mo = digits(t, 5, 2), d = digits(t, 8, 2), h = digits(t, 11, 2), mi = digits(t, 14, 2),
      s = digits(t, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60)
    return std::nullopt;
  std::size_t pos = 19;
  std::int64_t ms = 0;
  if (pos < t.size() && t[pos] == '.') {
    ++pos;
    int scale = 100;
    while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos]))) {
      ms += (t[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  std::int64_t offset_min = 0;
  if (pos < t.size() && (t[pos] == 'Z' || t[pos] == 'z')) {
    ++pos;
  } else if (pos < t.size() && (t[pos] == '+' || t[pos] == '-')) {
    int oh = digits(t, pos + 1, 2), om = digits(t, pos + 4, 2);
    if (oh < 0 || om < 0 || pos + 3 >= t.size() || t[pos + 3] != ':') return std::nullopt;
    offset_min = (t[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != t.size()) return std::nullopt;
  const std::int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset_min * 60;
  return secs * 1000 + ms;
}

Result<std::string> push_source(const HeaderLookup& header) {
  if (!header("X-Gitea-Event").empty() || !header("X-Gitea-Delivery").empty()) return std::string("gitea");
  if (!header("X-Gitlab-Event").empty()) return std::string("gitlab");
  if (!header("X-GitHub-Event").empty()) return std::string("github");
  return make_error(Errc::invalid_argument,
                    "not a push webhook: expected an X-GitHub-Event, X-Gitea-Event or X-Gitlab-Event header");
}

Status verify_push(std::string_view source, const HeaderLookup& header, std::string_view body,
                   std::string_view secret) {
  if (secret.empty()) return make_error(Errc::unauthorized, "no hook secret is configured on this coordinator");
  if (source == "gitlab") {
    std::string_view token = header("X-Gitlab-Token");
    if (token.empty()) return make_error(Errc::unauthorized, "missing X-Gitlab-Token; set the webhook's secret token");
    if (!crypto::constant_time_equal(token, secret))
      return make_error(Errc::unauthorized, "X-Gitlab-Token does not match the hook secret");
    return {};
  }
  const std::string expected = crypto::to_hex(crypto::hmac_sha256(secret, body));
  if (source == "gitea") {
    std::string_view sig = header("X-Gitea-Signature");
    if (sig.empty()) return make_error(Errc::unauthorized, "missing X-Gitea-Signature; set the webhook's secret");
    if (!crypto::constant_time_equal(lower(sig), expected))
      return make_error(Errc::unauthorized,
                        "X-Gitea-Signature is not the HMAC-SHA256 of the body with the hook secret");
    return {};
  }
  std::string_view sig = header("X-Hub-Signature-256");
  if (sig.empty()) return make_error(Errc::unauthorized, "missing X-Hub-Signature-256; set the webhook's secret");
  if (sig.size() < 7 || lower(sig.substr(0, 7)) != "sha256=")
    return make_error(Errc::unauthorized, "X-Hub-Signature-256 must read sha256=<hex>");
  if (!crypto::constant_time_equal(lower(sig.substr(7)), expected))
    return make_error(Errc::unauthorized,
                      "X-Hub-Signature-256 is not the HMAC-SHA256 of the body with the hook secret");
  return {};
}

Result<PushEvent> parse_push(std::string_view source, const HeaderLookup& header, std::string_view body) {
  PushEvent ev;
  ev.source = std::string(source);
  std::string_view delivery = source == "gitea"    ? header("X-Gitea-Delivery")
                              : source == "gitlab" ? header("X-Gitlab-Event-UUID")
                                                   : header("X-GitHub-Delivery");
  if (delivery.size() > 256)
    return make_error(Errc::invalid_argument, "the delivery id header is longer than 256 characters");
  // Without a delivery id, the same body is the same delivery.
  ev.delivery_id = delivery.empty() ? "sha256:" + crypto::sha256_hex(body) : std::string(delivery);
  ev.event = std::string(source == "gitea"    ? header("X-Gitea-Event")
                         : source == "gitlab" ? header("X-Gitlab-Event")
                                              : header("X-GitHub-Event"));
  ev.is_push = source == "gitlab" ? ev.event == "Push Hook" : ev.event == "push";
  const bool pull = is_pull_event(source, ev.event);
  if (!ev.is_push && !pull) return ev;

  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) return make_error(Errc::bad_json, "the push payload is not JSON: " + ec.message());
  if (!doc.is_object()) return make_error(Errc::bad_json, "the push payload must be a JSON object");
  const json::object& o = doc.as_object();
  if (pull) return parse_pull(std::move(ev), o);
  ev.ref = string_at(o, "ref");
  ev.before = string_at(o, "before");
  ev.after = string_at(o, "after");
  if (ev.ref.empty() || ev.ref.size() > 512 || ev.ref.rfind("refs/", 0) != 0)
    return make_error(Errc::invalid_argument, "field 'ref' must be a ref name such as refs/heads/main");
  if (!is_full_sha(ev.before)) return make_error(Errc::invalid_argument, "field 'before' must be a full commit sha");
  if (!is_full_sha(ev.after)) return make_error(Errc::invalid_argument, "field 'after' must be a full commit sha");

  read_repository(o, ev);
  if (ev.repo_name.empty() && ev.repo_urls.empty())
    return make_error(Errc::invalid_argument,
                      "the push names no repository (repository.full_name or project.path_with_namespace)");

  if (const auto* d = at(o, "deleted"); d && d->is_bool()) ev.deleted = d->as_bool();
  if (is_null_sha(ev.after)) ev.deleted = true;
  if (const auto* f = at(o, "forced"); f && f->is_bool()) ev.forced = f->as_bool();

  if (const auto* cs = at(o, "commits"); cs && !cs->is_null()) {
    if (!cs->is_array()) return make_error(Errc::invalid_argument, "field 'commits' must be an array");
    const auto& arr = cs->as_array();
    if (arr.size() > 10000) return make_error(Errc::invalid_argument, "field 'commits' has more than 10000 entries");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string where = "commits[" + std::to_string(i) + "]";
      if (!arr[i].is_object()) return make_error(Errc::invalid_argument, "field '" + where + "' must be an object");
      const auto& c = arr[i].as_object();
      PushedCommit pc;
      pc.sha = string_at(c, "id");
      if (!is_full_sha(pc.sha))
        return make_error(Errc::invalid_argument, "field '" + where + ".id' must be a full commit sha");
      pc.message = utf8::clip(string_at(c, "message"), k_max_message_bytes);
      if (const auto* a = at(c, "author"); a && a->is_object()) {
        std::string name = string_at(a->as_object(), "name"), email = string_at(a->as_object(), "email");
        pc.author = email.empty() ? name : name + " <" + email + ">";
      }
      pc.time_ms = parse_iso8601_ms(string_at(c, "timestamp")).value_or(0);
      if (const auto* ps = at(c, "parents");
          ps && ps->is_array() && !ps->as_array().empty() && ps->as_array()[0].is_string()) {
        std::string p(ps->as_array()[0].as_string());
        if (!is_full_sha(p))
          return make_error(Errc::invalid_argument, "field '" + where + ".parents[0]' must be a full commit sha");
        pc.parent = p;
      } else if (!ev.commits.empty()) {
        pc.parent = ev.commits.back().sha;  // pushes list commits oldest first
      } else if (!ev.forced && !is_null_sha(ev.before)) {
        pc.parent = ev.before;
      }
      ev.commits.push_back(std::move(pc));
    }
  }
  // A push of commits the server already had (a new branch at an old commit) lists none.
  if (!ev.deleted && (ev.commits.empty() || ev.commits.back().sha != ev.after)) {
    bool listed =
        std::any_of(ev.commits.begin(), ev.commits.end(), [&](const PushedCommit& c) { return c.sha == ev.after; });
    if (!listed) {
      PushedCommit head;
      head.sha = ev.after;
      if (!ev.forced && !is_null_sha(ev.before)) head.parent = ev.before;
      ev.commits.push_back(std::move(head));
    }
  }
  return ev;
}

}  // namespace kport::coordinator
