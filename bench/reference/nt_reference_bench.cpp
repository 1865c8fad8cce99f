// The double reference that `check` runs on the CPU for gemm_fp8 and grouped_gemm_fp8
// problems up to 2^27 multiply-adds (kport::reference::gemm_nt with each element's
// root-sum-square), over the shapes one gemm_fp8 instance's check grid sends there: each of
// the grid's CPU-checked m x n x k once per dtype and scale mode (2 x 4). Prints the time and
// a checksum of every output, so two builds of the reference can be timed against each other
// and shown to give the same doubles.
//
//   nt_reference_bench [M,N,K ...]     (default: the gemm_fp8 check grid's CPU shapes)
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "reference/reference.h"

int main(int argc, char** argv) {
  std::vector<std::array<int, 3>> shapes;
  for (int i = 1; i < argc; ++i) {
    std::array<int, 3> s{};
    if (std::sscanf(argv[i], "%d,%d,%d", &s[0], &s[1], &s[2]) != 3 || s[0] < 1 || s[1] < 1 || s[2] < 1) {
      std::fprintf(stderr, "nt_reference_bench: '%s' is not M,N,K\n", argv[i]);
      return 2;
    }
    shapes.push_back(s);
  }
  if (shapes.empty())  // `kport-harness-sm_90a check --all --filter gemm_fp8.wgmma_tma.128x128x128_s6 --plan`
    shapes = {{8, 2112, 7168}, {33, 4104, 528}, {1, 4096, 7168}, {257, 129, 384},
              {127, 255, 128}, {3, 7, 16},      {1, 1, 128}};
  constexpr int k_modes = 8;  // e4m3 and e5m2, each in four scale modes
  std::uint64_t checksum = 0;
  double macs = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& [m, n, k] : shapes) {
    std::mt19937 rng(static_cast<unsigned>(m * 31 + n * 17 + k));
    std::uniform_real_distribution<float> value(-448.0f, 448.0f);
    std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
    for (float& x : a) x = value(rng);
    for (float& x : b) x = value(rng);
    std::vector<double> d(static_cast<std::size_t>(m) * n), rss(d.size());
    for (int mode = 0; mode < k_modes; ++mode) {
      kport::reference::gemm_nt(a.data(), b.data(), d.data(), m, n, k, rss.data());
      macs += double(m) * n * k;
    }
    for (std::size_t i = 0; i < d.size(); ++i) {
      std::uint64_t bits[2];
      std::memcpy(&bits[0], &d[i], 8);
      std::memcpy(&bits[1], &rss[i], 8);
      checksum = (checksum ^ bits[0]) * 1099511628211ull;
      checksum = (checksum ^ bits[1]) * 1099511628211ull;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.3f s, %.3f ns per multiply-add, %.0f multiply-adds, checksum %016llx\n", secs, secs * 1e9 / macs, macs,
              static_cast<unsigned long long>(checksum));
  return 0;
}
