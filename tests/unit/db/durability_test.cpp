// An acknowledged write survives SIGKILL of the process that made it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

namespace kport::db::test {

using DurabilityTest = StoreTest;

namespace {

// Runs in a forked child: writes results one by one, reporting each acknowledged id on
// the pipe, then dies by SIGKILL without closing the store (no checkpoint, no flush).
[[noreturn]] void write_then_die(const Options& options, int fd, int rows) {
  auto store = Store::open(options);
  if (!store.ok()) _exit(2);
  for (int i = 0; i < rows; ++i) {
    ResultRecord r;
    r.commit_sha = std::string(40, 'f');
    r.target = "sm_90a";
    r.family = "softmax";
    r.variant = "simt";
    r.instance = "simt.a";
    r.dtype = "f32";
    r.shape = "rows=" + std::to_string(i) + ",cols=1024";
    r.gpu_model = "NVIDIA H200";
    r.median_us = 2.0;
    auto out = (*store)->put_results({r});
    if (!out.ok()) _exit(3);
    const std::int64_t id = out->at(0).id;
    if (write(fd, &id, sizeof id) != static_cast<ssize_t>(sizeof id)) _exit(4);
  }
  kill(getpid(), SIGKILL);
  _exit(5);  // not reached
}

}  // namespace

TEST_F(DurabilityTest, AcknowledgedResultsSurviveSigkill) {
  m_store.reset();  // fork with no other thread alive (no lock held by one)
  Options o = options();
  o.path = (m_dir / "killed.db").string();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    write_then_die(o, fds[1], 300);
  }
  close(fds[1]);
  std::vector<std::int64_t> acked;
  std::int64_t id = 0;
  while (read(fds[0], &id, sizeof id) == static_cast<ssize_t>(sizeof id)) acked.push_back(id);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  ASSERT_EQ(acked.size(), 300u);

  auto reopened = Store::open(o);
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  for (std::int64_t acked_id : acked) {
    auto r = ok((*reopened)->get_result(acked_id));
    ASSERT_TRUE(r.has_value()) << "acknowledged result " << acked_id << " was lost";
    EXPECT_EQ(r->family, "softmax");
  }
}

}  // namespace kport::db::test
