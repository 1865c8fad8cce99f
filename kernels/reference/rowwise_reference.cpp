#include <algorithm>
#include <cmath>

#include "reference/reference.h"

namespace kport::reference {

void rmsnorm_row(const float* x, const float* w, double* y, int cols, double eps) {
  double sum_sq = 0.0;
  for (int j = 0; j < cols; ++j) sum_sq += static_cast<double>(x[j]) * x[j];
  const double inv = 1.0 / std::sqrt(sum_sq / cols + eps);
  for (int j = 0; j < cols; ++j) y[j] = x[j] * inv * w[j];
}

void rmsnorm(const float* x, const float* w, double* y, int rows, int cols, double eps) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t off = static_cast<std::size_t>(r) * cols;
    rmsnorm_row(x + off, w, y + off, cols, eps);
  }
}

void softmax_row(const float* x, double* y, int cols) {
  double mx = x[0];
  for (int j = 1; j < cols; ++j) mx = std::max(mx, static_cast<double>(x[j]));
  double sum = 0.0;
  for (int j = 0; j < cols; ++j) {
    y[j] = std::exp(x[j] - mx);
    sum += y[j];
  }
  for (int j = 0; j < cols; ++j) y[j] /= sum;
}

void softmax(const float* x, double* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t off = static_cast<std::size_t>(r) * cols;
    softmax_row(x + off, y + off, cols);
  }
}

}  // namespace kport::reference
