#include <gtest/gtest.h>

#include <cstdlib>

#include "kport/watcher/watcher.h"

namespace kport::watcher {
namespace {

TEST(WatcherConfig, ReposListBranchesPerRepository) {
  auto r = parse_repos("kernels=/srv/git/kernels.git#main,release  other=https://example.com/o.git#dev");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "kernels");
  EXPECT_EQ((*r)[0].url, "/srv/git/kernels.git");
  EXPECT_EQ((*r)[0].branches, (std::vector<std::string>{"main", "release"}));
  EXPECT_EQ((*r)[1].url, "https://example.com/o.git");
  EXPECT_TRUE(parse_repos("")->empty());
  for (const char* bad : {"kernels", "kernels=/x", "=/x#main", "k=/x#", "k=/x#main,,dev"})
    EXPECT_EQ(parse_repos(bad).error().code, Errc::invalid_argument) << bad;
}

TEST(WatcherConfig, FlagsAreCheckedAndTheToolkitRepoMustBeWatched) {
  bool help = false;
  std::string text;
  const char* ok[] = {"kport-watcher", "--server", "http://127.0.0.1:1", "--token", "t", "--repos", "k=/x#main",
                      "--watch",       "git"};
  auto c = parse_config(9, ok, help, text);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->git);
  EXPECT_FALSE(c->toolkit);
  EXPECT_EQ(c->toolkit_repo, "k");
  const char* bad_watch[] = {"kport-watcher", "--server", "s", "--token", "t", "--watch", "toolkit,weather"};
  EXPECT_NE(parse_config(7, bad_watch, help, text).error().message.find("weather"), std::string::npos);
  const char* bad_repo[] = {"kport-watcher", "--server",       "s", "--token", "t", "--repos",
                            "k=/x#main",     "--toolkit-repo", "z"};
  EXPECT_EQ(parse_config(9, bad_repo, help, text).error().code, Errc::invalid_argument);
}

TEST(WatcherConfig, CaFileComesFromTheFlagOrTheEnvironment) {
  bool help = false;
  std::string text;
  const char* flag[] = {"kport-watcher", "--server",         "https://ci:8443", "--token", "t",
                        "--ca-file",     "/etc/kport/ca.pem"};
  auto c = parse_config(7, flag, help, text);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->ca_file, "/etc/kport/ca.pem");
  ::setenv("KPORT_CA_FILE", "/env/ca.pem", 1);
  const char* env[] = {"kport-watcher", "--server", "https://ci:8443", "--token", "t"};
  auto e = parse_config(5, env, help, text);
  ::unsetenv("KPORT_CA_FILE");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->ca_file, "/env/ca.pem");
}

}  // namespace
}  // namespace kport::watcher
