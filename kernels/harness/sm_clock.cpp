#include "sm_clock.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <utility>

namespace kport::harness {

namespace {

// The few NVML entry points used, declared here so no NVML header is needed.
using NvmlDevice = void*;
using NvmlInit = int (*)();
using NvmlByPci = int (*)(const char*, NvmlDevice*);
using NvmlClock = int (*)(NvmlDevice, int, unsigned*);
using NvmlTemp = int (*)(NvmlDevice, int, unsigned*);
using NvmlPower = int (*)(NvmlDevice, unsigned*);
using NvmlDriver = int (*)(char*, unsigned);
using NvmlReasons = int (*)(NvmlDevice, unsigned long long*);
constexpr int k_nvml_clock_sm = 1;
constexpr int k_nvml_temperature_gpu = 0;

struct Nvml {
  bool ok = false;
  NvmlByPci by_pci = nullptr;
  NvmlClock clock = nullptr;
  NvmlTemp temp = nullptr;
  NvmlPower power = nullptr;
  NvmlDriver driver = nullptr;
  NvmlClock max_clock = nullptr;
  NvmlReasons reasons = nullptr;

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
    by_pci = reinterpret_cast<NvmlByPci>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<NvmlClock>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    temp = reinterpret_cast<NvmlTemp>(dlsym(lib, "nvmlDeviceGetTemperature"));
    power = reinterpret_cast<NvmlPower>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    driver = reinterpret_cast<NvmlDriver>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    max_clock = reinterpret_cast<NvmlClock>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    // Renamed in newer drivers; the older name stays exported.
    reasons = reinterpret_cast<NvmlReasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (reasons == nullptr)
      reasons = reinterpret_cast<NvmlReasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    ok = init != nullptr && by_pci != nullptr && clock != nullptr && init() == 0;
  }
};

Nvml& nvml() {
  static Nvml instance;
  return instance;
}

NvmlDevice nvml_device(int cuda_device) {
  Nvml& n = nvml();
  char bus[32] = {};
  NvmlDevice dev = nullptr;
  if (!n.ok || cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess || n.by_pci(bus, &dev) != 0)
    return nullptr;
  return dev;
}

}  // namespace

ClockProbe::ClockProbe(int cuda_device) : m_device(nvml_device(cuda_device)) {
  Nvml& n = nvml();
  unsigned mhz = 0;
  if (m_device != nullptr && n.max_clock != nullptr && n.max_clock(m_device, k_nvml_clock_sm, &mhz) == 0 && mhz > 0)
    m_max_mhz = mhz;
}

std::optional<ClockSample> ClockProbe::sample() const {
  if (m_device == nullptr) return std::nullopt;
  Nvml& n = nvml();
  ClockSample s;
  if (n.clock(m_device, k_nvml_clock_sm, &s.sm_mhz) != 0) return std::nullopt;
  unsigned long long mask = 0;
  if (n.reasons != nullptr && n.reasons(m_device, &mask) == 0) s.event_reasons = mask;
  return s;
}

std::vector<std::string> event_reason_names(unsigned long long mask) {
  static const std::pair<unsigned long long, const char*> k_names[] = {{0x1, "gpu_idle"},
                                                                       {0x2, "applications_clocks"},
                                                                       {0x4, "sw_power_cap"},
                                                                       {0x8, "hw_slowdown"},
                                                                       {0x10, "sync_boost"},
                                                                       {0x20, "sw_thermal_slowdown"},
                                                                       {0x40, "hw_thermal_slowdown"},
                                                                       {0x80, "hw_power_brake_slowdown"},
                                                                       {0x100, "display_clocks"}};
  std::vector<std::string> out;
  unsigned long long known = 0;
  for (const auto& [bit, name] : k_names) {
    known |= bit;
    if (mask & bit) out.emplace_back(name);
  }
  if (mask & ~known) out.emplace_back("other");
  return out;
}

ClockReading read_clock(int cuda_device) {
  ClockReading r;
  Nvml& n = nvml();
  if (NvmlDevice dev = nvml_device(cuda_device); dev != nullptr) {
    unsigned mhz = 0;
    if (n.clock(dev, k_nvml_clock_sm, &mhz) == 0) {
      r.sm_mhz = mhz;
      r.source = "nvml";
    }
    unsigned t = 0, mw = 0;
    if (n.temp != nullptr && n.temp(dev, k_nvml_temperature_gpu, &t) == 0) r.temperature_c = t;
    if (n.power != nullptr && n.power(dev, &mw) == 0) r.power_w = mw / 1000.0;
  }
  if (!r.sm_mhz) {
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, cuda_device) == cudaSuccess && khz > 0) {
      r.sm_mhz = static_cast<unsigned>(khz / 1000);
      r.source = "cuda_max_clock_attribute";
    } else {
      r.source = "none";
    }
  }
  return r;
}

std::optional<std::string> nvml_driver_version() {
  Nvml& n = nvml();
  char text[96] = {};
  if (n.ok && n.driver != nullptr && n.driver(text, sizeof text) == 0) return std::string(text);
  return std::nullopt;
}

Json clock_json(const ClockReading& r) {
  Json j;
  j["sm_mhz"] = r.sm_mhz ? Json(*r.sm_mhz) : Json(nullptr);
  j["source"] = r.source;
  if (r.temperature_c) j["temperature_c"] = *r.temperature_c;
  if (r.power_w) j["power_w"] = *r.power_w;
  return j;
}

}  // namespace kport::harness
