#include "gpu_context.h"

#include <chrono>
#include <thread>

#include "sm_clock.h"
#include "target_compat.h"
#include "target_info.h"

namespace kport::harness {

GpuContext::~GpuContext() {
  if (flush != nullptr) cudaFree(flush);
  if (flush_sink != nullptr) cudaFree(flush_sink);
  if (block_flag != nullptr) cudaFreeHost(block_flag);
  if (cublas != nullptr) cublasDestroy(cublas);
  if (stream != nullptr) cudaStreamDestroy(stream);
}

std::string cuda_error_text(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

std::optional<HarnessError> open_gpu(GpuContext& ctx, bool need_flush_buffer, bool check_target) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    return HarnessError{"no_device",
                        "no CUDA device available (" +
                            (err != cudaSuccess ? cuda_error_text(err) : std::string("0 devices")) +
                            "); run on a machine with an NVIDIA GPU and driver",
                        k_exit_no_device};
  }
  ctx.device = 0;
  if (cudaGetDeviceProperties(&ctx.prop, ctx.device) != cudaSuccess)
    return HarnessError{"no_device", "cannot read the properties of device 0", k_exit_no_device};
  const TargetInfo& info = target_info();
  if (check_target && !target_runs_on(info.target, ctx.prop.major, ctx.prop.minor)) {
    return HarnessError{"target_mismatch",
                        "this harness holds code for " + info.target + " only; device 0 (" + ctx.prop.name +
                            ") is compute capability " + std::to_string(ctx.prop.major) + "." +
                            std::to_string(ctx.prop.minor) + "; use the harness built for that target",
                        k_exit_no_device};
  }
  cudaError_t e = cudaSetDevice(ctx.device);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) return HarnessError{"cuda_error", "cannot create a stream: " + cuda_error_text(e), k_exit_cuda};
  if (cublasCreate(&ctx.cublas) != CUBLAS_STATUS_SUCCESS)
    return HarnessError{"cuda_error", "cublasCreate failed", k_exit_cuda};
  cublasSetStream(ctx.cublas, ctx.stream);
  if (need_flush_buffer) {
    // Twice the L2, at least 64 MiB: every sample starts with a cold L2.
    const std::size_t l2 = static_cast<std::size_t>(ctx.prop.l2CacheSize);
    ctx.flush_bytes = l2 * 2 > (64u << 20) ? l2 * 2 : (64u << 20);
    e = cudaMalloc(&ctx.flush, ctx.flush_bytes);
    if (e == cudaSuccess) e = cudaMemset(ctx.flush, 0x5A, ctx.flush_bytes);
    if (e == cudaSuccess) e = cudaMalloc(&ctx.flush_sink, sizeof(unsigned));
    if (e == cudaSuccess) e = cudaHostAlloc(&ctx.block_flag, sizeof(int), cudaHostAllocMapped);
    if (e != cudaSuccess)
      return HarnessError{"cuda_error", "cannot allocate the L2 flush buffer: " + cuda_error_text(e), k_exit_cuda};
  }
  return std::nullopt;
}

Json device_json(const GpuContext& ctx) {
  const cudaDeviceProp& p = ctx.prop;
  int driver = 0, runtime = 0, clock_khz = 0, mem_khz = 0, bus_width = 0, smem_optin = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ctx.device);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, ctx.device);
  cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, ctx.device);
  cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device);
  char uuid[64];
  char* u = uuid;
  u += std::snprintf(u, 8, "GPU-");
  for (int i = 0; i < 16; ++i) {
    u += std::snprintf(u, 4, "%02x", static_cast<unsigned char>(p.uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) *u++ = '-';
  }
  *u = 0;
  char bus[32] = {};
  cudaDeviceGetPCIBusId(bus, sizeof bus, ctx.device);
  const auto fmt_version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  Json j;
  j["name"] = p.name;
  j["uuid"] = uuid;
  j["pci_bus_id"] = bus;
  j["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
  j["sm_count"] = p.multiProcessorCount;
  j["memory_bytes"] = p.totalGlobalMem;
  j["l2_bytes"] = p.l2CacheSize;
  j["max_smem_per_block_optin"] = smem_optin;
  j["memory_bus_width_bits"] = bus_width;
  j["memory_clock_mhz"] = mem_khz / 1000;
  j["sm_clock_max_mhz"] = clock_khz / 1000;
  j["driver_api_version"] = fmt_version(driver);
  j["runtime_version"] = fmt_version(runtime);
  if (auto v = nvml_driver_version()) j["driver_version"] = *v;
  j["clock"] = clock_json(read_clock(ctx.device));
  j["harness_target"] = target_info().target;
  j["harness_target_runs_here"] = target_runs_on(target_info().target, p.major, p.minor);
  return j;
}

cudaError_t wait_with_watchdog(cudaEvent_t event, double timeout_s, bool& timed_out) {
  timed_out = false;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaEventQuery(event);
    if (q != cudaErrorNotReady) return q;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s) {
      timed_out = true;
      return cudaErrorTimeout;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.01 ? 5 : 200));
  }
}

bool error_is_sticky(cudaError_t err) {
  if (err == cudaSuccess) return false;
  cudaGetLastError();  // clears a non-sticky error
  return cudaDeviceSynchronize() != cudaSuccess;
}

}  // namespace kport::harness
