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

namespace {

// Outputs j0 .. j0 + J - 1 of one row of gemm_nt. Each output's sums run over p in order, as
// one output at a time would add them, so every value is the same double; the J independent
// chains hide the latency of the adds that one chain waits on (about twice as fast at J = 6).
template <int J>
void nt_columns(const float* arow, const float* b, double* crow, double* rrow, int j0, int k) {
  const float* brow[J];
  for (int t = 0; t < J; ++t) brow[t] = b + static_cast<std::size_t>(j0 + t) * k;
  double sum[J] = {}, squares[J] = {};
  for (int p = 0; p < k; ++p) {
    const double av = arow[p];
    for (int t = 0; t < J; ++t) {
      const double product = av * brow[t][p];
      sum[t] += product;
      squares[t] += product * product;
    }
  }
  for (int t = 0; t < J; ++t) {
    crow[j0 + t] = sum[t];
    if (rrow) rrow[j0 + t] = std::sqrt(squares[t]);
  }
}

}  // namespace

void gemm_nt(const float* a, const float* b, double* c, int m, int n, int k, double* rss) {
  constexpr int k_columns = 6;
  for (int i = 0; i < m; ++i) {
    const float* arow = a + static_cast<std::size_t>(i) * k;
    double* crow = c + static_cast<std::size_t>(i) * n;
    double* rrow = rss ? rss + static_cast<std::size_t>(i) * n : nullptr;
    int j = 0;
    for (; j + k_columns <= n; j += k_columns) nt_columns<k_columns>(arow, b, crow, rrow, j, k);
    for (; j < n; ++j) nt_columns<1>(arow, b, crow, rrow, j, k);
  }
}

}  // namespace kport::reference
