// kport::git against real repositories: a bare origin made with the git CLI, commits
// pushed to it, and a workspace that must fetch (not re-clone) to see them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "kport/git/remote.h"
#include "kport/git/workspace.h"

namespace kport::git {
namespace {
namespace fs = std::filesystem;

class GitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("git --version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "the git CLI is needed to create test repositories";
    root = fs::temp_directory_path() / ("kport-git-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "src");
    origin = (root / "origin.git").string();
    sh("git init -q --bare " + origin);
    sh("cd " + src() +
       " && git init -q -b main && git config user.email dev@example.com && git config user.name Dev"
       " && git remote add origin " +
       origin);
  }
  void TearDown() override { fs::remove_all(root); }

  std::string src() const { return (root / "src").string(); }
  void sh(const std::string& cmd) { ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd; }
  std::string out(const std::string& cmd) {
    std::string text;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[256];
    while (p && std::fgets(buf, sizeof buf, p)) text += buf;
    if (p) ::pclose(p);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  std::string commit(const std::string& file, const std::string& content, const std::string& message) {
    std::ofstream(root / "src" / file) << content;
    sh("cd " + src() + " && git add -A && git commit -q -m '" + message + "' && git push -q origin main 2>/dev/null");
    return out("cd " + src() + " && git rev-parse HEAD");
  }

  fs::path root;
  std::string origin;
};

TEST_F(GitTest, ClonesOnceThenReusesAndFetches) {
  std::string first = commit("a.txt", "one", "first commit");
  fs::path ws_dir = workspace_dir(root / "cache", origin);
  {
    auto ws = Workspace::open(origin, ws_dir);
    ASSERT_TRUE(ws.ok()) << ws.error().message;
    EXPECT_TRUE(ws->cloned());
    ASSERT_TRUE(ws->checkout(first).ok());
    EXPECT_EQ(out("cat " + (ws_dir / "a.txt").string()), "one");
  }
  std::string second = commit("a.txt", "two", "second commit\n\nwith a body");
  // A marker file in .git survives only if the workspace is reused, not re-cloned.
  std::ofstream(ws_dir / ".git" / "kport-marker") << "x";
  auto ws = Workspace::open(origin, ws_dir);
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  EXPECT_FALSE(ws->cloned());
  EXPECT_FALSE(ws->has_commit(second)) << "not fetched yet";
  auto sha = ws->checkout(second);  // fetches because the commit is missing
  ASSERT_TRUE(sha.ok()) << sha.error().message;
  EXPECT_EQ(*sha, second);
  EXPECT_TRUE(fs::exists(ws_dir / ".git" / "kport-marker"));
  EXPECT_EQ(out("cat " + (ws_dir / "a.txt").string()), "two");
  EXPECT_EQ(out("cd " + ws_dir.string() + " && git rev-parse HEAD"), second);
  EXPECT_EQ(out("cd " + ws_dir.string() + " && git symbolic-ref -q HEAD || echo detached"), "detached");

  auto info = ws->commit_info(second);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->parent, first);
  EXPECT_EQ(info->summary, "second commit");
  EXPECT_EQ(info->author, "Dev <dev@example.com>");
  EXPECT_GT(info->time_ms, 0);
  EXPECT_FALSE(ws->commit_info(first)->parent.has_value());

  ASSERT_TRUE(ws->checkout(first).ok());
  EXPECT_EQ(out("cat " + (ws_dir / "a.txt").string()), "one");
}

TEST_F(GitTest, ResolvesBranchesTagsAndShortShas) {
  std::string c = commit("a.txt", "one", "first");
  sh("cd " + src() + " && git tag v1 && git push -q origin v1 2>/dev/null");
  auto ws = Workspace::open(origin, workspace_dir(root / "cache", origin));
  ASSERT_TRUE(ws.ok());
  EXPECT_EQ(*ws->resolve("main"), c);
  EXPECT_EQ(*ws->resolve("refs/remotes/origin/main"), c);
  EXPECT_EQ(*ws->resolve("v1"), c);
  EXPECT_EQ(*ws->resolve(c.substr(0, 10)), c);
}

TEST_F(GitTest, MissingCommitIsNotFoundAfterAFetch) {
  commit("a.txt", "one", "first");
  auto ws = Workspace::open(origin, workspace_dir(root / "cache", origin));
  ASSERT_TRUE(ws.ok());
  auto r = ws->checkout(std::string(40, 'b'));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::not_found);
  EXPECT_NE(r.error().message.find("does not exist"), std::string::npos);
}

// A repository that does not exist is permanent (not_found: no retry can make it
// appear); one that cannot be reached now is worth a retry (unavailable).
TEST_F(GitTest, MissingRepositoryIsNotFoundAndLeavesNoHalfClone) {
  fs::path dir = root / "cache" / "nowhere";
  const std::string missing = (root / "no-such-repo.git").string();
  auto ws = Workspace::open(missing, dir);
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.error().code, Errc::not_found) << ws.error().message;
  EXPECT_NE(ws.error().message.find("repository " + missing + " does not exist"), std::string::npos)
      << ws.error().message;
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_EQ(Workspace::open("file://" + missing, dir).error().code, Errc::not_found);
}

TEST_F(GitTest, UnreachableRepositoryIsUnavailableAndLeavesNoHalfClone) {
  fs::path dir = root / "cache" / "unreachable";
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  auto ws = Workspace::open("http://127.0.0.1:1/kernels.git", dir);
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.error().code, Errc::unavailable) << ws.error().message;
  EXPECT_FALSE(fs::exists(dir));
}

TEST_F(GitTest, RemoteRefSaysWhereARefPointsOrThatItIsGone) {
  const std::string sha = commit("a.txt", "one", "first");
  auto main = remote_ref(origin, "refs/heads/main");
  ASSERT_TRUE(main.ok()) << main.error().message;
  ASSERT_TRUE(main->has_value());
  EXPECT_EQ(**main, sha);
  auto gone = remote_ref(origin, "refs/heads/never-pushed");
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_FALSE(gone->has_value());
  auto unreachable = remote_ref((root / "no-such-repo.git").string(), "refs/heads/main");
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.error().code, Errc::unavailable);
}

TEST_F(GitTest, WorkspaceOfAnotherRepositoryIsRefused) {
  commit("a.txt", "one", "first");
  fs::path dir = root / "cache" / "ws";
  ASSERT_TRUE(Workspace::open(origin, dir).ok());
  auto other = Workspace::open("/elsewhere/repo.git", dir);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, Errc::invalid_argument);
}

TEST(WorkspaceDir, DistinctUrlsGetDistinctDirectories) {
  auto a = workspace_dir("/c", "/srv/kernels.git");
  auto b = workspace_dir("/c", "/other/kernels.git");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.parent_path(), fs::path("/c"));
  EXPECT_EQ(a.filename().string().rfind("kernels_git-", 0), 0u);
}

}  // namespace
}  // namespace kport::git
