// The GPUs of a host, as a GPU runner sees them: discovered through `nvidia-smi`, with SM
// counts from the CUDA driver library loaded at run time (libcuda.so.1), so the runner
// links nothing of CUDA. A JSON inventory file can stand in for discovery on hosts without
// nvidia-smi, or to pin a runner to some of the GPUs.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/env.h"
#include "kport/common/result.h"

namespace kport::runner {

struct GpuInfo {
  int index = 0;     // nvidia-smi's index (PCI order); workers pin by uuid instead
  std::string name;  // "NVIDIA H200"
  std::string uuid;  // "GPU-3f1c…": the value CUDA_VISIBLE_DEVICES takes
  std::string arch;  // compute capability, "9.0"
  int sm_count = 0;  // 0 when the driver library could not say
  std::int64_t memory_mib = 0;
  std::string driver;  // "570.124.06"
  std::string pci_bus_id;

  boost::json::object to_json() const;
};

// The nvidia-smi query discovery runs, and the parser of its answer
// (--format=csv,noheader,nounits; one line a GPU). Errors name the line that is wrong.
inline constexpr std::string_view k_inventory_query =
    "index,name,uuid,compute_cap,memory.total,driver_version,pci.bus_id";
Result<std::vector<GpuInfo>> parse_inventory_csv(std::string_view csv);

// Runs `nvidia_smi` through `env`. not_found: the program is absent; unavailable: it ran
// and failed (no driver loaded, no device); an empty list is an error too (unavailable).
Result<std::vector<GpuInfo>> discover_gpus(const std::string& nvidia_smi, Env& env = Env::system());

// [{"name","uuid","arch", optional "index","sm_count","memory_mib","driver","pci_bus_id"}].
Result<std::vector<GpuInfo>> gpus_from_file(const std::filesystem::path& file);

// Fills sm_count (matched by UUID) from libcuda.so.1 when it can be loaded; false when not.
bool fill_sm_counts(std::vector<GpuInfo>& gpus);

// Clocks, temperature, power and the active clock-event (throttle) reasons of one GPU,
// read with nvidia-smi at the moment of the call; fields that cannot be read are absent.
inline constexpr std::string_view k_telemetry_query =
    "clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit,pstate,clocks_event_reasons.active";
boost::json::object parse_telemetry_csv(std::string_view line);
boost::json::object read_telemetry(const std::string& nvidia_smi, const std::string& uuid, Env& env = Env::system());

// A GPU's exclusive claim among the kport-runner processes of one host: an flock(2) on
// `<dir>/<uuid>.lock`, held while a worker may run jobs on the GPU and released when the
// object goes (or its process dies, the kernel dropping the lock). Two runner processes
// given the same GPU (two services, a copy started by mistake) so never time a case while
// the other runs one there: the second waits, naming the holder the file records (its
// pid, runner name and host). The directory is made when absent, open to every user
// (sticky, like /tmp), so runners of different users share it.
class GpuLock {
 public:
  GpuLock() = default;
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;
  GpuLock(GpuLock&& other) noexcept;
  GpuLock& operator=(GpuLock&& other) noexcept;
  ~GpuLock();

  // Takes the lock without waiting; unavailable, naming the holder, while another holds
  // it; other errors when the file cannot be made. `who` is written into the file.
  static Result<GpuLock> try_take(const std::filesystem::path& dir, const std::string& uuid, const std::string& who);
  bool held() const { return m_fd >= 0; }

 private:
  int m_fd = -1;
};

}  // namespace kport::runner
