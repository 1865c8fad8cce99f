// KPORT_CUDA_CHECK: early-return a cudaError_t from a function that returns one.
//   cudaError_t launch(...) { kernel<<<...>>>(...); KPORT_CUDA_CHECK(cudaGetLastError()); ...}
// Launch functions return the error instead of aborting, so the harness can turn it into a
// result ("illegal address in gemm.simt...") rather than a crash.
#pragma once

#include <cuda_runtime.h>

#define KPORT_CUDA_CHECK(expr)                                        \
  do {                                                                \
    const cudaError_t kport_cuda_status_ = (expr);                    \
    if (kport_cuda_status_ != cudaSuccess) return kport_cuda_status_; \
  } while (0)
