// Problem shapes: parsing "m=4096,n=4096,k=4096", printing, and the per-family grids that
// `check --all` and `bench --all` walk. Host-only; no CUDA calls.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "json_out.h"
#include "kport/kernels/registry.h"

namespace kport::harness {

using kport::kernels::DType;
using kport::kernels::Family;

struct Shape {
  Family family = Family::gemm;
  // gemm, gemm_fp8, grouped_gemm and grouped_gemm_fp8 (m: the rows of each group)
  int m = 0, n = 0, k = 0;
  int groups = 0;  // grouped_gemm, grouped_gemm_fp8: g
  // grouped_gemm, grouped_gemm_fp8: the masked layout's mean valid rows per group, 0 .. m - 1
  // (each group's count from kport/kernels/masked_counts.h); -1 the contiguous layout
  int valid = -1;
  // gemm_fp8 and grouped_gemm_fp8: kport::kernels::Fp8Scale by number (0 tensor, 1 row, 2 block128,
  // 3 block128_ue8m0)
  int scale = 0;
  // attention
  int batch = 0, heads = 0, seq_len = 0, head_dim = 0;
  bool causal = false;
  // rmsnorm, softmax
  int rows = 0, cols = 0;
  // declared: the family's definition and the value of each of its dims, in its order
  const kport::kernels::FamilyDef* def = nullptr;
  std::vector<long long> dims;
};

// Keys per family: gemm m,n,k; gemm_fp8 m,n,k[,scale=0|1|2|3]; grouped_gemm g,m,n,k[,valid=V]
// (m the rows of each of the g groups, and g*m at most 2^30); grouped_gemm_fp8
// g,m,n,k[,scale=0|1|2][,valid=V] (m as grouped_gemm's); attention b,h,l,d[,causal=0|1];
// rmsnorm/softmax rows,cols. Every key must be given once (causal and scale default to 0) and
// sizes must be positive. The grouped families' `valid`, 0 <= valid < m, is the masked layout
// (its mean valid rows per group, at most kport::kernels::k_masked_max_groups groups, any m);
// left out, or m (or 2^30, its declared default), every row is valid: the contiguous layout,
// whose m must be a multiple of kport::kernels::k_grouped_m_align. The canonical text
// (shape_string) always names scale for gemm_fp8 and grouped_gemm_fp8, and valid only for the
// masked layout. A declared family (`def`, required then) takes its dims
// (declared_family.h, parse_declared_shape) and prints every one.
std::optional<HarnessError> parse_shape(Family family, const std::string& text, Shape& out,
                                        const kport::kernels::FamilyDef* def = nullptr);
// Reads a shape's text, "key=value,...", into `values`, item by item: each item key=value, the key
// known (`unknown(key)` gives the reason it is not, or ""), given once, the value an integer,
// then in range (`out_of_range(key, value)` gives the reason it is not, or ""). Returns the
// first problem's reason; the caller wraps it in its bad_shape error.
std::optional<std::string> read_shape_values(
    const std::string& text, const std::function<std::string(const std::string&)>& unknown,
    const std::function<std::string(const std::string&, long long)>& out_of_range,
    std::map<std::string, long long>& values);
std::string shape_string(const Shape& s);
Json shape_json(const Shape& s);

std::optional<Family> parse_family(const std::string& name);
std::optional<DType> parse_dtype(const std::string& name);

// Number of elements of the main output (C, O or y; a declared family's outputs together).
double output_elements(const Shape& s);
// Work per call: 2MNK for gemm and gemm_fp8, 2GMNK for grouped_gemm and grouped_gemm_fp8 (2G*valid*NK in the
// masked layout), 4*B*H*L^2*d for attention (halved when causal), a declared family's `flops` (0 without).
double flop_count(const Shape& s, DType dtype = DType::bf16);
// Bytes each call must move at least: inputs read once plus outputs written once (the masked
// layout's valid rows of A and D and every group's B; a declared family's `bytes` when it
// gives them).
double byte_count(const Shape& s, DType dtype);

// Grids. bench_grid holds the shapes users run (LLM decode and prefill projections, square
// and skinny-K gemm; attention over batch x heads x length, head dim 64 and 128, causal and
// not; rows up to vocabulary size), the H200 baseline shapes among them; every one is timed
// in every dtype an instance runs. check_grid holds every bench shape plus odd edge shapes.
// A declared family's (`def`) are its def's (check: the bench grid when it gives none); a
// library's FamilyOverride of the family replaces either grid.
std::vector<Shape> check_grid(Family family, const kport::kernels::FamilyDef* def = nullptr);
std::vector<Shape> bench_grid(Family family, const kport::kernels::FamilyDef* def = nullptr);

// A Problem with null pointers, sizes from the shape (attention scale 1/sqrt(d), rmsnorm
// eps 1e-6; a declared family's dims and def).
kport::kernels::Problem make_problem(const Shape& s, DType dtype);

}  // namespace kport::harness
