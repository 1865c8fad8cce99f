// The GPU side of a harness run: device, stream, cuBLAS handle, an L2-flush buffer, and the
// launch-and-wait with a watchdog that turns a hang or a kernel fault into a result.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <optional>
#include <string>

#include "json_out.h"
#include "target_compat.h"

namespace kport::harness {

struct GpuContext {
  int device = 0;
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  void* flush = nullptr;  // larger than L2; written between timed samples
  std::size_t flush_bytes = 0;
  unsigned* flush_sink = nullptr;  // one word the read flush may write
  int* block_flag = nullptr;       // mapped pinned word releasing the stream blocker
  ~GpuContext();
};

// Opens device 0 and checks this binary's target can run on it. Errors: no_device (exit 3),
// target_mismatch (exit 3), cuda_error.
std::optional<HarnessError> open_gpu(GpuContext& ctx, bool need_flush_buffer, bool check_target = true);

// Device facts for the `device` command and the header of every report.
Json device_json(const GpuContext& ctx);

// Waits for `event` (recorded after a launch) for at most timeout_s. Returns the event's
// error, or cudaErrorTimeout (as `timed_out`) when it did not complete in time.
cudaError_t wait_with_watchdog(cudaEvent_t event, double timeout_s, bool& timed_out);

// After a failed launch or wait: true when the error left the context unusable
// (illegal address, launch failure, ...), so the process must report and end.
bool error_is_sticky(cudaError_t err);

std::string cuda_error_text(cudaError_t err);

}  // namespace kport::harness
