// A GitHub App connection's pure parts (github_app.h): the JWT's claims, the exchange
// request, what its answer means, when a token is renewed, and the tokens held.
#include "github_app.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace kport::coordinator {
namespace {

namespace json = boost::json;

db::ForgeConnection app_connection() {
  db::ForgeConnection c;
  c.repo = "org/kernels";
  c.kind = "github";
  c.api_url = "https://api.github.example/";
  c.project = "org/kernels";
  c.app_id = 42;
  c.installation_id = 4242;
  c.private_key_file = "/etc/kport/app.pem";
  c.mode = "check";
  return c;
}

db::Delivery delivery() {
  db::Delivery d;
  d.id = 9;
  d.kind = "check_run";
  d.repo = "org/kernels";
  return d;
}

ClientAnswer answered(int status, std::string body) { return ClientAnswer{status, std::move(body), "", ""}; }

TEST(GitHubApp, ClaimsBackdateIatAMinuteAndExpireWithinTenMinutes) {
  auto claims = json::parse(app_jwt_claims(42, 1'700'000'000)).as_object();
  EXPECT_EQ(claims.at("iat").as_int64(), 1'700'000'000 - 60);
  EXPECT_EQ(claims.at("exp").as_int64(), 1'700'000'000 + 540);
  EXPECT_EQ(claims.at("iss").as_string(), "42");
}

TEST(GitHubApp, ExchangeRequestIsGitHubsDocumentedCall) {
  auto r = access_token_request(app_connection(), "header.claims.sig");
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.url, "https://api.github.example/app/installations/4242/access_tokens");
  EXPECT_EQ(r.body, "");
  const http::HeaderList want{{"Accept", "application/vnd.github+json"},
                              {"X-GitHub-Api-Version", "2022-11-28"},
                              {"Authorization", "Bearer header.claims.sig"}};
  EXPECT_EQ(r.headers, want);
}

TEST(GitHubApp, UtcTimesParse) {
  EXPECT_EQ(parse_utc_time("2016-07-11T22:14:10Z"), 1468275250000);
  EXPECT_EQ(parse_utc_time("2016-07-11T22:14:10.250Z"), 1468275250250);
  EXPECT_EQ(parse_utc_time("2016-07-11T22:14:10+00:00"), 1468275250000);
  EXPECT_FALSE(parse_utc_time("2016-07-11 22:14:10"));
  EXPECT_FALSE(parse_utc_time("2016-07-11T22:14:10+02:00"));
  EXPECT_FALSE(parse_utc_time("2016-13-11T22:14:10Z"));
  EXPECT_FALSE(parse_utc_time("tomorrow"));
  EXPECT_FALSE(parse_utc_time(""));
}

TEST(GitHubApp, TokensAreRenewedFiveMinutesEarlyOrHalfwayThroughAShortLife) {
  EXPECT_EQ(renew_at_ms(0, 3'600'000), 3'300'000);
  EXPECT_EQ(renew_at_ms(1'000, 601'000), 301'000);
  EXPECT_EQ(renew_at_ms(0, 2'000), 1'000);
  EXPECT_EQ(renew_at_ms(0, 86'400'000), 3'300'000);  // a day's token is held an hour at most
}

TEST(GitHubApp, AnAnswerWithATokenIsTheToken) {
  const auto req = access_token_request(app_connection(), "jwt");
  const std::int64_t now = *parse_utc_time("2016-07-11T21:14:10Z");
  auto read = read_access_token_answer(
      delivery(), req,
      answered(201, R"({"token":"ghs_16C7e42F292c6912E7710c838347Ae178B4a","expires_at":"2016-07-11T22:14:10Z"})"), now,
      5);
  ASSERT_TRUE(std::holds_alternative<InstallationToken>(read));
  const auto& t = std::get<InstallationToken>(read);
  EXPECT_EQ(t.token, "ghs_16C7e42F292c6912E7710c838347Ae178B4a");
  EXPECT_EQ(t.expires_ms, now + 3'600'000);
  EXPECT_EQ(t.renew_ms, now + 3'300'000);
}

TEST(GitHubApp, WhatAFailedExchangeMeans) {
  const auto req = access_token_request(app_connection(), "jwt");
  const std::int64_t now = *parse_utc_time("2016-07-11T21:14:10Z");
  const auto attempt = [&](const Result<ClientAnswer>& a) {
    auto read = read_access_token_answer(delivery(), req, a, now, 777);
    EXPECT_TRUE(std::holds_alternative<db::DeliveryAttempt>(read));
    return std::holds_alternative<db::DeliveryAttempt>(read) ? std::get<db::DeliveryAttempt>(read)
                                                             : db::DeliveryAttempt{};
  };
  using Outcome = db::DeliveryAttempt::Outcome;
  auto jwt = attempt(answered(401, R"({"message":"A JSON web token could not be decoded"})"));
  EXPECT_EQ(jwt.outcome, Outcome::refused);
  EXPECT_EQ(jwt.status, 401);
  EXPECT_EQ(jwt.id, 9);
  EXPECT_NE(jwt.error.find("answered 401: {\"message\":\"A JSON web token could not be decoded\"}"), std::string::npos)
      << jwt.error;
  EXPECT_NE(jwt.error.find("check app_id"), std::string::npos) << jwt.error;
  EXPECT_NE(jwt.error.find("PUT /api/v1/repositories/org/kernels/forge again"), std::string::npos) << jwt.error;
  auto missing = attempt(answered(404, R"({"message":"Not Found"})"));
  EXPECT_EQ(missing.outcome, Outcome::refused);
  EXPECT_NE(missing.error.find("installation_id"), std::string::npos) << missing.error;
  auto down = attempt(answered(502, "bad gateway"));
  EXPECT_EQ(down.outcome, Outcome::retry);
  EXPECT_EQ(down.next_attempt_ms, 777);
  EXPECT_EQ(attempt(make_error(Errc::unavailable, "connection refused")).outcome, Outcome::retry);
  EXPECT_EQ(attempt(answered(429, "")).outcome, Outcome::retry);
  EXPECT_EQ(attempt(ClientAnswer{403, "", "", "0"}).outcome, Outcome::retry);  // rate limited
  // A 2xx without a usable token is retried, and its body (which may hold a token) is
  // never quoted.
  auto no_expiry = attempt(answered(201, R"({"token":"ghs_secret"})"));
  EXPECT_EQ(no_expiry.outcome, Outcome::retry);
  EXPECT_EQ(no_expiry.error.find("ghs_secret"), std::string::npos) << no_expiry.error;
  auto past = attempt(answered(201, R"({"token":"ghs_secret","expires_at":"2016-07-11T20:00:00Z"})"));
  EXPECT_EQ(past.outcome, Outcome::retry);
  EXPECT_EQ(past.error.find("ghs_secret"), std::string::npos) << past.error;
  EXPECT_EQ(attempt(answered(200, "\xff not json")).outcome, Outcome::retry);
  EXPECT_EQ(attempt(answered(201, R"({"token":7,"expires_at":"2016-07-11T22:14:10Z"})")).outcome, Outcome::retry);
}

TEST(GitHubApp, HeldTokensAreKeptPerCredentialsUntilTheirRenewal) {
  InstallationTokens held;
  auto c = app_connection();
  EXPECT_FALSE(held.find(c, 0));
  held.put(c, InstallationToken{"ghs_a", 10'000, 8'000});
  EXPECT_EQ(held.find(c, 7'999), "ghs_a");
  EXPECT_FALSE(held.find(c, 8'000));
  auto other = c;
  other.installation_id = 1;
  EXPECT_FALSE(held.find(other, 0));  // other credentials never get this token
  other = c;
  other.private_key_file = "/etc/kport/new.pem";
  EXPECT_FALSE(held.find(other, 0));
  held.drop(c);
  EXPECT_FALSE(held.find(c, 0));
  EXPECT_EQ(held.size(), 0u);
}

TEST(GitHubApp, AMissingKeyFileIsSaidSo) {
  auto key = read_private_key("/nonexistent/app.pem");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error().code, Errc::unprocessable);
  EXPECT_NE(key.error().message.find("/nonexistent/app.pem does not exist"), std::string::npos) << key.error().message;
}

}  // namespace
}  // namespace kport::coordinator
