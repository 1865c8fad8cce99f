#include "kport/common/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace kport;

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(utf8::valid(""));
  EXPECT_TRUE(utf8::valid("plain ascii"));
  EXPECT_TRUE(utf8::valid("Grüße, 日本語, 🚀"));
  EXPECT_TRUE(utf8::valid("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the last code point
}

TEST(Utf8, RejectsIllFormedText) {
  EXPECT_FALSE(utf8::valid("\xC3"));              // a lead byte with nothing after it
  EXPECT_FALSE(utf8::valid("\x80"));              // a lone continuation byte
  EXPECT_FALSE(utf8::valid("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(utf8::valid("\xE0\x80\xAF"));      // overlong, three bytes
  EXPECT_FALSE(utf8::valid("\xED\xA0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(utf8::valid("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(utf8::valid("\xFF"));
}

TEST(Utf8, TruncateCutsOnACharacterBoundary) {
  const std::string s = "a\xC3\xBC\xE6\x97\xA5\xF0\x9F\x9A\x80";  // a ü 日 🚀: 1+2+3+4 bytes
  EXPECT_EQ(utf8::truncate(s, 100), s);
  EXPECT_EQ(utf8::truncate(s, 10), s);
  EXPECT_EQ(utf8::truncate(s, 9), "a\xC3\xBC\xE6\x97\xA5");
  EXPECT_EQ(utf8::truncate(s, 7), "a\xC3\xBC\xE6\x97\xA5");
  EXPECT_EQ(utf8::truncate(s, 6), "a\xC3\xBC\xE6\x97\xA5");
  EXPECT_EQ(utf8::truncate(s, 5), "a\xC3\xBC");
  EXPECT_EQ(utf8::truncate(s, 2), "a");
  EXPECT_EQ(utf8::truncate(s, 0), "");
  for (std::size_t n = 0; n <= s.size(); ++n) EXPECT_TRUE(utf8::valid(utf8::truncate(s, n))) << n;
}

// The push-hook defect: a message of 4095 ASCII bytes followed by 'é' was cut at byte
// 4096, leaving half a character that /api/v1/commits/{sha} then sent.
TEST(Utf8, TruncateAtTheCommitMessageLimitKeepsTheMessageValid) {
  const std::string message = std::string(4095, 'x') + "\xC3\xA9 and more";
  const auto cut = utf8::truncate(message, 4096);
  EXPECT_EQ(cut.size(), 4095u);
  EXPECT_TRUE(utf8::valid(cut));
}

TEST(Utf8, SanitizeReplacesEachMaximalInvalidSubpart) {
  EXPECT_EQ(utf8::sanitize("Grüße"), "Grüße");
  EXPECT_EQ(utf8::sanitize("a\xFF"
                           "b"),
            "a\xEF\xBF\xBD"
            "b");
  // E2 82 is the start of a valid three-byte form cut short: one replacement for both.
  EXPECT_EQ(utf8::sanitize("\xE2\x82"
                           "x"),
            "\xEF\xBF\xBD"
            "x");
  // Latin-1 text (a commit written by an old tool) becomes readable, valid text.
  EXPECT_EQ(utf8::sanitize("caf\xE9"), "caf\xEF\xBF\xBD");
  EXPECT_EQ(utf8::sanitize("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(utf8::valid(utf8::sanitize("\xC3\x28\xA0\xA1\xF0\x28\x8C\x28")));
}

TEST(Utf8, ClipRepairsThenCuts) {
  const auto out = utf8::clip("\xFF\xC3\xBC\xC3\xBC", 5);
  EXPECT_EQ(out, "\xEF\xBF\xBD\xC3\xBC");
  EXPECT_TRUE(utf8::valid(out));
}

}  // namespace
