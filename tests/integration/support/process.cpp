#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace kport::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device rd;
  m_path = fs::temp_directory_path() / ("kport-test-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(m_path);
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!std::getenv("KPORT_KEEP_TEST_DIRS")) fs::remove_all(m_path, ec);
}

namespace {

pid_t spawn(const std::string& binary, const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    // The child must not inherit the test's blocked signals.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

ServiceProcess::ServiceProcess(std::string binary, std::vector<std::string> args, fs::path port_file, fs::path log_file)
    : m_log(std::move(log_file)) {
  std::error_code ec;
  fs::remove(port_file, ec);
  args.push_back("--port-file");
  args.push_back(port_file.string());
  m_pid = spawn(binary, args, m_log);
  for (int i = 0; i < 300; ++i) {
    std::ifstream in(port_file);
    unsigned port = 0;
    if (in >> port && port > 0) {
      m_port = static_cast<std::uint16_t>(port);
      return;
    }
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
      m_pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

ServiceProcess::~ServiceProcess() {
  if (m_pid > 0) kill_hard();
}

std::string ServiceProcess::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(m_port) + std::string(path);
}

int ServiceProcess::terminate(std::chrono::milliseconds wait) {
  if (m_pid <= 0) return -1;
  ::kill(m_pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
      m_pid = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill_hard();
  return -1;
}

void ServiceProcess::kill_hard() {
  if (m_pid <= 0) return;
  ::kill(m_pid, SIGKILL);
  int status = 0;
  waitpid(m_pid, &status, 0);
  m_pid = -1;
}

std::string ServiceProcess::log() const {
  std::ifstream in(m_log);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int run_to_exit(const std::string& binary, const std::vector<std::string>& args, std::string& output) {
  TempDir dir;
  auto log = dir.path() / "out.log";
  pid_t pid = spawn(binary, args, log);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(log);
  std::ostringstream s;
  s << in.rdbuf();
  output = s.str();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

JsonReply call_raw(http::Client& client, std::string_view method, const std::string& url, std::string_view body,
                   const std::string& token, std::string_view content_type) {
  http::HeaderList headers;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  if (!body.empty()) headers.emplace_back("Content-Type", std::string(content_type));
  auto r = client.fetch(method, url, body, headers, std::chrono::milliseconds(60'000));
  JsonReply out;
  if (!r.ok()) {
    ADD_FAILURE() << method << " " << url << ": " << r.error().message;
    return out;
  }
  out.status = r->status;
  out.raw = r->body;
  boost::system::error_code ec;
  out.body = boost::json::parse(r->body, ec);
  if (ec) out.body = nullptr;
  return out;
}

JsonReply call(http::Client& client, std::string_view method, const std::string& url, const boost::json::value* body,
               const std::string& token) {
  std::string text = body ? boost::json::serialize(*body) : std::string();
  return call_raw(client, method, url, text, token);
}

}  // namespace kport::testing
