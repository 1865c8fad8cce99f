#include "github_app.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kport/common/utf8.h"
#include "kport/http/jwt.h"

namespace kport::coordinator {
namespace json = boost::json;

namespace {

constexpr std::int64_t k_jwt_backdate_s = 60;        // GitHub's advice: iat a minute back, for clock drift
constexpr std::int64_t k_jwt_life_s = 9 * 60;        // exp ahead of now; GitHub takes 10 minutes at most
constexpr std::int64_t k_renew_before_ms = 300'000;  // renew an installation token this long before it expires
constexpr std::int64_t k_max_life_ms = 3'600'000;    // the longest an installation token is held

std::string api_root(const db::ForgeConnection& c) {
  std::string root = c.api_url;
  while (!root.empty() && root.back() == '/') root.pop_back();
  return root;
}

// Digits at s[at, at+n) as a number; -1 when they are not all digits.
int digits(std::string_view s, std::size_t at, std::size_t n) {
  if (at + n > s.size()) return -1;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

Result<std::string> read_private_key(const std::string& file) {
  namespace fs = std::filesystem;
  const std::string what = "the GitHub App's private key file " + file;
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (ec || !fs::exists(st))
    return make_error(Errc::unprocessable, what +
                                               " does not exist; save the key the app's settings page "
                                               "generated there, readable only by the coordinator's user "
                                               "(chmod 600)");
  if (!fs::is_regular_file(st))
    return make_error(Errc::unprocessable, what + " is not a regular file; give the .pem file itself");
  // The key is as safe as its file: one others can read is refused, not merely warned of.
  if ((st.permissions() & (fs::perms::group_read | fs::perms::others_read)) != fs::perms::none)
    return make_error(Errc::unprocessable,
                      what + " is readable by other users; chmod 600 it (owned by the coordinator's user)");
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(Errc::unprocessable, "cannot read " + what + " as the coordinator's user; chown it");
  std::string pem(k_private_key_limit + 1, '\0');
  in.read(pem.data(), static_cast<std::streamsize>(pem.size()));
  pem.resize(static_cast<std::size_t>(in.gcount()));
  if (pem.size() > k_private_key_limit)
    return make_error(Errc::unprocessable, what + " is too large to hold a private key");
  if (auto ok = http::check_rsa_private_key(pem); !ok.ok())
    return make_error(Errc::unprocessable, what + " is not usable: " + ok.error().message);
  return pem;
}

std::string app_jwt_claims(std::int64_t app_id, std::int64_t now_s) {
  return json::serialize(
      json::object{{"iat", now_s - k_jwt_backdate_s}, {"exp", now_s + k_jwt_life_s}, {"iss", std::to_string(app_id)}});
}

Result<std::string> app_jwt(const db::ForgeConnection& c, std::string_view key_pem, std::int64_t now_s) {
  if (!c.app_id) return make_error(Errc::internal, "forge connection of '" + c.repo + "' is no GitHub App");
  auto jwt = http::sign_jwt_rs256(app_jwt_claims(*c.app_id, now_s), key_pem);
  if (!jwt.ok())
    return make_error(jwt.error().code,
                      "cannot sign the GitHub App's JWT with " + c.private_key_file + ": " + jwt.error().message);
  return jwt;
}

OutgoingRequest access_token_request(const db::ForgeConnection& c, const std::string& jwt) {
  OutgoingRequest r;
  r.method = "POST";
  r.url = api_root(c) + "/app/installations/" + std::to_string(c.installation_id.value_or(0)) + "/access_tokens";
  r.headers.emplace_back("Accept", "application/vnd.github+json");
  r.headers.emplace_back("X-GitHub-Api-Version", "2022-11-28");
  r.headers.emplace_back("Authorization", "Bearer " + jwt);
  return r;
}

std::int64_t renew_at_ms(std::int64_t now_ms, std::int64_t expires_ms) {
  // GitHub's tokens live an hour: a forge that says longer is not taken at its word.
  const std::int64_t life = std::min(expires_ms - now_ms, k_max_life_ms);
  expires_ms = now_ms + life;
  return life > 2 * k_renew_before_ms ? expires_ms - k_renew_before_ms : now_ms + life / 2;
}

std::optional<std::int64_t> parse_utc_time(std::string_view s) {
  if (s.size() < 20 || s.size() > 40 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
      s[16] != ':')
    return std::nullopt;
  std::tm tm{};
  const int year = digits(s, 0, 4), month = digits(s, 5, 2), day = digits(s, 8, 2);
  const int hour = digits(s, 11, 2), minute = digits(s, 14, 2), second = digits(s, 17, 2);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60)
    return std::nullopt;
  std::size_t at = 19;
  std::int64_t ms = 0;
  if (s[at] == '.') {
    std::int64_t scale = 100;
    for (++at; at < s.size() && std::isdigit(static_cast<unsigned char>(s[at])); ++at, scale /= 10)
      ms += (s[at] - '0') * scale;
  }
  const std::string_view zone = s.substr(at);
  if (zone != "Z" && zone != "z" && zone != "+00:00") return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<std::int64_t>(t) * 1000 + ms;
}

std::variant<InstallationToken, db::DeliveryAttempt> read_access_token_answer(const db::Delivery& d,
                                                                              const OutgoingRequest& request,
                                                                              const Result<ClientAnswer>& answer,
                                                                              std::int64_t now_ms,
                                                                              std::int64_t retry_at_ms) {
  db::DeliveryAttempt a;
  a.id = d.id;
  a.next_attempt_ms = retry_at_ms;
  a.outcome = db::DeliveryAttempt::Outcome::retry;
  const std::string what = "the GitHub App's token exchange (" + request.method + " " + request.url + ")";
  if (!answer.ok()) {
    a.error = utf8::clip(what + ": " + answer.error().message, 1000);
    return a;
  }
  const ClientAnswer& ans = *answer;
  a.status = ans.status;
  if (ans.status >= 200 && ans.status < 300) {
    // The body holds the token: it is read, never quoted.
    boost::system::error_code ec;
    auto body = json::parse(ans.body, ec);
    const json::object* o = !ec && body.is_object() ? &body.as_object() : nullptr;
    const json::value* token = o ? o->if_contains("token") : nullptr;
    const json::value* expires = o ? o->if_contains("expires_at") : nullptr;
    if (!token || !token->is_string() || token->as_string().empty() || token->as_string().size() > 4096 || !expires ||
        !expires->is_string()) {
      a.error = what + " answered " + std::to_string(ans.status) + " without a token and its expires_at";
      return a;
    }
    const auto expires_ms = parse_utc_time(expires->as_string());
    if (!expires_ms || *expires_ms <= now_ms) {
      a.error = what + " answered " + std::to_string(ans.status) + " with a token whose expires_at '" +
                utf8::sanitize(utf8::truncate(expires->as_string(), 40)) + "' is not a time ahead";
      return a;
    }
    return InstallationToken{std::string(token->as_string()), *expires_ms, renew_at_ms(now_ms, *expires_ms)};
  }
  const std::string excerpt = utf8::sanitize(utf8::truncate(ans.body, 300));
  const std::string answered =
      what + " answered " + std::to_string(ans.status) + (excerpt.empty() ? "" : ": " + excerpt);
  const bool rate_limited =
      ans.status == 429 || (ans.status == 403 && (ans.ratelimit_remaining == "0" || !ans.retry_after.empty()));
  if (rate_limited || ans.status == 408 || ans.status >= 500 || ans.status < 400) {
    a.error = utf8::clip(answered, 1000);
    return a;
  }
  a.outcome = db::DeliveryAttempt::Outcome::refused;
  std::string advice;
  if (ans.status == 401)
    advice = "GitHub refused the app's JWT: check app_id and that private_key_file holds a current key of that app";
  else if (ans.status == 404)
    advice =
        "GitHub knows no such installation of this app: check installation_id (the number at the end of "
        "the installation's settings page URL)";
  else
    advice =
        "GitHub refused to issue an installation token: check that the app is installed on the repository, "
        "not suspended, with checks and statuses write permission";
  a.error = utf8::clip(
      answered + "; " + advice + ", then PUT /api/v1/repositories/" + d.repo.value_or("") + "/forge again", 1000);
  return a;
}

std::string InstallationTokens::key(const db::ForgeConnection& c) {
  return c.repo + '\n' + c.api_url + '\n' + std::to_string(c.app_id.value_or(0)) + '\n' +
         std::to_string(c.installation_id.value_or(0)) + '\n' + c.private_key_file;
}

std::optional<std::string> InstallationTokens::find(const db::ForgeConnection& c, std::int64_t now_ms) const {
  auto it = m_tokens.find(key(c));
  if (it == m_tokens.end() || now_ms >= it->second.renew_ms) return std::nullopt;
  return it->second.token;
}

void InstallationTokens::put(const db::ForgeConnection& c, InstallationToken t) { m_tokens[key(c)] = std::move(t); }

void InstallationTokens::drop(const db::ForgeConnection& c) { m_tokens.erase(key(c)); }

}  // namespace kport::coordinator
