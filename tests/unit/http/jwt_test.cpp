// RS256 JSON Web Tokens: base64url, a GitHub App's JWT signed with a key made at run time
// and verified twice (OpenSSL's EVP in jwt_check.h and the openssl command line), and
// what is said of keys that are not usable RSA private keys.
#include "kport/http/jwt.h"

#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jwt_check.h"
#include "test_pki.h"

namespace kport::http::test {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class JwtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kport::testing::openssl_available()) << "the openssl command line is needed to make test keys";
    dir = std::filesystem::temp_directory_path() / ("kport-jwt-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    const std::string made = kport::testing::make_rsa_key(dir, "app");
    ASSERT_EQ(made, "");
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::filesystem::path dir;
};

TEST(Base64Url, EncodesWithoutPaddingInTheUrlAlphabet) {
  EXPECT_EQ(base64url(""), "");
  EXPECT_EQ(base64url("f"), "Zg");
  EXPECT_EQ(base64url("fo"), "Zm8");
  EXPECT_EQ(base64url("foo"), "Zm9v");
  EXPECT_EQ(base64url("\xfb\xff\xfe"), "-__-");
  EXPECT_EQ(base64url(R"({"alg":"RS256","typ":"JWT"})"), "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9");
  EXPECT_EQ(kport::testing::base64url_decode(base64url("any bytes \x01\x02\xff")), "any bytes \x01\x02\xff");
}

TEST_F(JwtTest, SignedTokenVerifiesWithThePublicKey) {
  const std::int64_t now = std::time(nullptr);
  const std::string claims =
      R"({"iat":)" + std::to_string(now - 60) + R"(,"exp":)" + std::to_string(now + 540) + R"(,"iss":"12345"})";
  auto jwt = sign_jwt_rs256(claims, read(dir / "app.pem"));
  ASSERT_TRUE(jwt.ok()) << jwt.error().message;
  auto check = kport::testing::check_app_jwt(*jwt, (dir / "app.pub.pem").string(), 12345, now);
  EXPECT_TRUE(check.ok()) << check.error;
  EXPECT_EQ(boost::json::serialize(check.header), R"({"alg":"RS256","typ":"JWT"})");
  EXPECT_EQ(check.claims.at("iss").as_string(), "12345");
  EXPECT_EQ(check.claims.at("exp").as_int64(), now + 540);
  // The openssl command line agrees: the signature is RSASSA-PKCS1-v1_5 with SHA-256 over
  // the first two parts.
  const auto last = jwt->rfind('.');
  std::ofstream(dir / "input") << jwt->substr(0, last);
  std::ofstream(dir / "sig", std::ios::binary) << *kport::testing::base64url_decode(jwt->substr(last + 1));
  const std::string cmd = "openssl dgst -sha256 -verify '" + (dir / "app.pub.pem").string() + "' -signature '" +
                          (dir / "sig").string() + "' '" + (dir / "input").string() + "' > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  // Another app's key does not verify it, nor does a changed claim.
  ASSERT_EQ(kport::testing::make_rsa_key(dir, "other"), "");
  EXPECT_FALSE(kport::testing::check_app_jwt(*jwt, (dir / "other.pub.pem").string(), 12345, now).ok());
  std::string forged = *jwt;
  forged.replace(forged.find('.') + 1, forged.rfind('.') - forged.find('.') - 1,
                 base64url(R"({"iat":)" + std::to_string(now - 60) + R"(,"exp":)" + std::to_string(now + 540) +
                           R"(,"iss":"99999"})"));
  EXPECT_EQ(kport::testing::check_app_jwt(forged, (dir / "app.pub.pem").string(), 99999, now).error,
            "the signature does not verify with the app's public key");
}

TEST_F(JwtTest, KeysThatAreNotUsableRsaPrivateKeysAreRefusedWithWhatTheyAre) {
  EXPECT_TRUE(check_rsa_private_key(read(dir / "app.pem")).ok());
  // PKCS#8 works as well as GitHub's PKCS#1.
  ASSERT_EQ(std::system(("openssl pkcs8 -topk8 -nocrypt -in '" + (dir / "app.pem").string() + "' -out '" +
                         (dir / "p8.pem").string() + "' 2>/dev/null")
                            .c_str()),
            0);
  EXPECT_TRUE(check_rsa_private_key(read(dir / "p8.pem")).ok());

  auto none = check_rsa_private_key("just some text");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no PEM block"), std::string::npos) << none.error().message;

  auto pub = check_rsa_private_key(read(dir / "app.pub.pem"));
  ASSERT_FALSE(pub.ok());
  EXPECT_NE(pub.error().message.find("does not parse as a PEM private key"), std::string::npos) << pub.error().message;

  ASSERT_EQ(std::system(("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out '" +
                         (dir / "ec.pem").string() + "' 2>/dev/null")
                            .c_str()),
            0);
  auto ec = check_rsa_private_key(read(dir / "ec.pem"));
  ASSERT_FALSE(ec.ok());
  EXPECT_NE(ec.error().message.find("EC key, not an RSA key"), std::string::npos) << ec.error().message;
  EXPECT_FALSE(sign_jwt_rs256("{}", read(dir / "ec.pem")).ok());

  ASSERT_EQ(std::system(("openssl pkcs8 -topk8 -v2 aes-256-cbc -passout pass:secret -in '" +
                         (dir / "app.pem").string() + "' -out '" + (dir / "enc.pem").string() + "' 2>/dev/null")
                            .c_str()),
            0);
  auto enc = check_rsa_private_key(read(dir / "enc.pem"));
  ASSERT_FALSE(enc.ok());
  EXPECT_NE(enc.error().message.find("encrypted"), std::string::npos) << enc.error().message;

  ASSERT_EQ(kport::testing::make_rsa_key(dir, "short", 1024), "");
  auto small = check_rsa_private_key(read(dir / "short.pem"));
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.error().message.find("1024 bits"), std::string::npos) << small.error().message;

  // A message never quotes the key.
  const std::string key = read(dir / "app.pem");
  const std::string body_line = key.substr(key.find('\n') + 1, 40);
  std::string broken = key;
  broken.replace(broken.find('\n') + 1, 4, "!!!!");
  auto bad = check_rsa_private_key(broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.find(body_line.substr(4)), std::string::npos);
}

}  // namespace
}  // namespace kport::http::test
