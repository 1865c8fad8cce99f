// CPU references for every op family, accumulating in double.
//
// Inputs are float arrays holding the exact values the kernel saw (bf16/fp16 inputs are
// widened first, which is exact), so the only difference left between a kernel and its
// reference is the kernel's own arithmetic. Layouts follow kport/kernels/registry.h.
// All functions are pure and thread-compatible; sizes must be positive.
#pragma once

#include <cstddef>

#include "kport/kernels/fp8_scales.h"

namespace kport::reference {

// c[m,n] = sum_k a[m,k] * b[k,n]
void gemm(const float* a, const float* b, double* c, int m, int n, int k);

// grouped_gemm's contiguous layout: for each of `groups` groups g, d[g*m + i, j] =
// sum_p a[g*m + i, p] * b[g, p, j], with a [groups*m, k], b [groups, k, n], d [groups*m, n].
// With `counts` (the masked layout, counts[g] in 0..m), only group g's first counts[g] rows
// are computed; its other rows of d are left as they were.
void grouped_gemm(const float* a, const float* b, double* d, int groups, int m, int n, int k,
                  const int* counts = nullptr);

// c[m,n] = sum_k a[m,k] * b[n,k]: both operands K-contiguous, as gemm_fp8 stores them. With
// `rss`, also rss[m,n] = sqrt(sum_k (a[m,k] * b[n,k])^2): the size the sum would have if its
// products did not cancel (what `check` floors an element's magnitude by).
void gemm_nt(const float* a, const float* b, double* c, int m, int n, int k, double* rss = nullptr);

// grouped_gemm_fp8's contiguous layout over dequantized operands: for each group g,
// d[g*m + i, j] = sum_p a[g*m + i, p] * b[g, j, p], with a [groups*m, k], b [groups, n, k]
// (K-contiguous, as gemm_nt's b) and d [groups*m, n]; with `rss`, each element's products'
// root-sum-square beside it, as gemm_nt gives. With `counts`, only the valid rows, as
// grouped_gemm's.
void grouped_gemm_nt(const float* a, const float* b, double* d, int groups, int m, int n, int k, double* rss = nullptr,
                     const int* counts = nullptr);

// Replaces each of the rows x k stored fp8 values in `values` (widened to float) by its
// dequantized value, value * scale, with `scales` laid out as kport::kernels::GemmFp8Args
// says for operand A (`of_a`) or B under `mode`.
void dequantize_fp8(float* values, const float* scales, int rows, int k, kport::kernels::Fp8Scale mode, bool of_a);

// The same for grouped_gemm_fp8's B: `groups` operands of n x k one after the other, group g's
// scales at kport::kernels::fp8_group_scale_b_offset(mode, g, n, k).
void dequantize_fp8_grouped_b(float* values, const float* scales, int groups, int n, int k,
                              kport::kernels::Fp8Scale mode);

// One attention head: q,k,v are [seq_len, head_dim]; o [seq_len, head_dim]; lse [seq_len]
// is the natural log of sum_j exp(scale * q_i.k_j) over the unmasked keys.
void attention_head(const float* q, const float* k, const float* v, double* o, double* lse, int seq_len, int head_dim,
                    bool causal, double scale);

// Full [B,H,L,d] attention: attention_head over every (b, h).
void attention(const float* q, const float* k, const float* v, double* o, double* lse, int batch, int heads,
               int seq_len, int head_dim, bool causal, double scale);

// y = x / sqrt(mean(x^2) + eps) * w over one row of `cols`.
void rmsnorm_row(const float* x, const float* w, double* y, int cols, double eps);
void rmsnorm(const float* x, const float* w, double* y, int rows, int cols, double eps);

// y = exp(x - max) / sum(exp(x - max)) over one row.
void softmax_row(const float* x, double* y, int cols);
void softmax(const float* x, double* y, int rows, int cols);

}  // namespace kport::reference
