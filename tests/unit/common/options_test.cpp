#include "kport/common/options.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace kport {
namespace {

Options make() {
  Options o("kport-test", "test program");
  o.add("listen", "KPORT_TEST_LISTEN", "127.0.0.1:8080", "address")
      .add("db", "KPORT_TEST_DB", "var/kport.db", "database")
      .add_flag("open-reads", "KPORT_TEST_OPEN_READS", true, "reads need no token");
  return o;
}

}  // namespace

TEST(Options, CommandLineBeatsEnvironmentBeatsFileBeatsDefault) {
  auto path = std::filesystem::temp_directory_path() / "kport_options_test.conf";
  std::ofstream(path) << "# comment\nlisten = 0.0.0.0:1\ndb = /from/file.db\nopen-reads = false\n";
  ::setenv("KPORT_TEST_DB", "/from/env.db", 1);
  auto o = make();
  std::string cfg = "--config=" + path.string();
  const char* argv[] = {"kport-test", "--listen", "127.0.0.1:0", cfg.c_str()};
  ASSERT_TRUE(o.parse(4, argv).ok());
  EXPECT_EQ(o.get("listen"), "127.0.0.1:0");
  EXPECT_EQ(o.source("listen"), "command line");
  EXPECT_EQ(o.get("db"), "/from/env.db");
  EXPECT_FALSE(o.flag("open-reads"));
  ::unsetenv("KPORT_TEST_DB");
  std::filesystem::remove(path);
}

TEST(Options, FlagsAndNegation) {
  auto o = make();
  const char* argv[] = {"kport-test", "--no-open-reads"};
  ASSERT_TRUE(o.parse(2, argv).ok());
  EXPECT_FALSE(o.flag("open-reads"));
}

TEST(Options, UnknownOptionAndMissingValueAreClearErrors) {
  auto o = make();
  const char* argv[] = {"kport-test", "--lisen", "x"};
  auto st = o.parse(3, argv);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("unknown option --lisen"), std::string::npos);
  auto o2 = make();
  const char* argv2[] = {"kport-test", "--db"};
  EXPECT_NE(o2.parse(2, argv2).error().message.find("needs a value"), std::string::npos);
}

TEST(Options, HelpListsOptionsAndEnvironment) {
  auto o = make();
  const char* argv[] = {"kport-test", "--help"};
  ASSERT_TRUE(o.parse(2, argv).ok());
  EXPECT_TRUE(o.help_requested());
  EXPECT_NE(o.help_text().find("--listen VALUE"), std::string::npos);
  EXPECT_NE(o.help_text().find("KPORT_TEST_DB"), std::string::npos);
}

TEST(ParseHostPort, AcceptsHostPortAndRejectsJunk) {
  auto hp = parse_host_port("127.0.0.1:0");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->first, "127.0.0.1");
  EXPECT_EQ(hp->second, 0);
  EXPECT_EQ(parse_host_port("[::1]:80")->first, "::1");
  EXPECT_FALSE(parse_host_port("localhost").ok());
  EXPECT_FALSE(parse_host_port("h:70000").ok());
  EXPECT_FALSE(parse_host_port("h:").ok());
}

}  // namespace kport
