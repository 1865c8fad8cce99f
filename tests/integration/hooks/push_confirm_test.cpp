// A delete or a force push is acted on only after the repository confirms it: a real
// bare repository with deploy/git-hooks/post-receive, real `git push`es, and validly
// signed events the repository contradicts (issue 14, item 6: a replayed branch delete
// with a fresh delivery id cancelled the live head's queued build).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "hook_fixture.h"

namespace kport::testing {
namespace {

using boost::json::object;
namespace fs = std::filesystem;

const std::string k_zero(40, '0');

class PushConfirm : public HookTest {
 protected:
  void SetUp() override {
    for (const char* tool : {"git", "curl", "openssl"})
      if (std::system((std::string("command -v ") + tool + " > /dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << tool << " is needed for a real repository with the post-receive hook";
    HookTest::SetUp();
    add_target("sm_90a", "9.0");
    origin = (dir.path() / "origin.git").string();
    work = (dir.path() / "work").string();
    sh("git init -q --bare " + origin + " && git init -q -b main " + work + " && git -C " + work +
       " config user.email dev@example.com && git -C " + work + " config user.name Dev && git -C " + work +
       " remote add origin " + origin);
    ASSERT_EQ(post("/api/v1/repositories", object{{"name", "kernels"}, {"url", origin}}, k_admin).status, 201);
  }

  // The post-receive hook reports every push to this coordinator, signed.
  void install_hook() {
    fs::path hook = fs::path(origin) / "hooks" / "post-receive";
    fs::copy_file(KPORT_POST_RECEIVE, hook, fs::copy_options::overwrite_existing);
    fs::permissions(hook, fs::perms::owner_all, fs::perm_options::add);
    sh("git -C " + origin + " config kport.url " + url("") + " && git -C " + origin + " config kport.secret " +
       k_hook_secret + " && git -C " + origin + " config kport.repo kernels");
  }

  // Runs a shell command, failing the test when it fails; returns its stdout, trimmed.
  std::string sh(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
    if (!p) {
      ADD_FAILURE() << "cannot run " << cmd;
      return out;
    }
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int rc = ::pclose(p);
    EXPECT_EQ(rc, 0) << cmd << "\n" << out;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
  }

  // A commit on the work tree's current branch; returns its sha.
  std::string commit(const std::string& message) {
    sh("cd " + work + " && echo '" + message + "' >> kernels.txt && git add -A && git commit -q -m '" + message + "'");
    return sh("git -C " + work + " rev-parse HEAD");
  }

  // The jobs of a commit, as the API lists them.
  boost::json::array jobs_of(const std::string& sha) {
    auto r = get("/api/v1/jobs?commit=" + sha);
    return r.body.at("items").as_array();
  }
  std::string job_status(const std::string& sha) {
    auto jobs = jobs_of(sha);
    if (jobs.empty()) return "none";
    return std::string(jobs[0].at("status").as_string());
  }

  // A GitHub-style delete or force push of `ref`, as the hook would have sent it.
  std::string event(const std::string& ref, const std::string& before, const std::string& after, bool forced) {
    boost::json::array commits;
    if (after != k_zero)
      commits.push_back(object{{"id", after},
                               {"message", "rewritten"},
                               {"timestamp", "2026-11-29T17:45:00Z"},
                               {"author", object{{"name", "Dev"}, {"email", "dev@example.com"}}}});
    return boost::json::serialize(
        object{{"ref", ref},
               {"before", before},
               {"after", after},
               {"forced", forced},
               {"deleted", after == k_zero},
               {"repository", object{{"name", "kernels"}, {"full_name", "kernels"}, {"clone_url", origin}}},
               {"commits", std::move(commits)}});
  }

  std::string origin, work;
};

TEST_F(PushConfirm, ARealForcePushAndARealDeleteAreConfirmedAndCancelTheRefsQueuedWork) {
  install_hook();
  sh("cd " + work + " && git checkout -q -b topic");
  const std::string a = commit("first try");
  sh("git -C " + work + " push -q origin topic");
  ASSERT_EQ(job_status(a), "queued");
  // Rewritten history: the old commit left the branch, its queued build is cancelled.
  sh("cd " + work + " && echo rewritten >> kernels.txt && git commit -q -a --amend -m 'second try'");
  const std::string b = sh("git -C " + work + " rev-parse HEAD");
  sh("git -C " + work + " push -q --force origin topic");
  EXPECT_EQ(job_status(a), "cancelled");
  EXPECT_NE(boost::json::serialize(jobs_of(a)).find("force push"), std::string::npos);
  ASSERT_EQ(job_status(b), "queued") << "the confirmed force push validates its new head";
  // Deleting the branch: confirmed (the ref is gone), its queued build is cancelled.
  sh("git -C " + work + " push -q origin --delete topic");
  EXPECT_EQ(job_status(b), "cancelled");
  EXPECT_NE(boost::json::serialize(jobs_of(b)).find("was deleted"), std::string::npos);
}

TEST_F(PushConfirm, AReplayedSignedDeleteWithAFreshDeliveryIdCancelsNothingWhileTheBranchExists) {
  // main exists in the repository at `a`, and kport validates it (as the watcher's poll
  // or an operator starts it); no push of main was ever recorded.
  const std::string a = commit("gemm: new tile");
  sh("git -C " + work + " push -q origin main");
  ASSERT_EQ(
      post("/api/v1/commits", object{{"sha", a}, {"repo", "kernels"}, {"message", "gemm: new tile"}}, k_admin).status,
      201);
  auto p = post("/api/v1/pipelines",
                object{{"commit", a}, {"repo", "kernels"}, {"ref", "refs/heads/main"}, {"reason", "manual"}}, k_admin);
  ASSERT_EQ(p.status, 201) << p.raw;
  ASSERT_EQ(job_status(a), "queued");

  // An old delete of main, validly signed, replayed under a fresh delivery id.
  auto replay = github(event("refs/heads/main", a, k_zero, false), "replayed-delete-fresh-id");
  EXPECT_EQ(replay.status, 409) << replay.raw;
  ASSERT_TRUE(replay.body.is_object()) << replay.raw;
  EXPECT_EQ(replay.body.at("error").at("code").as_string(), "conflict") << replay.raw;
  const std::string why(replay.body.at("error").at("message").as_string());
  EXPECT_NE(why.find("not confirmed by the repository"), std::string::npos) << why;
  EXPECT_NE(why.find("still has refs/heads/main at " + a.substr(0, 12)), std::string::npos) << why;
  EXPECT_EQ(job_status(a), "queued") << "the live head's build must survive the replay";
  // Nothing was recorded for it: when the branch really goes, the delete counts.
  sh("git -C " + work + " push -q origin --delete main");
  auto real = github(event("refs/heads/main", a, k_zero, false), "replayed-delete-fresh-id");
  EXPECT_EQ(real.status, 202) << real.raw;
  EXPECT_EQ(real.body.at("outcome").as_string(), "deleted") << real.raw;
  EXPECT_EQ(job_status(a), "cancelled");
}

TEST_F(PushConfirm, AForcePushTheRepositoryDoesNotShowChangesNothing) {
  install_hook();
  const std::string a = commit("gemm: new tile");
  sh("git -C " + work + " push -q origin main");
  ASSERT_EQ(job_status(a), "queued");
  // A rewind to a commit the branch does not point at (never pushed there).
  sh("cd " + work + " && git commit -q -a --amend -m 'never pushed'");
  const std::string other = sh("git -C " + work + " rev-parse HEAD");
  auto forged = github(event("refs/heads/main", a, other, true), "force-push-not-in-repo");
  EXPECT_EQ(forged.status, 409) << forged.raw;
  EXPECT_NE(forged.raw.find("has refs/heads/main at " + a.substr(0, 12) + ", not " + other.substr(0, 12)),
            std::string::npos)
      << forged.raw;
  EXPECT_EQ(job_status(a), "queued");
  EXPECT_EQ(job_status(other), "none") << "an unconfirmed force push validates nothing";
}

TEST_F(PushConfirm, ADeleteThatCannotBeConfirmedIs503AndChangesNothing) {
  install_hook();
  const std::string a = commit("gemm: new tile");
  sh("git -C " + work + " push -q origin main");
  ASSERT_EQ(job_status(a), "queued");
  // The repository goes away (moved, or its server is down): kport cannot ask it.
  fs::rename(origin, origin + ".moved");
  auto d = github(event("refs/heads/main", a, k_zero, false), "delete-unreachable");
  EXPECT_EQ(d.status, 503) << d.raw;
  EXPECT_EQ(d.body.at("error").at("code").as_string(), "unavailable") << d.raw;
  EXPECT_NE(d.raw.find("deliver it again later"), std::string::npos) << d.raw;
  EXPECT_EQ(job_status(a), "queued");
}

}  // namespace
}  // namespace kport::testing
