#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "reference/reference.h"

namespace kport::reference {

void attention_head(const float* q, const float* k, const float* v, double* o, double* lse, int seq_len, int head_dim,
                    bool causal, double scale) {
  std::vector<double> s(static_cast<std::size_t>(seq_len));
  for (int i = 0; i < seq_len; ++i) {
    const int keys = causal ? i + 1 : seq_len;  // causal: key j <= query i
    double mx = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < keys; ++j) {
      double dot = 0.0;
      for (int t = 0; t < head_dim; ++t)
        dot += static_cast<double>(q[static_cast<std::size_t>(i) * head_dim + t]) *
               k[static_cast<std::size_t>(j) * head_dim + t];
      s[j] = dot * scale;
      mx = std::max(mx, s[j]);
    }
    double sum = 0.0;
    for (int j = 0; j < keys; ++j) {
      s[j] = std::exp(s[j] - mx);
      sum += s[j];
    }
    double* orow = o + static_cast<std::size_t>(i) * head_dim;
    std::fill(orow, orow + head_dim, 0.0);
    for (int j = 0; j < keys; ++j) {
      const double p = s[j] / sum;
      const float* vrow = v + static_cast<std::size_t>(j) * head_dim;
      for (int t = 0; t < head_dim; ++t) orow[t] += p * vrow[t];
    }
    lse[i] = mx + std::log(sum);
  }
}

void attention(const float* q, const float* k, const float* v, double* o, double* lse, int batch, int heads,
               int seq_len, int head_dim, bool causal, double scale) {
  const std::size_t head_elems = static_cast<std::size_t>(seq_len) * head_dim;
  for (std::size_t bh = 0; bh < static_cast<std::size_t>(batch) * heads; ++bh)
    attention_head(q + bh * head_elems, k + bh * head_elems, v + bh * head_elems, o + bh * head_elems,
                   lse + bh * seq_len, seq_len, head_dim, causal, scale);
}

}  // namespace kport::reference
