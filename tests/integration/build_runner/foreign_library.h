// Two libraries laid out as another team's would be, each with its kport.json:
//   - a CUDA library (src/ops/scale.cu, its own CMakeLists.txt, a harness program that
//     speaks the protocol's `list` and answers no_device to the GPU commands), built by
//     its CMake target for one arch, its variants taken from the harness's `list`;
//   - a command-protocol library: a python3 harness copied into the build folder by a
//     shell command, its variants and two families kport does not ship (swiglu, and
//     layernorm with how it counts its work) declared in the manifest, the target
//     written into it from the manifest's env.
#pragma once

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace kport::testing {

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline void write_cuda_library(const std::filesystem::path& root) {
  write_file(root / "CMakeLists.txt", R"(cmake_minimum_required(VERSION 3.25)
project(scale_lib LANGUAGES CXX CUDA)
set(CMAKE_CUDA_ARCHITECTURES ${SCALE_ARCH})
add_executable(scale_harness src/harness/main.cpp src/ops/scale.cu)
target_compile_definitions(scale_harness PRIVATE SCALE_TARGET="${SCALE_TARGET}")
)");
  write_file(root / "src" / "ops" / "scale.cu", R"(// y = a * x
#include <cuda_runtime.h>

__global__ void scale_kernel(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}

int scale_launch(float* y, const float* x, float a, int n) {
  scale_kernel<<<(n + 255) / 256, 256>>>(y, x, a, n);
  return static_cast<int>(cudaGetLastError());
}
)");
  write_file(root / "src" / "harness" / "main.cpp",
             R"(// The library's harness: `list` without a GPU; every GPU command answers no_device here.
#include <cstdio>
#include <cstring>

int scale_launch(float* y, const float* x, float a, int n);

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "list") == 0) {
    std::printf(
        "{\"target\": \"%s\", \"variants\": ["
        "{\"variant\": \"scale.v1\", \"features\": \"simt\", \"status\": \"built\", \"instances\": ["
        "{\"name\": \"scale.v1.block256\", \"family\": \"scale\", \"variant\": \"v1\", \"features\": [\"simt\"],"
        " \"dtypes\": [\"fp32\"], \"config\": {\"block\": 256}}]},"
        "{\"variant\": \"scale.tc\", \"features\": \"tcgen05\", \"status\": \"not_applicable\","
        " \"reason\": \"needs tcgen05\"}],"
        " \"instance_count\": 1}\n",
        SCALE_TARGET);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("{\"program\": \"scale_harness\", \"version\": \"0.1.0\", \"target\": \"%s\"}\n", SCALE_TARGET);
    return 0;
  }
  if (argc < 0) return scale_launch(nullptr, nullptr, 1.f, 0);  // keeps the kernel in the program
  std::printf("{\"error\": {\"code\": \"no_device\", \"message\": \"this harness runs no GPU command here\"}}\n");
  return 3;
}
)");
  write_file(root / "kport.json", R"({
  "manifest_version": 1,
  "name": "scale-lib",
  "build": {
    "cmake": {
      "source_dir": ".",
      "target": "scale_harness",
      "options": ["-DSCALE_ARCH={arch}", "-DSCALE_TARGET={target}"]
    }
  },
  "targets": ["sm_90a"],
  "families": [
    {"name": "scale", "description": "y = a * x", "dims": ["n"], "dtypes": ["fp32"]}
  ],
  "shapes": {"scale": {"check": ["n=1", "n=1000"], "bench": ["n=16777216"]}},
  "tolerances": {"fp32": {"normwise": 1e-6}}
}
)");
}

inline void write_command_library(const std::filesystem::path& root) {
  write_file(root / "harness" / "kport_harness.py", R"(#!/usr/bin/env python3
# The library's harness: speaks the protocol's list; GPU commands answer no_device here.
import json
import sys

TARGET = "@TARGET@"

if len(sys.argv) > 1 and sys.argv[1] == "list":
    print(json.dumps({
        "target": TARGET,
        "variants": [{
            "variant": "swiglu.fused", "features": "simt", "status": "built",
            "instances": [{"name": "swiglu.fused.w128", "family": "swiglu", "variant": "fused",
                           "features": ["simt"], "dtypes": ["bf16"], "config": {"width": 128}}],
        }, {
            "variant": "layernorm.rows", "features": "simt", "status": "built",
            "instances": [{"name": "layernorm.rows.w256", "family": "layernorm", "variant": "rows",
                           "features": ["simt"], "dtypes": ["bf16", "e4m3"], "config": {"width": 256}},
                          {"name": "layernorm.rows.w64", "family": "layernorm", "variant": "rows",
                           "features": ["simt"], "dtypes": ["bf16", "e4m3"], "config": {"width": 64}}],
        }],
        "instance_count": 3,
    }))
    sys.exit(0)
print(json.dumps({"error": {"code": "no_device", "message": "no GPU here"}}))
sys.exit(3)
)");
  write_file(root / "ops" / "swiglu.py", "# the fused kernel\ndef swiglu():\n    pass\n");
  write_file(root / "kport.json", R"({
  "manifest_version": 1,
  "name": "swiglu-lib",
  "build": {
    "command": ["sh", "-c", "mkdir -p {build_dir} && sed \"s/@TARGET@/$LIB_TARGET/\" harness/kport_harness.py > {build_dir}/kport-harness && chmod +x {build_dir}/kport-harness"],
    "harness": "{build_dir}/kport-harness"
  },
  "targets": "all",
  "variants": [
    {"name": "fused", "family": "swiglu", "features": ["simt"], "sources": ["ops/swiglu.py"]},
    {"name": "tc", "family": "swiglu", "features": ["tcgen05"]},
    {"name": "rows", "family": "layernorm", "features": ["simt"]}
  ],
  "families": [
    {"name": "swiglu", "dims": ["tokens", "hidden"], "dtypes": ["bf16", "e4m3"]},
    {"name": "layernorm", "description": "y = (x - mean(x)) / std(x) * w + b per row",
     "dims": ["rows", "cols"], "dtypes": ["bf16", "e4m3"],
     "bytes": "(2*rows*cols + 2*cols)*bytes_per_elem", "bound": "memory", "example": "rows=4096,cols=8192"}
  ],
  "env": {"LIB_TARGET": "{target}"}
}
)");
}

// A passed row-wise result (rows=4096, cols=8192) on an H200 (sm_90a), as a GPU runner
// uploads it.
inline boost::json::object row_result(const std::string& family, const std::string& variant,
                                      const std::string& instance, const std::string& dtype, double median_us) {
  return boost::json::object{{"target", "sm_90a"},
                             {"family", family},
                             {"variant", variant},
                             {"instance", instance},
                             {"dtype", dtype},
                             {"shape", "rows=4096,cols=8192"},
                             {"toolkit", "13.0"},
                             {"gpu_model", "NVIDIA H200"},
                             {"gpu_uuid", "GPU-1"},
                             {"arch", "9.0"},
                             {"driver", "580.1"},
                             {"status", "passed"},
                             {"normwise_rel_err", 1e-3},
                             {"tolerance", 1e-2},
                             {"nan_inf_count", 0},
                             {"seed", 7},
                             {"median_us", median_us},
                             {"stddev_us", median_us * 0.002},
                             {"samples", 100}};
}

}  // namespace kport::testing
