#include "kport/common/clock.h"
#include "kport/common/crypto.h"
#include "context.h"
#include "registration.h"
#include "token_cache.h"

namespace kport::coordinator {
std::string_view bearer_of(std::string_view h) {
  constexpr std::string_view k_prefix = "Bearer ";
  if (h.size() <= k_prefix.size()) return {};
  // The scheme is case-insensitive (RFC 7235).
  for (std::size_t i = 0; i < k_prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(h[i])) != std::tolower(static_cast<unsigned char>(k_prefix[i])))
      return {};
  return h.substr(k_prefix.size());
}

namespace {

std::string_view bearer(const http::Request& req) { return bearer_of(req.header("Authorization")); }

}  // namespace

bool reserve_worthy(std::string_view authorization, Context& ctx) {
  std::string_view token = bearer_of(authorization);
  if (token.empty()) return false;
  if (crypto::constant_time_equal(token, ctx.config.admin_token)) return true;
  if (ctx.registration && ctx.registration->is_current(token, now_unix_ms())) return true;
  return ctx.tokens && ctx.tokens->knows(token);
}

Result<Principal> authenticate(const http::Request& req, Context& ctx) {
  std::string_view token = bearer(req);
  if (token.empty()) {
    if (!req.header("Authorization").empty())
      return make_error(Errc::unauthorized, "Authorization header must be 'Bearer TOKEN'");
    return Principal{};
  }
  if (crypto::constant_time_equal(token, ctx.config.admin_token)) return Principal{Principal::Kind::admin, 0, "admin"};
  auto runner = ctx.store->authenticate_runner(token);
  if (!runner.ok()) {
    if (runner.error().code == Errc::unauthorized)
      return make_error(Errc::unauthorized, "token is not valid (unknown, or its runner deregistered)");
    return std::move(runner).error();
  }
  return Principal{Principal::Kind::runner, runner->id, runner->name};
}

Result<Principal> require_reader(const http::Request& req, Context& ctx) {
  auto p = authenticate(req, ctx);
  if (!p.ok()) return p;
  if (!ctx.config.open_reads && p->kind == Principal::Kind::anonymous)
    return make_error(Errc::unauthorized, "reads need a token on this coordinator: send 'Authorization: Bearer TOKEN'");
  return p;
}

Result<Principal> require_admin(const http::Request& req, Context& ctx) {
  auto p = authenticate(req, ctx);
  if (!p.ok()) return p;
  if (p->kind == Principal::Kind::anonymous)
    return make_error(Errc::unauthorized, "this call needs the admin token: send 'Authorization: Bearer TOKEN'");
  if (p->kind != Principal::Kind::admin)
    return make_error(Errc::forbidden, "this call needs the admin token, not a runner token");
  return p;
}

Result<Principal> require_runner(const http::Request& req, Context& ctx) {
  auto p = authenticate(req, ctx);
  if (!p.ok()) return p;
  if (p->kind == Principal::Kind::anonymous)
    return make_error(Errc::unauthorized, "this call needs a runner token: register at POST /api/v1/runners/register");
  if (p->kind != Principal::Kind::runner)
    return make_error(Errc::forbidden, "this call needs a runner token, not the admin token");
  return p;
}

Status require_registration(const http::Request& req, Context& ctx, int& retry_after_s) {
  retry_after_s = 0;
  std::string_view token = bearer(req);
  if (token.empty())
    return make_error(Errc::unauthorized, "registration needs 'Authorization: Bearer REGISTRATION_TOKEN'");
  return ctx.registration->admit(token, now_unix_ms(), retry_after_s);
}

}  // namespace kport::coordinator
