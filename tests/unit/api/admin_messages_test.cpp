// The registration token's rotation: the request `kport admin registration-token rotate`
// writes and the coordinator reads, and the answer the coordinator writes and the CLI
// reads, each with one mapping, and a field that does not read named in the error.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "kport/api/admin.h"

namespace json = boost::json;
using namespace kport;

namespace {

template <typename T>
void expect_refused(const Result<T>& r, const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(r.error().message, message);
}

TEST(RegistrationTokenRotate, RoundTripsAndLeavesANoExpiryOut) {
  const json::object wire = api::to_json(api::RegistrationTokenRotate{7200});
  EXPECT_EQ(json::serialize(wire), R"({"expires_in_s":7200})");
  auto back = api::parse_registration_token_rotate(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->expires_in_s, 7200);

  const json::object never = api::to_json(api::RegistrationTokenRotate{});
  EXPECT_EQ(json::serialize(never), "{}");
  auto none = api::parse_registration_token_rotate(never);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->expires_in_s);
  // null reads as absent; unknown fields are ignored.
  auto null = api::parse_registration_token_rotate(json::object{{"expires_in_s", nullptr}, {"note", "x"}});
  ASSERT_TRUE(null.ok());
  EXPECT_FALSE(null->expires_in_s);
}

TEST(RegistrationTokenRotate, AnExpiryOutOfRangeOrOfAnotherTypeIsRefusedByName) {
  expect_refused(api::parse_registration_token_rotate(json::object{{"expires_in_s", 0}}),
                 "field 'expires_in_s' must be an integer in 1..315360000, got 0");
  expect_refused(api::parse_registration_token_rotate(json::object{{"expires_in_s", 315360001}}),
                 "field 'expires_in_s' must be an integer in 1..315360000, got 315360001");
  expect_refused(api::parse_registration_token_rotate(json::object{{"expires_in_s", "7d"}}),
                 "field 'expires_in_s' must be an integer");
}

TEST(RegistrationToken, RoundTripsWithTheExpiryNullWhenItNeverExpires) {
  const json::object wire = api::to_json(api::RegistrationToken{"kpr_abc", 1764633600000});
  EXPECT_EQ(json::serialize(wire), R"({"token":"kpr_abc","expires_ms":1764633600000})");
  auto back = api::parse_registration_token(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->token, "kpr_abc");
  EXPECT_EQ(back->expires_ms, 1764633600000);

  const json::object never = api::to_json(api::RegistrationToken{"kpr_def", std::nullopt});
  EXPECT_EQ(json::serialize(never), R"({"token":"kpr_def","expires_ms":null})");
  auto none = api::parse_registration_token(never);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->token, "kpr_def");
  EXPECT_FALSE(none->expires_ms);
}

TEST(RegistrationToken, AMissingEmptyOrMistypedFieldIsRefusedByName) {
  expect_refused(api::parse_registration_token(json::object{{"expires_ms", nullptr}}),
                 "field 'token' is required (a string)");
  expect_refused(api::parse_registration_token(json::object{{"token", ""}}), "field 'token' must not be empty");
  expect_refused(api::parse_registration_token(json::object{{"token", 42}}), "field 'token' must be a string");
  expect_refused(api::parse_registration_token(json::object{{"token", "kpr_abc"}, {"expires_ms", "soon"}}),
                 "field 'expires_ms' must be an integer");
}

TEST(TokenRevoked, RoundTripsAndAMistypedRunnerIsRefusedByName) {
  const json::object wire = api::to_json(api::TokenRevoked{7, true});
  EXPECT_EQ(json::serialize(wire), R"({"runner":7,"revoked":true})");
  auto back = api::parse_with(wire, "", api::read_token_revoked);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->runner, 7);
  EXPECT_TRUE(back->revoked);
  expect_refused(api::parse_with(json::object{{"runner", "7"}, {"revoked", true}}, "", api::read_token_revoked),
                 "field 'runner' must be an integer");
  expect_refused(api::parse_with(json::object{{"runner", 7}, {"revoked", "yes"}}, "", api::read_token_revoked),
                 "field 'revoked' must be true or false");
}

}  // namespace
