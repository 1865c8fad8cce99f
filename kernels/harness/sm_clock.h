// Reads the GPU's current SM clock, temperature and power through NVML, loaded at run time
// with dlopen (the harness must not need the NVML headers or library to build or start).
// Without NVML the clock falls back to cudaDevAttrClockRate, which is the maximum
// (boost) clock, not the current one; `source` says which.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "json_out.h"

namespace kport::harness {

struct ClockReading {
  std::optional<unsigned> sm_mhz;
  std::optional<unsigned> temperature_c;
  std::optional<double> power_w;
  std::string source;  // "nvml", "cuda_max_clock_attribute" or "none"
};

ClockReading read_clock(int cuda_device);

// Per-sample clock reads for the bench loop: the NVML handle is looked up once. Without
// NVML, available() is false and nothing is read.
struct ClockSample {
  unsigned sm_mhz = 0;
  std::optional<unsigned long long> event_reasons;  // NVML clock-event (throttle) reason bits
};

class ClockProbe {
 public:
  explicit ClockProbe(int cuda_device);
  bool available() const { return m_device != nullptr; }
  // The highest SM clock the GPU may run at (its boost clock), when NVML knows it.
  std::optional<unsigned> max_sm_mhz() const { return m_max_mhz; }
  std::optional<ClockSample> sample() const;

 private:
  void* m_device = nullptr;
  std::optional<unsigned> m_max_mhz;
};

// Names of the set bits of an NVML clock-event reason mask ("sw_power_cap", ...).
std::vector<std::string> event_reason_names(unsigned long long mask);
std::optional<std::string> nvml_driver_version();
Json clock_json(const ClockReading& r);

}  // namespace kport::harness
