// /api/v1/admin and runner token revocation: the credentials an admin manages.
#include "claim_broker.h"
#include "codec.h"
#include "context.h"
#include "kport/api/admin.h"
#include "kport/common/clock.h"
#include "kport/common/log.h"
#include "registration.h"
#include "token_cache.h"

namespace kport::coordinator {
using http::Request;

void add_admin_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "POST", "/api/v1/admin/registration-token", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    std::optional<std::int64_t> expires_in_s;
    if (!req.body.empty()) {
      auto obj = parse_object(req.body);
      if (!obj.ok()) return http::error_response(obj.error());
      auto asked = api::parse_registration_token_rotate(*obj);
      if (!asked.ok()) return http::error_response(asked.error());
      expires_in_s = asked->expires_in_s;
    }
    auto t = ctx.registration->rotate(expires_in_s, now_unix_ms());
    if (!t.ok()) return http::error_response(t.error());
    log::info("registration token rotated", {{"expires_ms", t->expires_ms.value_or(0)}});
    return http::json_response(201, api::to_json(api::RegistrationToken{t->value, t->expires_ms}));
  });

  add_blocking(router, ctx, "DELETE", "/api/v1/runners/{id}/token", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto runner = ctx.store->get_runner(*id);
    if (!runner.ok()) return http::error_response(runner.error());
    if (!*runner)
      return http::error_response(make_error(Errc::not_found, "runner " + std::to_string(*id) + " does not exist"));
    // A runner's token is its identity: revoking it deregisters the runner, which also
    // gives its held job back to the queue. It registers again to get a new token.
    auto released = ctx.store->deregister_runner(*id);
    KPORT_HTTP_TRY(released);
    if (ctx.tokens) ctx.tokens->remove(*id);
    ctx.broker->notify();
    // The job it gave back is claimable once its backoff ends: wake parked claims then.
    if (released->others_ms > 0) ctx.broker->notify_in(std::chrono::milliseconds(released->others_ms));
    log::info("runner token revoked", {{"runner", *id}});
    return http::json_ok(api::to_json(api::TokenRevoked{*id, true}));
  });
}

}  // namespace kport::coordinator
