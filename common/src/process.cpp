#include "kport/common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kport {
namespace {

using Clock = std::chrono::steady_clock;

// Held shared around each fork, exclusively by NoForkWhileWriting.
std::shared_mutex& fork_mutex() {
  static std::shared_mutex m;
  return m;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

NoForkWhileWriting::NoForkWhileWriting() : m_lock(fork_mutex()) {}

std::filesystem::path find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return std::filesystem::exists(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    auto end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::filesystem::path cand = std::filesystem::path(p.substr(start, end - start)) / name;
    if (::access(cand.c_str(), X_OK) == 0) return cand;
    start = end + 1;
  }
  return {};
}

Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) return make_error(Errc::invalid_argument, "run_process: empty command");
  auto exe = find_program(argv[0]);
  if (exe.empty()) return make_error(Errc::not_found, "program '" + argv[0] + "' was not found on PATH");
  // One pipe for both streams keeps their interleaving exact; split capture needs a second.
  int out_fds[2] = {-1, -1}, err_fds[2] = {-1, -1};
  if (::pipe2(out_fds, O_CLOEXEC) != 0) return make_error(Errc::internal, std::string("pipe: ") + std::strerror(errno));
  if (options.split_streams && ::pipe2(err_fds, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out_fds[0]);
    ::close(out_fds[1]);
    return make_error(Errc::internal, std::string("pipe: ") + std::strerror(e));
  }
  // The child writes execve's errno here when it cannot start the program; a successful
  // execve closes it (O_CLOEXEC), so the parent reads end of file.
  int exec_fds[2] = {-1, -1};
  if (::pipe2(exec_fds, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int fd : {out_fds[0], out_fds[1], err_fds[0], err_fds[1]})
      if (fd >= 0) ::close(fd);
    return make_error(Errc::internal, std::string("pipe: ") + std::strerror(e));
  }
  const auto close_all = [&] {
    for (int fd : {out_fds[0], out_fds[1], err_fds[0], err_fds[1], exec_fds[0], exec_fds[1]})
      if (fd >= 0) ::close(fd);
  };

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment is assembled before fork: the child of a threaded parent may not allocate.
  // Extra entries go first: getenv() takes the first match.
  std::vector<std::string> env_store(options.env.begin(), options.env.end());
  for (char** e = environ; e && *e; ++e) env_store.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid;
  {
    std::shared_lock no_writer(fork_mutex());  // no program of ours is open for writing now
    pid = ::fork();
  }
  if (pid < 0) {
    const int e = errno;
    close_all();
    return make_error(Errc::internal, std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    // Child: own process group, so a timeout can take down nvcc's helpers too; and killed
    // when the thread that started it goes (a runner killed with SIGKILL must not leave a
    // hung kernel on its GPU). That thread waits for it below, so it never goes first.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(127);  // the parent died before the line above
    ::dup2(out_fds[1], 1);
    ::dup2(options.split_streams ? err_fds[1] : out_fds[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    int err = 0;
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) {
      err = errno;
    } else {
      // ETXTBSY: another thread of the parent wrote the program and forked a child of its own
      // while the file was open; that child holds the write descriptor until its own execve
      // closes it. Try again for up to half a second (nanosleep is async-signal-safe).
      for (int tries = 0; tries < 250; ++tries) {
        ::execve(exe.c_str(), args.data(), envp.data());
        err = errno;
        if (err != ETXTBSY) break;
        const timespec pause{0, 2'000'000};
        ::nanosleep(&pause, nullptr);
      }
    }
    [[maybe_unused]] const ssize_t n = ::write(exec_fds[1], &err, sizeof err);
    _exit(127);
  }
  ::setpgid(pid, pid);
  ::close(exec_fds[1]);
  exec_fds[1] = -1;
  {
    // Wait for the execve: end of file, or its errno. Another thread's child may hold the
    // write end a moment longer (until its own execve); that only delays the answer.
    int err = 0;
    ssize_t n;
    do n = ::read(exec_fds[0], &err, sizeof err);
    while (n < 0 && errno == EINTR);
    ::close(exec_fds[0]);
    exec_fds[0] = -1;
    if (n == static_cast<ssize_t>(sizeof err)) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      close_all();
      return make_error(Errc::unavailable, "cannot run " + exe.string() +
                                               (options.cwd.empty() ? "" : " in " + options.cwd.string()) + ": " +
                                               std::strerror(err));
    }
  }
  ::close(out_fds[1]);
  out_fds[1] = -1;
  if (err_fds[1] >= 0) {
    ::close(err_fds[1]);
    err_fds[1] = -1;
  }

  ProcessOutput out;
  const auto keep = [&](std::string& into, const char* data, std::size_t n) {
    const std::size_t room = options.output_limit > into.size() ? options.output_limit - into.size() : 0;
    if (n > room) out.truncated = true;
    into.append(data, std::min(room, n));
  };
  auto deadline = Clock::now() + options.timeout;
  char buf[16384];
  // Open read ends: [0] stdout (or both streams), [1] stderr when split.
  int open_fds[2] = {out_fds[0], err_fds[0]};
  for (;;) {
    if (open_fds[0] < 0 && open_fds[1] < 0) break;
    if (options.cancel && options.cancel->load()) {
      out.cancelled = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int wait_ms = options.cancel ? 1000 : -1;
    if (options.timeout.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        out.timed_out = true;
        ::kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd p[2];
    nfds_t n_poll = 0;
    int which[2];
    for (int i = 0; i < 2; ++i)
      if (open_fds[i] >= 0) {
        p[n_poll] = pollfd{open_fds[i], POLLIN, 0};
        which[n_poll++] = i;
      }
    int r = ::poll(p, n_poll, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    for (nfds_t k = 0; k < n_poll; ++k) {
      if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const int i = which[k];
      ssize_t n = ::read(open_fds[i], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        open_fds[i] = -1;  // closed below with the rest
        continue;
      }
      const auto len = static_cast<std::size_t>(n);
      keep(out.output, buf, len);
      if (options.split_streams) keep(i == 0 ? out.stdout_text : out.stderr_text, buf, len);
    }
  }
  close_all();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  // Helpers that inherited the group may still run after nvcc itself exited.
  if (out.timed_out || out.cancelled) ::kill(-pid, SIGKILL);
  out.exit_code = decode_status(status);
  return out;
}

}  // namespace kport
