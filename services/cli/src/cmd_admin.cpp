// `kport admin`: the credentials an operator manages. Today one action,
// `kport admin registration-token rotate [--expires-in DURATION]`, over
// POST /api/v1/admin/registration-token: a new registration token (printed once), the
// old one refused from now on. Runner tokens are revoked with `kport runners revoke ID`.
#include <charconv>
#include <optional>
#include <ostream>

#include "commands.h"
#include "kport/api/admin.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) {
  o.add("expires-in", "", "",
        "admin registration-token rotate: expiry of the new token (3600, 90m, 12h, 7d; default never)");
}

// "3600", "90s", "90m", "12h", "7d" to seconds; nullopt for anything else or not positive.
std::optional<std::int64_t> parse_duration_s(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::int64_t unit = 1;
  std::string digits = text;
  switch (text.back()) {
    case 's':
      unit = 1;
      digits.pop_back();
      break;
    case 'm':
      unit = 60;
      digits.pop_back();
      break;
    case 'h':
      unit = 3600;
      digits.pop_back();
      break;
    case 'd':
      unit = 86400;
      digits.pop_back();
      break;
    default: break;
  }
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n <= 0 ||
      n > 10LL * 365 * 86400 / unit)
    return std::nullopt;
  return n * unit;
}

int rotate(Context& ctx) {
  api::RegistrationTokenRotate rq;
  if (const std::string& e = ctx.opts.get("expires-in"); !e.empty()) {
    auto s = parse_duration_s(e);
    if (!s) {
      ctx.err << "kport admin: --expires-in '" << e
              << "' is not a duration; give seconds or a number with s, m, h or d "
              << "(up to 10 years), e.g. --expires-in 7d\n";
      return k_exit_usage;
    }
    rq.expires_in_s = *s;
  }
  const json::value v = api::to_json(rq);
  auto r = ctx.api.call("POST", "/api/v1/admin/registration-token", &v);
  if (!r.error.empty()) return report(ctx.err, "admin", "cannot rotate the registration token", r);
  auto token = read_answer(r, api::read_registration_token);
  if (!token.ok()) return unreadable(ctx.err, "admin", "POST /api/v1/admin/registration-token", token.error());
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  ctx.out << "new registration token: " << token->token << "\n";
  if (token->expires_ms.value_or(0) > 0)
    ctx.out << "expires at " << *token->expires_ms << " (unix ms)\n";
  else
    ctx.out << "it does not expire\n";
  ctx.out << "the previous token is refused from now on; give runners the new one (--registration-token)\n";
  return k_exit_ok;
}

int run_admin(Context& ctx) {
  if (!check_args(ctx, admin_command, 2, 2)) return k_exit_usage;
  if (ctx.args[0] == "registration-token" && ctx.args[1] == "rotate") return rotate(ctx);
  ctx.err << "kport admin: unknown action '" << ctx.args[0] << " " << ctx.args[1] << "'; usage: kport admin "
          << admin_command.usage << "\n";
  return k_exit_usage;
}

}  // namespace

extern const Command admin_command = {"admin", "registration-token rotate [--expires-in DURATION]",
                                      "rotate the registration token (runner tokens: kport runners revoke ID)", declare,
                                      run_admin};

}  // namespace kport::cli
