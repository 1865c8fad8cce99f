#include "kport/http/uri.h"

#include <gtest/gtest.h>

#include "kport/http/client.h"

namespace kport::http {
namespace {

TEST(PercentDecode, DecodesEscapesAndPlusOnlyInQueries) {
  EXPECT_EQ(*percent_decode("a%20b%2Fc"), "a b/c");
  EXPECT_EQ(*percent_decode("a+b"), "a+b");
  EXPECT_EQ(*percent_decode("a+b", true), "a b");
  EXPECT_EQ(*percent_decode("%e2%82%ac"), "\xE2\x82\xAC");
}

TEST(PercentDecode, RejectsMalformedEscapesNulAndBadUtf8) {
  EXPECT_FALSE(percent_decode("%").ok());
  EXPECT_FALSE(percent_decode("%4").ok());
  EXPECT_FALSE(percent_decode("%zz").ok());
  auto nul = percent_decode("a%00b");
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.error().code, Errc::invalid_argument);
  EXPECT_FALSE(percent_decode("%ff").ok());
  EXPECT_FALSE(percent_decode("%C0%AF").ok()) << "overlong '/' must be rejected";
}

// A component with nothing to decode is taken whole, and still checked like any other.
TEST(PercentDecode, TakesPlainTextWholeButStillRejectsNulAndBadUtf8) {
  EXPECT_EQ(*percent_decode("m=4096,n=4096,k=4096", true), "m=4096,n=4096,k=4096");
  EXPECT_EQ(*percent_decode("\xE2\x82\xAC"), "\xE2\x82\xAC");
  EXPECT_EQ(*percent_decode(""), "");
  EXPECT_FALSE(percent_decode(std::string_view("a\0b", 3)).ok()) << "a literal NUL as much as %00";
  EXPECT_FALSE(percent_decode(std::string_view("a\0b", 3), true).ok());
  EXPECT_FALSE(percent_decode("\xFF").ok()) << "invalid UTF-8 sent raw";
  EXPECT_FALSE(percent_decode("\xC0\xAF", true).ok()) << "an overlong form sent raw";
}

TEST(Utf8, AcceptsWellFormedRejectsSurrogatesAndTruncation) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x9A\x80"));
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));
}

TEST(ParseQuery, DecodesPairsFlagsAndLastDuplicateWins) {
  auto q = parse_query("gpu=NVIDIA%20H200&op=gemm&shape=4096x4096&flag&op=attention&&x=a+b");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->at("gpu"), "NVIDIA H200");
  EXPECT_EQ(q->at("op"), "attention");
  EXPECT_EQ(q->at("flag"), "");
  EXPECT_EQ(q->at("x"), "a b");
  EXPECT_EQ(q->size(), 5u);
}

TEST(ParseQuery, NamesTheParameterThatFailed) {
  auto q = parse_query("ok=1&bad=%00");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find("'bad'"), std::string::npos) << q.error().message;
}

TEST(PercentEncode, RoundTripsThroughDecode) {
  std::string raw = "a b/c?d=e&f\xE2\x82\xAC";
  EXPECT_EQ(percent_encode("a b/c"), "a%20b%2Fc");
  EXPECT_EQ(*percent_decode(percent_encode(raw)), raw);
  std::string out = "list?gpu=";
  percent_encode("NVIDIA H200", out);
  EXPECT_EQ(out, "list?gpu=NVIDIA%20H200") << "appended, what percent_encode returns";
}

TEST(ParseUrl, SplitsHostPortAndTarget) {
  auto u = parse_url("http://127.0.0.1:8080/api/v1/best?gpu=x#frag");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/api/v1/best?gpu=x");

  auto bare = parse_url("HTTP://example.org");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->port, 80);
  EXPECT_EQ(bare->target, "/");
  EXPECT_EQ(parse_url("http://h:1?x=1")->target, "/?x=1");

  auto v6 = parse_url("http://[::1]:9000/x");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9000);
  EXPECT_EQ(v6->scheme, "http");
}

TEST(ParseUrl, HttpsDefaultsToPort443AndKeepsItsScheme) {
  auto u = parse_url("HTTPS://ci.example.org/api/v1/runners");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "ci.example.org");
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->target, "/api/v1/runners");
  auto with_port = parse_url("https://127.0.0.1:8443");
  ASSERT_TRUE(with_port.ok());
  EXPECT_EQ(with_port->port, 8443);
  EXPECT_EQ(with_port->target, "/");
}

TEST(ParseUrl, RejectsWhatTheClientCannotHonour) {
  for (const char* bad :
       {"ftp://h/", "httpx://h/", "https://", "https://:443/", "http://", "http://:80/", "http://h:0/",
        "http://h:70000/", "http://h:8x/", "http://u:p@h/", "http://[::1/", "http://h/a b"}) {
    auto u = parse_url(bad);
    EXPECT_FALSE(u.ok()) << bad;
    if (!u.ok()) {
      EXPECT_EQ(u.error().code, Errc::invalid_argument) << bad;
    }
  }
}

}  // namespace
}  // namespace kport::http
