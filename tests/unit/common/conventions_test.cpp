// The conventions every kport binary shares: --version (version, commit, UTC build date)
// and the logging options (--log-level, --log-format, UTC timestamps in both formats).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <regex>
#include <string>

#include "kport/common/build_info.h"
#include "kport/common/clock.h"
#include "kport/common/log.h"
#include "kport/common/log_options.h"
#include "kport/common/options.h"

namespace kport {
namespace {

const std::regex k_version_line(
    R"(^kport-test \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,40}|unknown), built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\n$)");

TEST(Clock, TimesAreIso8601InUtcWithMilliseconds) {
  EXPECT_EQ(kport::iso8601_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(kport::iso8601_utc(1'764'593'045'007), "2025-12-01T12:44:05.007Z");
  EXPECT_EQ(kport::iso8601_utc(951'782'399'999), "2000-02-28T23:59:59.999Z");
  EXPECT_EQ(kport::iso8601_utc(951'868'800'000), "2000-03-01T00:00:00.000Z");  // past Feb 29
}

TEST(BuildInfo, NamesVersionCommitAndUtcBuildDate) {
  const auto& b = build_info();
  EXPECT_FALSE(b.version.empty());
  EXPECT_TRUE(std::regex_match(std::string(b.commit), std::regex("[0-9a-f]{7,40}|unknown"))) << b.commit;
  EXPECT_TRUE(std::regex_match(std::string(b.date), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << b.date;
  EXPECT_TRUE(std::regex_match(version_text("kport-test"), k_version_line)) << version_text("kport-test");
}

TEST(Options, VersionIsRequestedLikeHelpAndListedInHelp) {
  Options o("kport-test", "test program");
  const char* argv[] = {"kport-test", "--version"};
  ASSERT_TRUE(o.parse(2, argv).ok());
  EXPECT_TRUE(o.version_requested());
  EXPECT_FALSE(o.help_requested());
  EXPECT_TRUE(std::regex_match(o.version_text(), k_version_line)) << o.version_text();
  EXPECT_NE(o.help_text().find("--version"), std::string::npos);
}

TEST(Options, OptionsTextListsOnlyDeclaredOptions) {
  Options o("kport-test", "test program");
  o.add("gpu", "", "", "GPU model");
  EXPECT_NE(o.options_text().find("--gpu VALUE"), std::string::npos);
  EXPECT_EQ(o.options_text().find("--config"), std::string::npos);
  EXPECT_EQ(o.options_text().find("--version"), std::string::npos);
}

TEST(LogOptions, DefaultsToTextAtInfo) {
  Options o("kport-test", "test program");
  log::add_options(o);
  const char* argv[] = {"kport-test"};
  ASSERT_TRUE(o.parse(1, argv).ok());
  auto s = log::read_options(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->level, log::Level::info);
  EXPECT_EQ(s->format, log::Format::text);
}

TEST(LogOptions, ReadsJsonAndRejectsAnUnknownFormatByName) {
  Options o("kport-test", "test program");
  log::add_options(o);
  const char* argv[] = {"kport-test", "--log-format", "json", "--log-level=debug"};
  ASSERT_TRUE(o.parse(4, argv).ok());
  auto s = log::read_options(o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->format, log::Format::json);
  EXPECT_EQ(s->level, log::Level::debug);

  Options bad("kport-test", "test program");
  log::add_options(bad);
  const char* argv2[] = {"kport-test", "--log-format", "xml"};
  ASSERT_TRUE(bad.parse(3, argv2).ok());
  auto e = log::read_options(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Errc::invalid_argument);
  EXPECT_NE(e.error().message.find("--log-format"), std::string::npos);
  EXPECT_NE(e.error().message.find("xml"), std::string::npos);
}

TEST(Log, JsonLinesCarryUtcTimestamps) {
  ::testing::internal::CaptureStderr();
  log::init("kport-test", log::Level::info, log::Format::json);
  log::warn("disk \"full\"", {{"path", "/var/kport"}, {"free", 0}});
  log::flush();
  std::string out = ::testing::internal::GetCapturedStderr();
  log::init("kport-test", log::Level::info, log::Format::text);
  auto v = boost::json::parse(out.substr(0, out.find('\n')));
  const auto& o = v.as_object();
  EXPECT_EQ(o.at("level").as_string(), "warning");
  EXPECT_EQ(o.at("proc").as_string(), "kport-test");
  EXPECT_EQ(o.at("msg").as_string(), "disk \"full\"");
  EXPECT_EQ(o.at("path").as_string(), "/var/kport");
  EXPECT_TRUE(
      std::regex_match(std::string(o.at("ts").as_string()), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << o.at("ts");
}

TEST(Log, TextLinesCarryUtcTimestamps) {
  ::testing::internal::CaptureStderr();
  log::init("kport-test", log::Level::info, log::Format::text);
  log::warn("slow scrape", {{"ms", 12}});
  log::flush();
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z warn.* kport-test: slow scrape ms=12)")))
      << out;
}

}  // namespace
}  // namespace kport
