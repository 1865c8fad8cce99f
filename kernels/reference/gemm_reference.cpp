#include "reference/reference.h"

#include <algorithm>
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

}  // namespace kport::reference
