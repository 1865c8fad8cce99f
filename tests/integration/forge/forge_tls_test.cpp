// Forges speak HTTPS: the coordinator verifies the forge's certificate against
// --forge-ca-file (a CA the test makes) and delivers over TLS; a forge whose
// certificate it cannot verify is a network error to retry, never a delivery.
#include <gtest/gtest.h>

#include "forge_fixture.h"

namespace kport::testing {
namespace {

class TlsForgeTest : public ForgeTest {
 protected:
  TlsForgeTest() : ForgeTest(true) {}
  void SetUp() override {
    if (!openssl_available()) GTEST_SKIP() << "the openssl command line is missing: no test CA can be made";
    ASSERT_TRUE(pki->ok()) << pki->error();
    ForgeTest::SetUp();
  }
};

TEST_F(TlsForgeTest, ReportsAndWebhooksGoOverVerifiedHttps) {
  ASSERT_EQ(forge.url().rfind("https://", 0), 0u);
  ASSERT_EQ(connect("github", "check").status, 200);
  push(sha);
  auto runs = wait_to("/check-runs", 1);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].header("Authorization"), "Bearer " + k_forge_token);
  auto items = wait_deliveries("state=delivered", [](const boost::json::array& a) { return a.size() == 1; });
  EXPECT_EQ(items.size(), 1u);
}

// The same forge, but the coordinator trusts another CA.
class UntrustedForgeTest : public ForgeTest {
 protected:
  UntrustedForgeTest() : ForgeTest(true) {
    for (std::size_t i = 0; i + 1 < extra_args.size(); ++i)
      if (extra_args[i] == "--forge-ca-file") extra_args[i + 1] = pki->stranger_ca();
  }
  void SetUp() override {
    if (!openssl_available()) GTEST_SKIP() << "the openssl command line is missing: no test CA can be made";
    ASSERT_TRUE(pki->ok()) << pki->error();
    ForgeTest::SetUp();
  }
};

TEST_F(UntrustedForgeTest, AnUnverifiedCertificateIsRetriedAndNeverDelivered) {
  ASSERT_EQ(connect("gitea", "status").status, 200);
  push(sha);
  auto items = wait_deliveries("state=failed", [](const boost::json::array& a) { return a.size() == 1; });
  ASSERT_EQ(items.size(), 1u);
  EXPECT_TRUE(items[0].at("last_status").is_null()) << items[0];
  EXPECT_EQ(items[0].at("attempts").as_int64(), 3);
  EXPECT_NE(std::string(items[0].at("last_error").as_string()).find("certificate"), std::string::npos) << items[0];
  EXPECT_TRUE(forge.requests().empty());  // nothing was sent to a server not verified
}

}  // namespace
}  // namespace kport::testing
