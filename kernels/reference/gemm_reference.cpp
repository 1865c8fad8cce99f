#include "reference/reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kport::reference {

void gemm(const float* a, const float* b, double* c, int m, int n, int k) {
  // i-k-j order keeps the inner loop contiguous in b and c; a row of c accumulates in
  // double so the reference is exact to well below any kernel's rounding.
  std::vector<double> row(static_cast<std::size_t>(n));
  for (int i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int p = 0; p < k; ++p) {
      const double av = a[static_cast<std::size_t>(i) * k + p];
      const float* brow = b + static_cast<std::size_t>(p) * n;
      for (int j = 0; j < n; ++j) row[j] += av * brow[j];
    }
    std::copy(row.begin(), row.end(), c + static_cast<std::size_t>(i) * n);
  }
}

void grouped_gemm(const float* a, const float* b, double* d, int groups, int m, int n, int k, const int* counts) {
  for (int g = 0; g < groups; ++g)
    gemm(a + static_cast<std::size_t>(g) * m * k, b + static_cast<std::size_t>(g) * k * n,
         d + static_cast<std::size_t>(g) * m * n, counts ? std::clamp(counts[g], 0, m) : m, n, k);
}

void dequantize_fp8(float* values, const float* scales, int rows, int k, kport::kernels::Fp8Scale mode, bool of_a) {
  const int kblocks = (k + kport::kernels::k_fp8_block - 1) / kport::kernels::k_fp8_block;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < k; ++c)
      values[static_cast<std::size_t>(r) * k + c] *=
          scales[kport::kernels::fp8_scale_index(mode, of_a, r, c / kport::kernels::k_fp8_block, rows, kblocks)];
}

void grouped_gemm_nt(const float* a, const float* b, double* d, int groups, int m, int n, int k, double* rss,
                     const int* counts) {
  for (int g = 0; g < groups; ++g) {
    const std::size_t out = static_cast<std::size_t>(g) * m * n;
    gemm_nt(a + static_cast<std::size_t>(g) * m * k, b + static_cast<std::size_t>(g) * n * k, d + out,
            counts ? std::clamp(counts[g], 0, m) : m, n, k, rss ? rss + out : nullptr);
  }
}

void dequantize_fp8_grouped_b(float* values, const float* scales, int groups, int n, int k,
                              kport::kernels::Fp8Scale mode) {
  for (int g = 0; g < groups; ++g)
    dequantize_fp8(values + static_cast<std::size_t>(g) * n * k,
                   scales + kport::kernels::fp8_group_scale_b_offset(mode, g, n, k), n, k, mode, false);
}

void gemm_nt(const float* a, const float* b, double* c, int m, int n, int k, double* rss) {
  for (int i = 0; i < m; ++i) {
    const float* arow = a + static_cast<std::size_t>(i) * k;
    for (int j = 0; j < n; ++j) {
      const float* brow = b + static_cast<std::size_t>(j) * k;
      double sum = 0.0, squares = 0.0;
      for (int p = 0; p < k; ++p) {
        const double product = static_cast<double>(arow[p]) * brow[p];
        sum += product;
        squares += product * product;
      }
      c[static_cast<std::size_t>(i) * n + j] = sum;
      if (rss) rss[static_cast<std::size_t>(i) * n + j] = std::sqrt(squares);
    }
  }
}

}  // namespace kport::reference
