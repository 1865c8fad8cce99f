// Process metrics under the names Prometheus client libraries use, so dashboards and
// alerts written for any service work on kport too. Read from /proc/self on each scrape:
// a few small reads, no allocation worth noting, and nothing that can block on a lock
// the process holds.
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kport/http/metrics.h"

namespace kport::http {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The boot time in seconds since the epoch: /proc/stat's btime line.
double boot_time_seconds() {
  std::string stat = read_file("/proc/stat");
  auto at = stat.find("\nbtime ");
  if (at == std::string::npos) return 0;
  return std::strtod(stat.c_str() + at + 7, nullptr);
}

void gauge(std::string& out, const char* name, const char* type, const char* help, double value) {
  char num[64];
  std::snprintf(num, sizeof num, "%.17g", value);
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  out.append(name).append(" ").append(num).append("\n");
}

}  // namespace

void append_process_metrics(std::string& out) {
  // /proc/self/stat: "pid (comm) state ..."; comm may hold spaces and parentheses, so
  // the fields are counted from the last ')'. After it, field 3 (state) comes first.
  std::string stat = read_file("/proc/self/stat");
  auto close = stat.rfind(')');
  if (close != std::string::npos) {
    std::vector<std::string> fields;
    std::istringstream rest(stat.substr(close + 1));
    for (std::string f; rest >> f;) fields.push_back(std::move(f));
    auto field = [&](std::size_t n) -> double {  // n as numbered in proc(5)
      return n >= 3 && n - 3 < fields.size() ? std::strtod(fields[n - 3].c_str(), nullptr) : 0.0;
    };
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    gauge(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
          (field(14) + field(15)) / ticks);
    gauge(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
          boot_time_seconds() + field(22) / ticks);
    gauge(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", field(23));
    gauge(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", field(24) * page);
  }
  std::error_code ec;
  std::size_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++fds;
  if (!ec) gauge(out, "process_open_fds", "gauge", "Number of open file descriptors.", static_cast<double>(fds));
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    gauge(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
          static_cast<double>(lim.rlim_cur));
}

}  // namespace kport::http
