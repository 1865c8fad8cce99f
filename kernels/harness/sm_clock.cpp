#include "sm_clock.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

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
constexpr int k_nvml_clock_sm = 1;
constexpr int k_nvml_temperature_gpu = 0;

struct Nvml {
  bool ok = false;
  NvmlByPci by_pci = nullptr;
  NvmlClock clock = nullptr;
  NvmlTemp temp = nullptr;
  NvmlPower power = nullptr;
  NvmlDriver driver = nullptr;

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
    by_pci = reinterpret_cast<NvmlByPci>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<NvmlClock>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    temp = reinterpret_cast<NvmlTemp>(dlsym(lib, "nvmlDeviceGetTemperature"));
    power = reinterpret_cast<NvmlPower>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    driver = reinterpret_cast<NvmlDriver>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    ok = init != nullptr && by_pci != nullptr && clock != nullptr && init() == 0;
  }
};

Nvml& nvml() {
  static Nvml instance;
  return instance;
}

}  // namespace

ClockReading read_clock(int cuda_device) {
  ClockReading r;
  Nvml& n = nvml();
  char bus[32] = {};
  NvmlDevice dev = nullptr;
  if (n.ok && cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) == cudaSuccess &&
      n.by_pci(bus, &dev) == 0) {
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
