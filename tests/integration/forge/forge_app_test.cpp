// A GitHub connection as a GitHub App: the coordinator signs the app's JWT with the key
// in its file, exchanges it for an installation token at the fake forge (which verifies
// the JWT with the app's public key and takes only the tokens it issued, unexpired), and
// reports check runs with that token; renews it before it expires and once when the forge
// no longer takes it; a refused exchange breaks the connection with the reason; bad
// credentials are refused when the connection is put; and the JWT, the key and the
// installation tokens appear in no answer, metric or log line.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "forge_fixture.h"
#include "jwt_check.h"

namespace kport::testing {
namespace {

using boost::json::object;

constexpr std::int64_t k_app_id = 1234567;
constexpr std::int64_t k_installation = 87654321;
const std::string k_exchange = "/app/installations/" + std::to_string(k_installation) + "/access_tokens";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ForgeAppTest : public ForgeTest {
 protected:
  void SetUp() override {
    ForgeTest::SetUp();
    forge.act_as_app(FakeApp{k_app_id, k_installation, app_public_key(), std::chrono::seconds(3600)});
  }

  // The connection's entry in GET /api/v1/forges once `done` holds (or after 20 s).
  object connection_when(const std::function<bool(const object&)>& done) {
    object conn;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < end) {
      conn = get("/api/v1/forges").body.at("items").at(0).as_object();
      if (done(conn)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling an HTTP API: no event to wait on
    }
    return conn;
  }

  // Every secret the run involved: the installation tokens the forge issued, the JWTs the
  // coordinator presented, and the key's lines.
  std::vector<std::string> secrets() {
    std::vector<std::string> out = forge.issued_tokens();
    for (const auto& r : to(k_exchange)) {
      const std::string auth = r.header("Authorization");
      if (auth.size() > 7) out.push_back(auth.substr(7));
    }
    std::istringstream key(read_file(app_key()));
    for (std::string line; std::getline(key, line);)
      if (line.rfind("-----", 0) != 0 && line.size() > 16) out.push_back(line);
    return out;
  }
  void expect_no_secret_in(const std::string& where, const std::string& text) {
    for (const auto& s : secrets()) EXPECT_EQ(text.find(s), std::string::npos) << where << " shows a secret";
  }
};

TEST_F(ForgeAppTest, AppReportsAPassingAndAFailingCommitWithItsInstallationToken) {
  auto c = connect_app(k_app_id, k_installation, app_key());
  ASSERT_EQ(c.status, 200) << c.raw;
  EXPECT_EQ(c.body.at("auth").as_string(), "github_app");
  EXPECT_EQ(c.body.at("app_id").as_int64(), k_app_id);
  EXPECT_EQ(c.body.at("installation_id").as_int64(), k_installation);
  EXPECT_EQ(c.body.at("private_key_file").as_string(), app_key());
  EXPECT_TRUE(c.body.at("token_file").is_null());
  EXPECT_EQ(c.body.at("mode").as_string(), "check");
  EXPECT_EQ(c.body.at("state").as_string(), "ok");

  const std::string builder = register_runner("builder", "build");
  const std::string gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  push(sha);
  ASSERT_EQ(wait_to("/check-runs", 1).size(), 1u);
  auto build = take(builder);
  ASSERT_EQ(wait_to("/check-runs", 2).size(), 2u);
  finish(build, builder, "records", ok_build());
  finish(take(gpu), gpu, "results", passing_result());
  auto passing = wait_to("/check-runs", 3);
  ASSERT_EQ(passing.size(), 3u);
  EXPECT_EQ(passing[2].json().at("conclusion").as_string(), "success");

  // A second commit whose build fails: a failing check run, with the same token.
  const std::string bad = std::string(39, 'c') + "2";
  push(bad, sha);
  auto runs = wait_to("/check-runs", 4);
  ASSERT_EQ(runs.size(), 4u);
  auto bad_build = take(builder);
  ASSERT_EQ(wait_to("/check-runs", 5).size(), 5u);
  fail(bad_build, builder);
  runs = wait_to("/check-runs", 6);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[3].method, "POST");
  EXPECT_EQ(runs[3].json().at("head_sha").as_string(), bad);
  EXPECT_EQ(runs[5].method, "PATCH");
  EXPECT_EQ(runs[5].json().at("status").as_string(), "completed");
  EXPECT_EQ(runs[5].json().at("conclusion").as_string(), "failure");

  // One exchange: the installation token (an hour's) is held and used for every call.
  const auto exchanges = to(k_exchange);
  ASSERT_EQ(exchanges.size(), 1u);
  const auto issued = forge.issued_tokens();
  ASSERT_EQ(issued.size(), 1u);
  for (const auto& r : runs) {
    EXPECT_EQ(r.header("Authorization"), "Bearer " + issued[0]) << r.method << " " << r.target;
    EXPECT_EQ(r.header("Accept"), "application/vnd.github+json");
  }
  EXPECT_EQ(forge.refused_tokens(), 0);
  EXPECT_TRUE(forge.jwt_errors().empty());
  // The exchange as GitHub documents it, its JWT valid for the app.
  const auto& x = exchanges[0];
  EXPECT_EQ(x.method, "POST");
  EXPECT_EQ(x.header("Accept"), "application/vnd.github+json");
  EXPECT_EQ(x.header("X-GitHub-Api-Version"), "2022-11-28");
  const std::string auth = x.header("Authorization");
  ASSERT_EQ(auth.rfind("Bearer ", 0), 0u) << auth;
  const std::int64_t now = std::time(nullptr);
  auto jwt = check_app_jwt(auth.substr(7), app_public_key(), k_app_id, now);
  EXPECT_TRUE(jwt.ok()) << jwt.error;
  EXPECT_EQ(boost::json::serialize(jwt.header), R"({"alg":"RS256","typ":"JWT"})");
  EXPECT_EQ(jwt.claims.at("iss").as_string(), std::to_string(k_app_id));
  EXPECT_EQ(jwt.claims.at("exp").as_int64() - jwt.claims.at("iat").as_int64(), 600);  // 60 s back, 9 min ahead
  EXPECT_LE(jwt.claims.at("iat").as_int64(), now - 50);

  // Everything delivered; nothing secret shown anywhere.
  auto all = wait_deliveries("kind=check_run", [](const boost::json::array& items) {
    return items.size() == 6 &&
           std::all_of(items.begin(), items.end(), [](const auto& d) { return d.at("state") == "delivered"; });
  });
  ASSERT_EQ(all.size(), 6u) << boost::json::serialize(all);
  for (const auto& d : all) EXPECT_EQ(d.at("attempts").as_int64(), 1) << d;
  auto forges = get("/api/v1/forges");
  ASSERT_EQ(forges.status, 200);
  const auto& listed = forges.body.at("items").at(0).as_object();
  EXPECT_EQ(listed.at("auth").as_string(), "github_app");
  EXPECT_EQ(listed.at("app_id").as_int64(), k_app_id);
  EXPECT_EQ(listed.at("installation_id").as_int64(), k_installation);
  EXPECT_EQ(listed.at("state").as_string(), "ok");
  expect_no_secret_in("GET /api/v1/forges", forges.raw);
  expect_no_secret_in("PUT /api/v1/repositories/{name}/forge", c.raw);
  expect_no_secret_in("GET /api/v1/deliveries", get("/api/v1/deliveries?limit=100").raw);
  expect_no_secret_in("/metrics", metrics());
  const std::string log = proc->log();
  EXPECT_NE(log.find("installation token issued"), std::string::npos) << log;
  expect_no_secret_in("the coordinator's log", log);
  EXPECT_GE(secrets().size(), 10u);  // the tokens, the JWT and the key's lines were looked for
}

TEST_F(ForgeAppTest, ShortLivedInstallationTokensAreRenewedBeforeTheyExpire) {
  forge.act_as_app(FakeApp{k_app_id, k_installation, app_public_key(), std::chrono::seconds(2)});
  ASSERT_EQ(connect_app(k_app_id, k_installation, app_key()).status, 200);
  const std::string builder = register_runner("builder", "build");
  push(sha);
  auto created = wait_to("/check-runs", 1);
  ASSERT_EQ(created.size(), 1u);
  ASSERT_EQ(forge.issued_tokens().size(), 1u);
  EXPECT_EQ(created[0].header("Authorization"), "Bearer " + forge.issued_tokens()[0]);
  // The first token's 2 s run out: the next call comes with a fresh one, never the old.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  auto build = take(builder);
  auto started = wait_to("/check-runs", 2);
  ASSERT_EQ(started.size(), 2u);
  const auto issued = forge.issued_tokens();
  ASSERT_EQ(issued.size(), 2u);
  EXPECT_NE(issued[0], issued[1]);
  EXPECT_EQ(started[1].method, "PATCH");
  EXPECT_EQ(started[1].header("Authorization"), "Bearer " + issued[1]);
  EXPECT_EQ(to(k_exchange).size(), 2u);
  EXPECT_EQ(forge.refused_tokens(), 0) << "an expired token was presented";
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  fail(build, builder);
  auto done = wait_to("/check-runs", 3);
  ASSERT_EQ(done.size(), 3u);
  ASSERT_EQ(forge.issued_tokens().size(), 3u);
  EXPECT_EQ(done[2].header("Authorization"), "Bearer " + forge.issued_tokens()[2]);
  EXPECT_EQ(forge.refused_tokens(), 0);
  auto items = wait_deliveries("state=delivered", [](const boost::json::array& a) { return a.size() >= 3; });
  EXPECT_GE(items.size(), 3u);
}

TEST_F(ForgeAppTest, RevokedInstallationTokenIsReplacedOnceBeforeTheConnectionBreaks) {
  ASSERT_EQ(connect_app(k_app_id, k_installation, app_key()).status, 200);
  const std::string builder = register_runner("builder", "build");
  push(sha);
  ASSERT_EQ(wait_deliveries("state=delivered", [](const boost::json::array& a) { return a.size() == 1; }).size(), 1u);
  ASSERT_EQ(forge.issued_tokens().size(), 1u);
  forge.revoke_tokens();
  auto build = take(builder);
  // The held token is refused (401), a fresh one exchanged, the same call made again.
  auto runs = wait_to("/check-runs", 3);
  ASSERT_EQ(runs.size(), 3u) << proc->log();
  const auto issued = forge.issued_tokens();
  ASSERT_EQ(issued.size(), 2u);
  EXPECT_EQ(runs[1].header("Authorization"), "Bearer " + issued[0]);
  EXPECT_EQ(runs[2].header("Authorization"), "Bearer " + issued[1]);
  EXPECT_EQ(runs[2].body, runs[1].body);
  EXPECT_EQ(runs[2].target, runs[1].target);
  EXPECT_EQ(forge.refused_tokens(), 1);
  auto items = wait_deliveries("state=delivered", [](const boost::json::array& a) { return a.size() == 2; });
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].at("attempts").as_int64(), 1);  // one attempt: the renewal is part of it
  EXPECT_EQ(get("/api/v1/forges").body.at("items").at(0).at("state").as_string(), "ok");

  // A forge that refuses fresh tokens too (the app lost its permission): broken.
  forge.take_no_tokens();
  fail(build, builder);
  auto conn = connection_when([](const object& o) { return o.at("state") == "broken"; });
  ASSERT_EQ(conn.at("state").as_string(), "broken") << conn << proc->log();
  const std::string why(conn.at("broken_reason").as_string());
  EXPECT_NE(why.find("refused the GitHub App's installation token"), std::string::npos) << why;
  EXPECT_NE(why.find("answered 401"), std::string::npos) << why;
  EXPECT_NE(why.find("PUT /api/v1/repositories/org/kernels/forge"), std::string::npos) << why;
  EXPECT_EQ(forge.issued_tokens().size(), 3u);  // the held one refused, one fresh one refused too
  EXPECT_EQ(forge.refused_tokens(), 3);
  EXPECT_EQ(to("/check-runs").size(), 5u);
}

TEST_F(ForgeAppTest, ExchangeRefusedBreaksTheConnectionWithTheReason) {
  // Signed with a key the app does not have: the forge answers 401 to the exchange.
  ASSERT_EQ(connect_app(k_app_id, k_installation, app_key("stranger")).status, 200);
  push(sha);
  auto conn = connection_when([](const object& o) { return o.at("state") == "broken"; });
  ASSERT_EQ(conn.at("state").as_string(), "broken") << conn;
  const std::string why(conn.at("broken_reason").as_string());
  EXPECT_NE(why.find("token exchange (POST " + forge.url(k_exchange) + ") answered 401"), std::string::npos) << why;
  EXPECT_NE(why.find("A JSON web token could not be decoded"), std::string::npos) << why;
  EXPECT_NE(why.find("check app_id and that private_key_file holds a current key of that app"), std::string::npos)
      << why;
  EXPECT_NE(why.find("PUT /api/v1/repositories/org/kernels/forge again"), std::string::npos) << why;
  ASSERT_EQ(forge.jwt_errors().size(), 1u);
  EXPECT_EQ(forge.jwt_errors()[0], "the signature does not verify with the app's public key");
  EXPECT_TRUE(to("/check-runs").empty());
  EXPECT_TRUE(forge.issued_tokens().empty());
  EXPECT_NE(metrics_with("kport_forge_connections_broken 1").find("kport_forge_connections_broken 1"),
            std::string::npos);
  auto pending = get("/api/v1/deliveries?state=pending").body.at("items").as_array();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].at("last_status").as_int64(), 401);
  // Another installation of the right app: 404, said so.
  ASSERT_EQ(connect_app(k_app_id, k_installation + 1, app_key()).status, 200);
  conn = connection_when([](const object& o) {
    return o.at("state") == "broken" &&
           std::string(o.at("broken_reason").as_string()).find("installation_id") != std::string::npos;
  });
  EXPECT_NE(std::string(conn.at("broken_reason").as_string()).find("answered 404"), std::string::npos) << conn;
  // The right key and installation: the waiting delivery goes out.
  ASSERT_EQ(connect_app(k_app_id, k_installation, app_key()).status, 200);
  auto items = wait_deliveries("state=delivered", [](const boost::json::array& a) { return a.size() == 1; });
  ASSERT_EQ(items.size(), 1u);
  ASSERT_EQ(to("/check-runs").size(), 1u);
  EXPECT_EQ(to("/check-runs")[0].header("Authorization"), "Bearer " + forge.issued_tokens().at(0));
  const std::string log = proc->log();
  for (const auto& r : to(k_exchange)) EXPECT_EQ(log.find(r.header("Authorization").substr(7)), std::string::npos);
}

TEST_F(ForgeAppTest, ExchangeThatFailsIsRetriedWithTheDeliveryBackoff) {
  ASSERT_EQ(connect_app(k_app_id, k_installation, app_key()).status, 200);
  forge.fail_next(2, ForgeFault{503, R"({"message":"Service Unavailable"})"});
  push(sha);
  auto items = wait_deliveries("state=delivered", [](const boost::json::array& a) { return a.size() == 1; });
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].at("attempts").as_int64(), 3);
  EXPECT_EQ(to(k_exchange).size(), 3u);
  EXPECT_EQ(to("/check-runs").size(), 1u);
  EXPECT_EQ(get("/api/v1/forges").body.at("items").at(0).at("state").as_string(), "ok");
}

TEST_F(ForgeAppTest, BadAppCredentialsAreRefusedWithClearJsonErrors) {
  const auto refused = [&](const JsonReply& r, int status, const std::string& code, const std::string& says) {
    EXPECT_EQ(r.status, status) << r.raw;
    ASSERT_TRUE(r.body.is_object()) << r.raw;
    EXPECT_EQ(r.body.at("error").at("code").as_string(), code) << r.raw;
    const std::string message(r.body.at("error").at("message").as_string());
    EXPECT_NE(message.find(says), std::string::npos) << message;
  };
  const std::string key = app_key();
  refused(connect_app(k_app_id, k_installation, key, {{"token_file", (dir.path() / "forge-token").string()}}), 400,
          "invalid_argument", "not both");
  refused(connect_app(k_app_id, k_installation, key, {{"installation_id", nullptr}}), 400, "invalid_argument",
          "field 'installation_id' is required");
  refused(connect_app(0, k_installation, key), 400, "invalid_argument", "app_id");
  refused(connect_app(k_app_id, k_installation, key, {{"kind", "gitea"}, {"mode", "status"}}), 400, "invalid_argument",
          "GitHub App credentials are GitHub's");
  refused(connect_app(k_app_id, k_installation, (dir.path() / "no-such.pem").string()), 422, "unprocessable",
          "does not exist");

  const auto world = dir.path() / "app" / "world.pem";
  std::filesystem::copy_file(key, world);
  ::chmod(world.c_str(), 0644);
  refused(connect_app(k_app_id, k_installation, world.string()), 422, "unprocessable",
          "readable by other users; chmod 600");
  const auto group = dir.path() / "app" / "group.pem";
  std::filesystem::copy_file(key, group);
  ::chmod(group.c_str(), 0640);
  refused(connect_app(k_app_id, k_installation, group.string()), 422, "unprocessable", "readable by other users");

  const auto garbage = dir.path() / "app" / "garbage.pem";
  std::ofstream(garbage) << "not a key\n";
  ::chmod(garbage.c_str(), 0600);
  refused(connect_app(k_app_id, k_installation, garbage.string()), 422, "unprocessable", "no PEM block");
  const auto ec = dir.path() / "app" / "ec.pem";
  ASSERT_EQ(std::system(("umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out '" +
                         ec.string() + "' 2>/dev/null")
                            .c_str()),
            0);
  refused(connect_app(k_app_id, k_installation, ec.string()), 422, "unprocessable", "not an RSA key");
  const auto pub = dir.path() / "app" / "public-only.pem";
  std::filesystem::copy_file(app_public_key(), pub);
  ::chmod(pub.c_str(), 0600);
  refused(connect_app(k_app_id, k_installation, pub.string()), 422, "unprocessable",
          "does not parse as a PEM private key");
  // The connection was never written; the key's text is in no answer.
  EXPECT_TRUE(get("/api/v1/forges").body.at("items").as_array().empty());
  auto good = connect_app(k_app_id, k_installation, key);
  ASSERT_EQ(good.status, 200) << good.raw;
  expect_no_secret_in("PUT /api/v1/repositories/{name}/forge", good.raw);
  expect_no_secret_in("the coordinator's log", proc->log());
}

}  // namespace
}  // namespace kport::testing
