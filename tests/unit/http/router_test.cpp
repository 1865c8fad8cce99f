#include "kport/http/router.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace kport::http {
namespace {

SyncHandler answer(int status) {
  return [status](const Request&) { return text_response(status, ""); };
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router.add_sync("GET", "/api/v1/commits/{sha}", answer(200));
    router.add_sync("GET", "/api/v1/targets/{target}/bringup", answer(201));
    router.add_sync("GET", "/api/v1/jobs/next", answer(202));
    router.add_sync("DELETE", "/api/v1/jobs/{id}", answer(203));
    router.add_sync("POST", "/api/v1/jobs", answer(204));
    router.add_sync("GET", "/api/v1/jobs", answer(205), "jobs_list");
    router.add_prefix("/static/", answer(206));
  }
  Match find(std::string_view method, std::string_view path) {
    params.clear();
    return router.match(method, path, params);
  }
  Router router;
  ParamMap params;
};

TEST_F(RouterTest, CapturesPathParameters) {
  auto m = find("GET", "/api/v1/targets/sm_90a/bringup");
  ASSERT_EQ(m.kind, Match::Kind::found);
  EXPECT_EQ(m.route->pattern, "/api/v1/targets/{target}/bringup");
  EXPECT_EQ(params.at("target"), "sm_90a");
}

TEST_F(RouterTest, DecodesParametersButNotAcrossSegments) {
  auto m = find("GET", "/api/v1/commits/a%2Fb%20c");
  ASSERT_EQ(m.kind, Match::Kind::found);
  EXPECT_EQ(params.at("sha"), "a/b c");
}

TEST_F(RouterTest, LiteralSegmentBeatsCaptureRegardlessOfOrder) {
  auto m = find("GET", "/api/v1/jobs/next");
  ASSERT_EQ(m.kind, Match::Kind::found);
  EXPECT_EQ(m.route->pattern, "/api/v1/jobs/next");
  // DELETE is only on the capture route, so the walk must fall back to it.
  m = find("DELETE", "/api/v1/jobs/next");
  ASSERT_EQ(m.kind, Match::Kind::found);
  EXPECT_EQ(params.at("id"), "next");
}

TEST_F(RouterTest, WrongMethodListsAllowedMethods) {
  auto m = find("PUT", "/api/v1/jobs");
  ASSERT_EQ(m.kind, Match::Kind::method_not_allowed);
  EXPECT_NE(m.allow.find("POST"), std::string::npos);
  EXPECT_NE(m.allow.find("GET"), std::string::npos);
}

TEST_F(RouterTest, UnknownPathsAreNotFound) {
  EXPECT_EQ(find("GET", "/api/v1/nope").kind, Match::Kind::not_found);
  EXPECT_EQ(find("GET", "/api/v1/commits").kind, Match::Kind::not_found);
  EXPECT_EQ(find("GET", "/api/v1/commits/abc/extra").kind, Match::Kind::not_found);
  EXPECT_EQ(find("GET", "relative").kind, Match::Kind::not_found);
}

TEST_F(RouterTest, HeadFallsBackToGet) {
  auto m = find("HEAD", "/api/v1/jobs");
  ASSERT_EQ(m.kind, Match::Kind::found);
  EXPECT_EQ(m.route->name, "jobs_list");
}

TEST_F(RouterTest, PrefixRouteCapturesTheRest) {
  auto m = find("GET", "/static/css/site.css");
  ASSERT_EQ(m.kind, Match::Kind::found);
  EXPECT_EQ(params.at("path"), "css/site.css");
  EXPECT_EQ(m.route->name, "/static/{path...}");
}

TEST_F(RouterTest, BadParameterEncodingIsReported) {
  EXPECT_EQ(find("GET", "/api/v1/commits/%00").kind, Match::Kind::bad_parameter);
  auto m = find("GET", "/api/v1/commits/%ff%fe");
  ASSERT_EQ(m.kind, Match::Kind::bad_parameter);
  EXPECT_NE(m.error.find("sha"), std::string::npos) << m.error;
}

TEST_F(RouterTest, RejectsDuplicateAndMalformedPatterns) {
  EXPECT_THROW(router.add_sync("GET", "/api/v1/jobs", answer(200)), std::invalid_argument);
  EXPECT_THROW(router.add_sync("GET", "no-slash", answer(200)), std::invalid_argument);
  EXPECT_THROW(router.add_sync("GET", "/api/v1/commits/{other}/x", answer(200)), std::invalid_argument);
  EXPECT_THROW(router.add_sync("GET", "/a/{rest...}/b", answer(200)), std::invalid_argument);
}

}  // namespace
}  // namespace kport::http
