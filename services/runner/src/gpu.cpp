#include "kport/runner/gpu.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "kport/common/process.h"

namespace kport::runner {
namespace json = boost::json;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto comma = line.find(',', start);
    out.emplace_back(
        trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

// nvidia-smi prints "[N/A]", "[Not Supported]" or "N/A" for what a GPU cannot report.
bool missing(std::string_view v) { return v.empty() || v.front() == '[' || v == "N/A"; }

template <typename T>
bool number(std::string_view v, T& out) {
  if (missing(v)) return false;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size();
}

bool decimal(std::string_view v, double& out) {
  if (missing(v)) return false;
  try {
    std::size_t used = 0;
    out = std::stod(std::string(v), &used);
    return used == v.size();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

json::object GpuInfo::to_json() const {
  return json::object{{"index", index},       {"name", name},
                      {"uuid", uuid},         {"arch", arch},
                      {"sm_count", sm_count}, {"memory_mib", memory_mib},
                      {"driver", driver},     {"pci_bus_id", pci_bus_id}};
}

Result<std::vector<GpuInfo>> parse_inventory_csv(std::string_view csv) {
  std::vector<GpuInfo> gpus;
  std::size_t line_no = 0;
  std::istringstream in{std::string(csv)};
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (trim(line).empty()) continue;
    auto f = split_csv(line);
    auto bad = [&](const std::string& why) {
      return make_error(Errc::unprocessable,
                        "nvidia-smi line " + std::to_string(line_no) + " (\"" + line + "\"): " + why);
    };
    if (f.size() != 7)
      return bad("expected 7 fields (" + std::string(k_inventory_query) + "), found " + std::to_string(f.size()));
    GpuInfo g;
    if (!number(f[0], g.index)) return bad("index is not a number");
    g.name = f[1];
    g.uuid = f[2];
    if (g.uuid.rfind("GPU-", 0) != 0 && g.uuid.rfind("MIG-", 0) != 0)
      return bad("uuid does not start with GPU- or MIG-");
    g.arch = f[3];
    if (g.arch.size() < 3 || g.arch.find('.') == std::string::npos) return bad("compute_cap is not major.minor");
    if (!missing(f[4]) && !number(f[4], g.memory_mib)) return bad("memory.total is not a number of MiB");
    g.driver = missing(f[5]) ? std::string() : f[5];
    g.pci_bus_id = missing(f[6]) ? std::string() : f[6];
    gpus.push_back(std::move(g));
  }
  return gpus;
}

Result<std::vector<GpuInfo>> discover_gpus(const std::string& nvidia_smi, Env& env) {
  if (kport::find_program(nvidia_smi).empty())
    return make_error(Errc::not_found, "'" + nvidia_smi + "' is not installed or not on PATH; no NVIDIA driver here");
  kport::ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  o.split_streams = true;  // a driver warning on stderr must not become a CSV line
  auto out = env.run_process(
      {nvidia_smi, "--query-gpu=" + std::string(k_inventory_query), "--format=csv,noheader,nounits"}, o);
  if (!out.ok()) return std::move(out).error();
  if (out->timed_out) return make_error(Errc::unavailable, nvidia_smi + " did not answer within 60 s");
  if (out->exit_code != 0)
    return make_error(Errc::unavailable, nvidia_smi + " exited with " + std::to_string(out->exit_code) + ": " +
                                             std::string(trim(out->output)));
  auto gpus = parse_inventory_csv(out->stdout_text);
  if (!gpus.ok()) return gpus;
  if (gpus->empty()) return make_error(Errc::unavailable, nvidia_smi + " lists no GPU");
  return gpus;
}

Result<std::vector<GpuInfo>> gpus_from_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return make_error(Errc::not_found, "cannot read the GPU inventory " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  auto doc = json::parse(text.str(), ec);
  if (ec || !doc.is_array()) return make_error(Errc::bad_json, file.string() + ": expected a JSON array of GPUs");
  std::vector<GpuInfo> gpus;
  int i = 0;
  for (const auto& v : doc.as_array()) {
    const auto* o = v.if_object();
    auto str = [&](const char* k) -> std::string {
      const auto* x = o ? o->if_contains(k) : nullptr;
      return x && x->is_string() ? std::string(x->as_string()) : std::string();
    };
    auto num = [&](const char* k) -> std::int64_t {
      const auto* x = o ? o->if_contains(k) : nullptr;
      return x && x->is_int64() ? x->as_int64() : 0;
    };
    GpuInfo g;
    g.index = o && o->contains("index") ? static_cast<int>(num("index")) : i;
    g.name = str("name");
    g.uuid = str("uuid");
    g.arch = str("arch");
    g.sm_count = static_cast<int>(num("sm_count"));
    g.memory_mib = num("memory_mib");
    g.driver = str("driver");
    g.pci_bus_id = str("pci_bus_id");
    if (g.name.empty() || g.uuid.empty() || g.arch.empty())
      return make_error(Errc::invalid_argument,
                        file.string() + ": GPU " + std::to_string(i) + " needs name, uuid and arch");
    gpus.push_back(std::move(g));
    ++i;
  }
  if (gpus.empty()) return make_error(Errc::invalid_argument, file.string() + " lists no GPU");
  return gpus;
}

bool fill_sm_counts(std::vector<GpuInfo>& gpus) {
  // The few driver entry points needed, declared here: no CUDA headers at build time.
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using Get = int (*)(int*, int);
  using Uuid = int (*)(unsigned char*, int);
  using Attr = int (*)(int*, int, int);
  constexpr int k_attr_sm_count = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  auto init = reinterpret_cast<Init>(::dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<Count>(::dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<Get>(::dlsym(lib, "cuDeviceGet"));
  auto uuid = reinterpret_cast<Uuid>(::dlsym(lib, "cuDeviceGetUuid_v2"));
  if (!uuid) uuid = reinterpret_cast<Uuid>(::dlsym(lib, "cuDeviceGetUuid"));
  auto attr = reinterpret_cast<Attr>(::dlsym(lib, "cuDeviceGetAttribute"));
  int n = 0;
  if (!init || !count || !get || !uuid || !attr || init(0) != 0 || count(&n) != 0) return false;
  for (int i = 0; i < n; ++i) {
    int dev = 0, sms = 0;
    unsigned char bytes[16] = {};
    if (get(&dev, i) != 0 || uuid(bytes, dev) != 0 || attr(&sms, k_attr_sm_count, dev) != 0) continue;
    char text[48];
    std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                  bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
    for (auto& g : gpus)
      if (g.uuid == text) g.sm_count = sms;
  }
  return true;  // the library stays loaded: unloading a driver library mid-process is not worth the risk
}

json::object parse_telemetry_csv(std::string_view line) {
  auto f = split_csv(trim(line.substr(0, line.find('\n'))));
  json::object t;
  if (f.size() != 8) return t;
  double v = 0;
  if (decimal(f[0], v)) t["sm_clock_mhz"] = v;
  if (decimal(f[1], v)) t["sm_clock_max_mhz"] = v;
  if (decimal(f[2], v)) t["mem_clock_mhz"] = v;
  if (decimal(f[3], v)) t["temperature_c"] = v;
  if (decimal(f[4], v)) t["power_w"] = v;
  if (decimal(f[5], v)) t["power_limit_w"] = v;
  if (!missing(f[6])) t["pstate"] = f[6];
  // A bit mask (0x0000000000000001 = idle, 0x04 = power cap, 0x20/0x40 = thermal, ...).
  if (!missing(f[7])) t["clock_event_reasons"] = f[7];
  return t;
}

json::object read_telemetry(const std::string& nvidia_smi, const std::string& uuid, Env& env) {
  if (kport::find_program(nvidia_smi).empty()) return {};
  kport::ProcessOptions o;
  o.timeout = std::chrono::seconds(30);
  o.split_streams = true;
  std::string query(k_telemetry_query);
  auto out = env.run_process({nvidia_smi, "-i", uuid, "--query-gpu=" + query, "--format=csv,noheader,nounits"}, o);
  if (out.ok() && out->exit_code != 0 && !out->timed_out) {
    // Drivers before 535 call the clock-event reasons "clocks_throttle_reasons".
    query.replace(query.find("clocks_event_reasons"), 20, "clocks_throttle_reasons");
    out = env.run_process({nvidia_smi, "-i", uuid, "--query-gpu=" + query, "--format=csv,noheader,nounits"}, o);
  }
  if (!out.ok() || out->exit_code != 0) return {};
  return parse_telemetry_csv(out->stdout_text);
}

GpuLock::GpuLock(GpuLock&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }

GpuLock& GpuLock::operator=(GpuLock&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = other.m_fd;
    other.m_fd = -1;
  }
  return *this;
}

GpuLock::~GpuLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing the last descriptor of the file drops the flock
}

Result<GpuLock> GpuLock::try_take(const std::filesystem::path& dir, const std::string& uuid, const std::string& who) {
  if (uuid.empty() || uuid.find('/') != std::string::npos || uuid.starts_with("."))
    return make_error(Errc::invalid_argument, "GPU UUID '" + uuid + "' cannot name a lock file");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return make_error(Errc::internal, "cannot make the GPU lock directory " + dir.string() + ": " + ec.message());
    ::chmod(dir.c_str(), 01777);  // shared by the runners of every user, like /tmp
  }
  const std::filesystem::path file = dir / (uuid + ".lock");
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return make_error(Errc::internal, "cannot open " + file.string() + ": " + std::strerror(errno));
  ::fchmod(fd, 0666);  // the umask must not keep another user's runner out
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char held_by[512] = {};
    const ssize_t n = ::pread(fd, held_by, sizeof held_by - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK)
      return make_error(Errc::internal, "cannot lock " + file.string() + ": " + std::strerror(err));
    std::string holder(held_by, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
    return make_error(Errc::unavailable, "GPU " + uuid + " is in use by another kport-runner on this host (" +
                                             (holder.empty() ? std::string("holder unknown") : holder) + "; lock " +
                                             file.string() + ")");
  }
  const std::string line = who + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) < 0) {
    // The lock holds without the note; only the waiting runner's message is poorer.
  }
  GpuLock lock;
  lock.m_fd = fd;
  return lock;
}

}  // namespace kport::runner
