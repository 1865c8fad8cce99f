// Credentials as the document states them: every operation with a credential rule
// refuses a wrong one, reads refuse anonymous requests when reads are closed, and
// registrations beyond the burst are limited.
#include "openapi_fixture.h"

namespace kport::testing {
namespace json = boost::json;
namespace {

// Every operation that checks a credential refuses a wrong one with 401, the Error body
// and WWW-Authenticate, as documented; one that needs the admin token refuses a runner
// token with 403, and the other way round.
TEST_F(OpenApiConformance, CredentialsAreRefusedAsDocumented) {
  auto reg =
      post("/api/v1/runners/register",
           json::object{
               {"name", "r"}, {"role", "build"}, {"capabilities", json::object{{"targets", json::array{"sm_90a"}}}}},
           k_registration);
  ASSERT_EQ(reg.status, 201) << reg.raw;
  const std::string runner(reg.body.at("token").as_string());
  std::size_t checked = 0;
  for (const char* auth : {"read", "admin", "runner", "admin|runner"})
    for (const auto& [method, path] : operations(auth)) {
      auto r = ask(method, path, concrete(path), "", "not-a-valid-token");
      EXPECT_EQ(r.status, 401) << method << " " << path << ": " << r.raw;
      EXPECT_EQ(last_www_authenticate.rfind("Bearer realm=\"kport\"", 0), 0u) << method << " " << path;
      ++checked;
    }
  // The registration token: none is 401, a wrong one 403 (rotated or expired).
  for (const auto& [method, path] : operations("registration")) {
    EXPECT_EQ(ask(method, path, concrete(path)).status, 401) << path;
    EXPECT_FALSE(last_www_authenticate.empty()) << path;
    EXPECT_EQ(ask(method, path, concrete(path), "", "not-a-valid-token").status, 403) << path;
    ++checked;
  }
  for (const auto& [method, path] : operations("signature")) {
    EXPECT_EQ(ask(method, path, concrete(path), "{}", "", {{"X-GitHub-Event", "push"}}).status, 401) << path;
    EXPECT_FALSE(last_www_authenticate.empty()) << path;
    ++checked;
  }
  // Each operation is refused once, so none with a credential rule was left out.
  EXPECT_EQ(checked, operations_total() - operations("none").size());
  for (const auto& [method, path] : operations("admin"))
    EXPECT_EQ(ask(method, path, concrete(path), "", runner).status, 403) << path;
  for (const auto& [method, path] : operations("runner"))
    EXPECT_EQ(ask(method, path, concrete(path), "", k_admin).status, 403) << path;
}

// With --no-open-reads a read needs a token: every read refuses an anonymous request
// with 401, as its security (anonymous, or either token) says only open reads allow.
class OpenApiClosedReads : public OpenApiConformance {
 protected:
  OpenApiClosedReads() { extra_args.push_back("--no-open-reads"); }
};

TEST_F(OpenApiClosedReads, AnonymousReadsAreRefusedAsDocumented) {
  const auto reads = operations("read");
  ASSERT_GT(reads.size(), 25u);
  for (const auto& [method, path] : reads) {
    EXPECT_TRUE(
        schema->document().at("paths").at(path).at(method).at("security").as_array().front().as_object().empty())
        << path << ": a read lists anonymous access first";
    EXPECT_EQ(ask(method, path, concrete(path)).status, 401) << method << " " << path;
    EXPECT_EQ(last_www_authenticate.rfind("Bearer realm=\"kport\"", 0), 0u) << method << " " << path;
  }
  EXPECT_EQ(ask("get", "/api/v1/targets", "/api/v1/targets", "", k_admin).status, 200);
}

// A registration beyond the burst is 429 with Retry-After, as documented.
class OpenApiRegistrationLimit : public OpenApiConformance {
 protected:
  OpenApiRegistrationLimit() {
    for (const char* a : {"--registration-burst", "1", "--registrations-per-minute", "1"}) extra_args.push_back(a);
  }
};

TEST_F(OpenApiRegistrationLimit, ARegistrationBeyondTheBurstIs429WithRetryAfter) {
  const std::string body = json::serialize(json::object{
      {"name", "b"}, {"role", "build"}, {"capabilities", json::object{{"targets", json::array{"sm_90a"}}}}});
  EXPECT_EQ(ask("post", "/api/v1/runners/register", "/api/v1/runners/register", body, k_registration).status, 201);
  EXPECT_EQ(ask("post", "/api/v1/runners/register", "/api/v1/runners/register", body, k_registration).status, 429);
  const auto& limited =
      schema->document().at("paths").at("/api/v1/runners/register").at("post").at("responses").at("429").as_object();
  EXPECT_TRUE(limited.at("headers").as_object().contains("Retry-After"));
  EXPECT_TRUE(validated.count("post /api/v1/runners/register 429"));
}

}  // namespace
}  // namespace kport::testing
