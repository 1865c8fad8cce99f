#include "kport/common/crypto.h"

#include <gtest/gtest.h>

namespace kport::crypto {

TEST(Sha256, MatchesFipsVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string data(1000, 'x');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  Sha256 h;
  for (std::size_t i = 0; i < data.size(); i += 13) h.update(std::string_view(data).substr(i, 13));
  EXPECT_EQ(to_hex(h.finish()), sha256_hex(data));
}

TEST(Hmac, MatchesRfc4231Case2) {
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(ConstantTimeEqual, ComparesContentAndLength) {
  EXPECT_TRUE(constant_time_equal("secret", "secret"));
  EXPECT_FALSE(constant_time_equal("secret", "secreT"));
  EXPECT_FALSE(constant_time_equal("secret", "secret2"));
  EXPECT_FALSE(constant_time_equal("", "a"));
}

TEST(RandomToken, IsFreshHexWithPrefix) {
  auto a = random_token("kpr_", 16), b = random_token("kpr_", 16);
  EXPECT_EQ(a.size(), 4u + 32u);
  EXPECT_EQ(a.substr(0, 4), "kpr_");
  EXPECT_NE(a, b);
  EXPECT_TRUE(is_sha256_hex(sha256_hex(a)));
  EXPECT_FALSE(is_sha256_hex("ABC"));
}

}  // namespace kport::crypto
