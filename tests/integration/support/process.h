// Test support: start a real kport executable as a child process, find its port, talk
// HTTP to it, and stop or kill it. Each ServiceProcess owns a temp directory.
#pragma once

#include <sys/types.h>

#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "kport/http/client.h"

namespace kport::testing {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

class ServiceProcess {
 public:
  // Starts `binary` with `args` plus --port-file; waits until the port file appears.
  ServiceProcess(std::string binary, std::vector<std::string> args, std::filesystem::path port_file,
                 std::filesystem::path log_file);
  ~ServiceProcess();

  bool started() const { return m_port != 0; }
  std::uint16_t port() const { return m_port; }
  std::string url(std::string_view path = "") const;
  pid_t pid() const { return m_pid; }
  // SIGTERM and wait; returns the exit status (or -1 on timeout, then SIGKILL).
  int terminate(std::chrono::milliseconds wait = std::chrono::milliseconds(10'000));
  // SIGKILL and reap.
  void kill_hard();
  std::string log() const;

 private:
  pid_t m_pid = -1;
  std::uint16_t m_port = 0;
  std::filesystem::path m_log;
};

// Runs `binary args...` to completion, capturing stdout+stderr; returns the exit code.
int run_to_exit(const std::string& binary, const std::vector<std::string>& args, std::string& output);

// Convenience: request and parse JSON, failing the current test on transport errors.
struct JsonReply {
  int status = 0;
  boost::json::value body;
  std::string raw;
};
JsonReply call(http::Client& client, std::string_view method, const std::string& url,
               const boost::json::value* body = nullptr, const std::string& token = "");
JsonReply call_raw(http::Client& client, std::string_view method, const std::string& url, std::string_view body,
                   const std::string& token = "", std::string_view content_type = "application/json");

}  // namespace kport::testing
