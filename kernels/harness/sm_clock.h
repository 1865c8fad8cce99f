// Reads the GPU's current SM clock, temperature and power through NVML, loaded at run time
// with dlopen (the harness must not need the NVML headers or library to build or start).
// Without NVML the clock falls back to cudaDevAttrClockRate, which is the maximum
// (boost) clock, not the current one; `source` says which.
#pragma once

#include <optional>
#include <string>

#include "json_out.h"

namespace kport::harness {

struct ClockReading {
  std::optional<unsigned> sm_mhz;
  std::optional<unsigned> temperature_c;
  std::optional<double> power_w;
  std::string source;  // "nvml", "cuda_max_clock_attribute" or "none"
};

ClockReading read_clock(int cuda_device);
std::optional<std::string> nvml_driver_version();
Json clock_json(const ClockReading& r);

}  // namespace kport::harness
