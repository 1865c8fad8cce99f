#include "shapes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <sstream>

#include "declared_family.h"
#include "kport/kernels/masked_counts.h"

namespace kport::harness {

using kport::kernels::Problem;

namespace {

constexpr long long k_max_dim = 1LL << 30;

HarnessError bad_shape(const std::string& text, const std::string& why, Family family) {
  const char* expected = family == Family::gemm               ? "m=4096,n=4096,k=4096"
                         : family == Family::gemm_fp8         ? "m=4096,n=7168,k=16384,scale=2"
                         : family == Family::grouped_gemm     ? "g=4,m=8192,n=4096,k=7168"
                         : family == Family::grouped_gemm_fp8 ? "g=4,m=8192,n=4096,k=7168,scale=2"
                         : family == Family::attention        ? "b=4,h=16,l=4096,d=128,causal=1"
                                                              : "rows=32768,cols=4096";
  return {"bad_shape",
          "shape '" + text + "' for " + kport::kernels::family_name(family) + ": " + why + " (expected e.g. " +
              expected + ")",
          k_exit_usage};
}

}  // namespace

std::optional<std::string> read_shape_values(
    const std::string& text, const std::function<std::string(const std::string&)>& unknown,
    const std::function<std::string(const std::string&, long long)>& out_of_range,
    std::map<std::string, long long>& values) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) return "'" + item + "' is not key=value";
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (std::string why = unknown(key); !why.empty()) return why;
    if (values.count(key)) return "key '" + key + "' given twice";
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size()) return "'" + value + "' is not an integer";
    if (std::string why = out_of_range(key, v); !why.empty()) return why;
    values[key] = v;
  }
  return std::nullopt;
}

std::optional<HarnessError> parse_shape(Family family, const std::string& text, Shape& out,
                                        const kport::kernels::FamilyDef* def) {
  if (family == Family::declared) {
    if (def == nullptr)
      return HarnessError{"bad_shape", "shape '" + text + "': a declared family without its definition", k_exit_usage};
    return parse_declared_shape(*def, text, out);
  }
  std::vector<std::string> keys;
  switch (family) {
    case Family::gemm: keys = {"m", "n", "k"}; break;
    case Family::gemm_fp8: keys = {"m", "n", "k", "scale"}; break;
    case Family::grouped_gemm: keys = {"g", "m", "n", "k", "valid"}; break;
    case Family::grouped_gemm_fp8: keys = {"g", "m", "n", "k", "scale", "valid"}; break;
    case Family::attention: keys = {"b", "h", "l", "d", "causal"}; break;
    default: keys = {"rows", "cols"}; break;
  }
  std::map<std::string, long long> values;
  const auto unknown = [&](const std::string& key) {
    return std::find(keys.begin(), keys.end(), key) == keys.end() ? "unknown key '" + key + "'" : std::string();
  };
  const auto out_of_range = [](const std::string& key, long long v) -> std::string {
    if (key == "causal") return v != 0 && v != 1 ? "causal must be 0 or 1" : "";
    if (key == "scale")
      return v < 0 || v >= kport::kernels::k_fp8_scale_modes
                 ? "scale must be 0 (per tensor), 1 (row-wise), 2 (128-blocks, fp32 scales) or 3 (128-blocks, "
                   "power-of-two scales also as UE8M0 bytes)"
                 : "";
    if (key == "valid")
      return v < 0 || v > k_max_dim ? "valid (the mean valid rows per group) must be between 0 and m" : "";
    return v <= 0 || v > k_max_dim ? key + " must be between 1 and 2^30" : "";
  };
  if (auto why = read_shape_values(text, unknown, out_of_range, values)) return bad_shape(text, *why, family);
  for (const auto& k : keys)
    if (k != "causal" && k != "scale" && k != "valid" && !values.count(k))
      return bad_shape(text, "missing key '" + k + "'", family);
  Shape s;
  s.family = family;
  const auto get = [&](const char* k) { return static_cast<int>(values[k]); };
  switch (family) {
    case Family::gemm: s.m = get("m"), s.n = get("n"), s.k = get("k"); break;
    case Family::gemm_fp8:
      s.m = get("m"), s.n = get("n"), s.k = get("k");
      s.scale = values.count("scale") ? get("scale") : 0;
      break;
    case Family::grouped_gemm:
    case Family::grouped_gemm_fp8:
      s.groups = get("g"), s.m = get("m"), s.n = get("n"), s.k = get("k");
      if (family == Family::grouped_gemm_fp8) s.scale = values.count("scale") ? get("scale") : 0;
      // valid = m, or 2^30 (the declared default), is every row: the contiguous layout, written
      // without it.
      if (values.count("valid") && values["valid"] != s.m && values["valid"] != k_max_dim) {
        s.valid = get("valid");
        if (s.valid > s.m)
          return bad_shape(text,
                           "valid (the mean valid rows per group) must be between 0 and m=" + std::to_string(s.m) +
                               " (valid=m, or no valid, is the contiguous layout: every row valid)",
                           family);
        if (s.groups > kport::kernels::k_masked_max_groups)
          return bad_shape(text,
                           "the masked layout (valid < m) takes at most " +
                               std::to_string(kport::kernels::k_masked_max_groups) + " groups",
                           family);
      }
      // The contiguous layout's contract: no tile of rows holds two groups' rows. The masked
      // layout's groups are each read as their own [m, k] rows: any m.
      if (s.valid < 0 && s.m % kport::kernels::k_grouped_m_align != 0)
        return bad_shape(text,
                         "m is the rows of each group and must be a multiple of " +
                             std::to_string(kport::kernels::k_grouped_m_align) +
                             " (the contiguous layout's row alignment; pad each group's rows to it, or give "
                             "valid < m for the masked layout, which takes any m)",
                         family);
      if (double(s.groups) * s.m > double(k_max_dim))
        return bad_shape(text, "g*m (the rows of A and D) must be at most 2^30", family);
      break;
    case Family::attention:
      s.batch = get("b"), s.heads = get("h"), s.seq_len = get("l"), s.head_dim = get("d");
      s.causal = values.count("causal") && values["causal"] == 1;
      break;
    default: s.rows = get("rows"), s.cols = get("cols"); break;
  }
  // Element counts must fit the 64-bit indexing of buffers and stay allocatable.
  if (output_elements(s) > 4e10) return bad_shape(text, "problem too large", family);
  out = s;
  return std::nullopt;
}

std::string shape_string(const Shape& s) {
  std::ostringstream o;
  switch (s.family) {
    case Family::gemm: o << "m=" << s.m << ",n=" << s.n << ",k=" << s.k; break;
    case Family::gemm_fp8: o << "m=" << s.m << ",n=" << s.n << ",k=" << s.k << ",scale=" << s.scale; break;
    case Family::grouped_gemm:
      o << "g=" << s.groups << ",m=" << s.m << ",n=" << s.n << ",k=" << s.k;
      if (s.valid >= 0) o << ",valid=" << s.valid;
      break;
    case Family::grouped_gemm_fp8:
      o << "g=" << s.groups << ",m=" << s.m << ",n=" << s.n << ",k=" << s.k << ",scale=" << s.scale;
      if (s.valid >= 0) o << ",valid=" << s.valid;
      break;
    case Family::attention:
      o << "b=" << s.batch << ",h=" << s.heads << ",l=" << s.seq_len << ",d=" << s.head_dim
        << ",causal=" << (s.causal ? 1 : 0);
      break;
    case Family::declared:
      for (std::size_t i = 0; s.def != nullptr && i < s.def->dims.size() && i < s.dims.size(); ++i)
        o << (i ? "," : "") << s.def->dims[i].name << "=" << s.dims[i];
      break;
    default: o << "rows=" << s.rows << ",cols=" << s.cols; break;
  }
  return o.str();
}

Json shape_json(const Shape& s) {
  switch (s.family) {
    case Family::gemm: return {{"m", s.m}, {"n", s.n}, {"k", s.k}};
    case Family::gemm_fp8: return {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"scale", s.scale}};
    case Family::grouped_gemm: {
      Json j = {{"g", s.groups}, {"m", s.m}, {"n", s.n}, {"k", s.k}};
      if (s.valid >= 0) j["valid"] = s.valid;
      return j;
    }
    case Family::grouped_gemm_fp8: {
      Json j = {{"g", s.groups}, {"m", s.m}, {"n", s.n}, {"k", s.k}, {"scale", s.scale}};
      if (s.valid >= 0) j["valid"] = s.valid;
      return j;
    }
    case Family::attention:
      return {{"b", s.batch}, {"h", s.heads}, {"l", s.seq_len}, {"d", s.head_dim}, {"causal", s.causal}};
    case Family::declared: {
      Json j = Json::object();
      for (std::size_t i = 0; s.def != nullptr && i < s.def->dims.size() && i < s.dims.size(); ++i)
        j[s.def->dims[i].name] = s.dims[i];
      return j;
    }
    default: return {{"rows", s.rows}, {"cols", s.cols}};
  }
}

std::optional<Family> parse_family(const std::string& name) {
  for (Family f : {Family::gemm, Family::attention, Family::rmsnorm, Family::softmax, Family::gemm_fp8,
                   Family::grouped_gemm, Family::grouped_gemm_fp8})
    if (name == kport::kernels::family_name(f)) return f;
  return std::nullopt;
}

std::optional<DType> parse_dtype(const std::string& name) {
  if (name == "bf16") return DType::bf16;
  if (name == "fp16" || name == "f16") return DType::f16;
  if (name == "fp32" || name == "f32") return DType::f32;
  if (name == "e4m3" || name == "fp8_e4m3") return DType::e4m3;
  if (name == "e5m2" || name == "fp8_e5m2") return DType::e5m2;
  return std::nullopt;
}

double output_elements(const Shape& s) {
  switch (s.family) {
    case Family::gemm:
    case Family::gemm_fp8: return double(s.m) * s.n;
    case Family::grouped_gemm:
    case Family::grouped_gemm_fp8: return double(s.groups) * s.m * s.n;
    case Family::attention: return double(s.batch) * s.heads * s.seq_len * s.head_dim;
    case Family::declared: {
      double n = 0;
      for (std::size_t i = 0; s.def != nullptr && i < s.def->tensors.size(); ++i)
        if (s.def->tensors[i].role == kport::kernels::TensorRole::output) n += tensor_elements(*s.def, i, s.dims);
      return n;
    }
    default: return double(s.rows) * s.cols;
  }
}

double flop_count(const Shape& s, DType dtype) {
  switch (s.family) {
    case Family::gemm:
    case Family::gemm_fp8: return 2.0 * s.m * s.n * s.k;
    case Family::grouped_gemm:
    case Family::grouped_gemm_fp8: return 2.0 * s.groups * (s.valid >= 0 ? s.valid : s.m) * double(s.n) * s.k;
    case Family::attention: {
      const double full = 4.0 * s.batch * s.heads * double(s.seq_len) * s.seq_len * s.head_dim;
      return s.causal ? full / 2 : full;
    }
    case Family::declared:
      return s.def != nullptr && s.def->flops != nullptr ? s.def->flops(make_problem(s, dtype).declared) : 0.0;
    default: return 0.0;
  }
}

double byte_count(const Shape& s, DType dtype) {
  const double e = kport::kernels::dtype_size(dtype);
  const int rows = s.valid >= 0 ? s.valid : s.m;  // the grouped families' rows of each group
  switch (s.family) {
    case Family::gemm: return e * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
    case Family::gemm_fp8:  // fp8 A and B read, bf16 D written (scales are negligible)
      return e * (double(s.m) * s.k + double(s.k) * s.n) + 2.0 * s.m * double(s.n);
    case Family::grouped_gemm:  // every group's A, B and D once, as gemm counts them (valid rows when masked)
      return e * s.groups * (double(rows) * s.k + double(s.k) * s.n + double(rows) * s.n);
    case Family::grouped_gemm_fp8:  // every group's fp8 A and B read, its bf16 D written
      return s.groups * (e * (double(rows) * s.k + double(s.k) * s.n) + 2.0 * rows * double(s.n));
    case Family::attention:
      return e * 4.0 * s.batch * s.heads * double(s.seq_len) * s.head_dim +
             4.0 * s.batch * s.heads * double(s.seq_len);  // q,k,v read; o, lse written
    case Family::rmsnorm: return e * (2.0 * s.rows * double(s.cols) + s.cols);
    case Family::declared: {
      if (s.def == nullptr) return 0.0;
      if (s.def->bytes != nullptr) return s.def->bytes(make_problem(s, dtype).declared);
      double bytes = 0;  // every tensor once: inputs read, outputs written
      for (std::size_t i = 0; i < s.def->tensors.size(); ++i)
        bytes += tensor_elements(*s.def, i, s.dims) * kport::kernels::dtype_size(tensor_dtype(*s.def, i, dtype));
      return bytes;
    }
    default: return e * 2.0 * s.rows * double(s.cols);
  }
}

namespace {
Shape gemm_shape(int m, int n, int k) {
  Shape s;
  s.family = Family::gemm, s.m = m, s.n = n, s.k = k;
  return s;
}
Shape fp8_shape(int m, int n, int k, int scale) {
  Shape s = gemm_shape(m, n, k);
  s.family = Family::gemm_fp8, s.scale = scale;
  return s;
}
Shape grouped_shape(int g, int m, int n, int k) {
  Shape s = gemm_shape(m, n, k);
  s.family = Family::grouped_gemm, s.groups = g;
  return s;
}
Shape grouped_fp8_shape(int g, int m, int n, int k, int scale) {
  Shape s = grouped_shape(g, m, n, k);
  s.family = Family::grouped_gemm_fp8, s.scale = scale;
  return s;
}
// The masked layout: g groups of capacity m, valid rows per group on average.
Shape masked_shape(int g, int m, int n, int k, int valid) {
  Shape s = grouped_shape(g, m, n, k);
  s.valid = valid;
  return s;
}
Shape masked_fp8_shape(int g, int m, int n, int k, int scale, int valid) {
  Shape s = grouped_fp8_shape(g, m, n, k, scale);
  s.valid = valid;
  return s;
}
Shape attn_shape(int b, int h, int l, int d, bool causal) {
  Shape s;
  s.family = Family::attention, s.batch = b, s.heads = h, s.seq_len = l, s.head_dim = d;
  s.causal = causal;
  return s;
}
Shape row_shape(Family f, int rows, int cols) {
  Shape s;
  s.family = f, s.rows = rows, s.cols = cols;
  return s;
}
// Shapes given as text (a declared family's grid, a library's override); the harness checked
// every one at start (check_declared_families), so one that does not parse is left out.
std::vector<Shape> parsed_grid(Family family, const kport::kernels::FamilyDef* def,
                               const std::vector<std::string>& texts) {
  std::vector<Shape> grid;
  for (const std::string& text : texts) {
    Shape s;
    if (!parse_shape(family, text, s, def)) grid.push_back(s);
  }
  return grid;
}
const kport::kernels::FamilyOverride* override_of(Family family, const kport::kernels::FamilyDef* def) {
  return find_override(family == Family::declared ? (def != nullptr ? def->name : std::string())
                                                  : kport::kernels::family_name(family));
}
}  // namespace

std::vector<Shape> bench_grid(Family family, const kport::kernels::FamilyDef* def) {
  if (const auto* o = override_of(family, def); o != nullptr && !o->bench_grid.empty())
    return parsed_grid(family, def, o->bench_grid);
  std::vector<Shape> grid;
  switch (family) {
    case Family::gemm: {
      // Decode (a few tokens against a model's projections), prefill, square and skinny-K:
      // the projections of 4096-hidden models (attention 4096x4096, MLP up 14336x4096 and
      // down 4096x14336), so a selection for any shape has a measured neighbour on each
      // side of the tile and wave boundaries that decide it. Batches of 4 and 8 tokens: there
      // the gemv's time barely grows with M while a tile's does not grow at all, and no other
      // batch stands in for them (from 1 and 16 rows the tile kernels were picked at 4 rows,
      // 15-30 % slower than the gemv). 128 rows (a prefill chunk): from 256 rows the wave model
      // halved the 64-row tile's figure and named it at 4096x4096, where the 128x64 split tile
      // is faster; the projections' own answers there said p90 15 %, worst 73 % off.
      const int nk[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
      for (int m : {1, 4, 8, 16, 64, 128, 256})
        for (const auto& p : nk) grid.push_back(gemm_shape(m, p[0], p[1]));
      // Decode against an 8192-hidden model's MLP (up 28672x8192, down 8192x28672): 470 MB of
      // weights, four times the largest projection above, where the gemv streams at 3 TB/s and
      // a tile kernel's 128 blocks at about 2.3. No smaller projection shows that: moved from
      // 4096x14336 by their steps, a 128x128 tile split in two was named at 4 rows, 32 % slower
      // than the gemv.
      for (int m : {1, 4, 8, 64})
        for (const auto& p : {std::array<int, 2>{28672, 8192}, std::array<int, 2>{8192, 28672}})
          grid.push_back(gemm_shape(m, p[0], p[1]));
      for (int m : {1024, 4096})
        for (const auto& p :
             {std::array<int, 2>{14336, 4096}, std::array<int, 2>{4096, 14336}, std::array<int, 2>{6144, 4096}})
          grid.push_back(gemm_shape(m, p[0], p[1]));
      for (int s : {1024, 2048, 3072, 4096, 6144, 8192}) grid.push_back(gemm_shape(s, s, s));
      // Extents that are not whole tiles, where the kernels' edge paths decide.
      for (int s : {1000, 2500, 5000}) grid.push_back(gemm_shape(s, s, s));
      grid.push_back(gemm_shape(1000, 14336, 4096));
      grid.push_back(gemm_shape(3000, 4096, 4096));
      grid.push_back(gemm_shape(4096, 4096, 512));
      grid.push_back(gemm_shape(8192, 8192, 1024));
      grid.push_back(gemm_shape(128, 8192, 8192));
      break;
    }
    case Family::gemm_fp8:
      // The fp8 peers' shapes (H200-BASELINES): prefill projections of a 7168-hidden model,
      // a square and decode batches, in each scaling mode. Decode batches from 1 to 256 rows
      // across narrow and wide N and short and long K: under one wave of tiles the fastest
      // tile changes with N and K, and a single decode shape answered all of them (the 128x128
      // tile's figure there stood in for shapes where the 128x64 tile was 26-37 % faster). Each
      // (N, K) pair has batches on both sides of a half tile (64 rows), where the instances'
      // order changes: a batch of 32 at N 4096, K 7168 was answered from N 7168, K 2048, where
      // four tiles were within 3 %, and took one 16 % slower than the fastest. Block scales
      // come in both forms: fp32 (Hopper's promoting kernels) and UE8M0 (Blackwell's
      // block-scaled MMA; the Hopper kernels read its fp32 copy).
      for (int scale : {0, 1, 2, 3})
        for (const auto& mnk : {std::array<int, 3>{4096, 7168, 16384}, std::array<int, 3>{4096, 4096, 7168},
                                std::array<int, 3>{4096, 2112, 7168}, std::array<int, 3>{8192, 8192, 8192},
                                std::array<int, 3>{64, 7168, 16384}, std::array<int, 3>{128, 7168, 16384},
                                std::array<int, 3>{128, 4096, 7168}, std::array<int, 3>{64, 4096, 7168},
                                std::array<int, 3>{1, 4096, 7168}, std::array<int, 3>{8, 2112, 7168},
                                std::array<int, 3>{32, 7168, 2048}, std::array<int, 3>{256, 7168, 16384}})
          grid.push_back(fp8_shape(mnk[0], mnk[1], mnk[2], scale));
      break;
    case Family::grouped_gemm:
      // The target (4 experts of M 8192, N 4096, K 7168, which torch._grouped_mm runs
      // at 657 TFLOP/s on the H200), then MoE layers of 8 experts: up/gate projections
      // (N 2x the expert width) and down projections (K the expert width) of 7168-, 4096- and
      // 2048-hidden models, at 512 to 2048 tokens per expert.
      for (const auto& gmnk : {std::array<int, 4>{4, 8192, 4096, 7168}, std::array<int, 4>{8, 2048, 4096, 7168},
                               std::array<int, 4>{8, 2048, 7168, 2048}, std::array<int, 4>{8, 1024, 4096, 7168},
                               std::array<int, 4>{8, 1024, 7168, 2048}, std::array<int, 4>{8, 512, 4096, 7168},
                               std::array<int, 4>{8, 512, 7168, 2048}, std::array<int, 4>{8, 1024, 2048, 4096},
                               std::array<int, 4>{8, 2048, 4096, 2048}})
        grid.push_back(grouped_shape(gmnk[0], gmnk[1], gmnk[2], gmnk[3]));
      // Decode in the masked layout: 8 experts of a 7168-hidden model with room for 256 tokens
      // each, 64 on average (up/gate, N 4096, K 7168), and 32 experts of 128 with 16 each (down,
      // N 7168, K 2048), the counts read on the device.
      grid.push_back(masked_shape(8, 256, 4096, 7168, 64));
      grid.push_back(masked_shape(32, 128, 7168, 2048, 16));
      break;
    case Family::grouped_gemm_fp8:
      // grouped_gemm's target in fp8 (4 experts of M 8192, N 4096, K 7168), then the MoE layers
      // of a 7168-hidden model with 2048-wide experts, 8 of them at 1024 and 256 tokens each:
      // up/gate (N 4096, K 7168) and down (N 7168, K 2048) projections; every scaling mode, block
      // scales in both forms, as gemm_fp8's (fp32 for Hopper, UE8M0 for Blackwell's
      // block-scaled MMA; the Hopper kernels read scale 3's fp32 copy).
      for (int scale : {0, 1, 2, 3})
        for (const auto& gmnk : {std::array<int, 4>{4, 8192, 4096, 7168}, std::array<int, 4>{8, 1024, 4096, 7168},
                                 std::array<int, 4>{8, 1024, 7168, 2048}, std::array<int, 4>{8, 256, 4096, 7168}})
          grid.push_back(grouped_fp8_shape(gmnk[0], gmnk[1], gmnk[2], gmnk[3], scale));
      // grouped_gemm's decode shapes in the masked layout, with block scales (DeepGEMM's masked
      // fp8 gemm's mode).
      grid.push_back(masked_fp8_shape(8, 256, 4096, 7168, 2, 64));
      grid.push_back(masked_fp8_shape(32, 128, 7168, 2048, 2, 16));
      break;
    case Family::attention:
      // Batch x heads x length at about the same tokens per launch, head dim 64 and 128,
      // causal and not.
      for (int d : {128, 64})
        for (bool causal : {false, true})
          for (const auto& blh :
               {std::array<int, 3>{4, 16, 4096}, std::array<int, 3>{4, 16, 2048}, std::array<int, 3>{8, 16, 1024},
                std::array<int, 3>{16, 16, 512}, std::array<int, 3>{4, 16, 3000}})
            grid.push_back(attn_shape(blh[0], d == 64 ? 2 * blh[1] : blh[1], blh[2], d, causal));
      break;
    default:
      // Rows from a decode batch to a long prefill; columns from small hidden sizes to
      // vocabulary-sized rows (128k). A single row of a vocabulary (32k) as well as of 128k:
      // one block does all the work there, so the block of 1024 threads wins, and the nearest
      // batch of 16 rows named a kernel 18 % slower for one row of 32000.
      for (const auto& rc :
           {std::array<int, 2>{65536, 1024}, std::array<int, 2>{32768, 4096}, std::array<int, 2>{8192, 16384},
            std::array<int, 2>{2048, 32768}, std::array<int, 2>{1024, 131072}, std::array<int, 2>{16, 4096},
            std::array<int, 2>{128, 8192}, std::array<int, 2>{1, 131072}, std::array<int, 2>{1, 32768},
            std::array<int, 2>{1000, 2048}, std::array<int, 2>{4096, 5120}})
        grid.push_back(row_shape(family, rc[0], rc[1]));
      break;
    case Family::declared:
      if (def != nullptr) grid = parsed_grid(family, def, def->bench_grid);
      break;
  }
  return grid;
}

std::vector<Shape> check_grid(Family family, const kport::kernels::FamilyDef* def) {
  if (const auto* o = override_of(family, def); o != nullptr && !o->check_grid.empty())
    return parsed_grid(family, def, o->check_grid);
  if (family == Family::declared) {
    if (def != nullptr && !def->check_grid.empty()) return parsed_grid(family, def, def->check_grid);
    return bench_grid(family, def);  // the def's, or its override's
  }
  std::vector<Shape> grid = bench_grid(family);
  switch (family) {
    case Family::gemm:
      // Odd and tiny shapes; decode rows (m <= 8) with K not a multiple of the K tile and N
      // ending inside a 256-column segment, split over K.
      for (const Shape& s :
           {gemm_shape(127, 255, 63), gemm_shape(1, 1, 1), gemm_shape(64, 64, 64), gemm_shape(257, 129, 33),
            gemm_shape(33, 4104, 520), gemm_shape(3, 1000, 777), gemm_shape(8, 4104, 4100)})
        grid.push_back(s);
      break;
    case Family::gemm_fp8:
      // Odd M and N (partial tiles, odd output rows), K below one block, K that is a multiple
      // of 16 but not of 128 (refused by the block modes) and not of 16 (refused by all).
      for (int scale : {0, 1, 2, 3})
        for (const auto& mnk :
             {std::array<int, 3>{127, 255, 128}, std::array<int, 3>{1, 1, 128}, std::array<int, 3>{257, 129, 384},
              std::array<int, 3>{33, 4104, 528}, std::array<int, 3>{1000, 2500, 1024}, std::array<int, 3>{3, 7, 16},
              std::array<int, 3>{129, 4096, 520}})
          grid.push_back(fp8_shape(mnk[0], mnk[1], mnk[2], scale));
      break;
    case Family::grouped_gemm:
      // Small problems for the CPU reference: one group and several, N and K odd (refused by
      // the TMA instances, which need multiples of 8), N below a tile, K below one step.
      for (const Shape& s : {grouped_shape(1, 128, 64, 64), grouped_shape(3, 128, 255, 63),
                             grouped_shape(2, 256, 129, 520), grouped_shape(4, 128, 4104, 72),
                             grouped_shape(5, 384, 8, 8), grouped_shape(2, 128, 1, 1), grouped_shape(3, 256, 264, 520)})
        grid.push_back(s);
      // The masked layout (masked_counts.h: group 0 empty, the last as full as the rows allow):
      // m of one row (every group empty), of 7, 65 (one row past a 64-row half) and 200 (a
      // second tile row ending mid-tile), one group of one row, one valid row per group on
      // average, nearly every row valid, N past 4096; odd N and K for the simt instance.
      for (const Shape& s :
           {masked_shape(3, 1, 64, 64, 0), masked_shape(1, 7, 64, 64, 1), masked_shape(4, 7, 136, 72, 3),
            masked_shape(5, 65, 264, 520, 20), masked_shape(8, 200, 256, 128, 64), masked_shape(6, 128, 128, 128, 1),
            masked_shape(4, 256, 64, 256, 255), masked_shape(2, 200, 4104, 64, 150), masked_shape(3, 130, 255, 63, 40)})
        grid.push_back(s);
      break;
    case Family::grouped_gemm_fp8:
      // Several groups small enough for the CPU reference, in every mode. The harness gives each
      // group's B its own power-of-two gain (fp8_group_gain), so a tile that reads another
      // group's B or scales fails by far more than the tolerance. N off every tile width (200,
      // 264, 4104: partial tiles, and a block of B scales past N), K a multiple of 16 but not
      // of 128 (528, 400: the block modes refused, the others zero-fill each group's last K
      // block), K not a multiple of 16 (520: refused by all), N of one column and of one tile.
      for (int scale : {0, 1, 2, 3})
        for (const auto& gmnk : {std::array<int, 4>{3, 128, 256, 256}, std::array<int, 4>{4, 128, 160, 384},
                                 std::array<int, 4>{2, 256, 200, 528}, std::array<int, 4>{5, 128, 64, 128},
                                 std::array<int, 4>{3, 256, 264, 400}, std::array<int, 4>{3, 128, 72, 520},
                                 std::array<int, 4>{1, 128, 1, 128}, std::array<int, 4>{2, 384, 4104, 1024}})
          grid.push_back(grouped_fp8_shape(gmnk[0], gmnk[1], gmnk[2], gmnk[3], scale));
      // The masked layout in every mode, as grouped_gemm's (m of 1, 7, 65 and 200; every group
      // empty, one row, nearly every row valid), K not a multiple of 128 (272: the block modes
      // refused), a tile of 160 columns past N (264, 4104).
      for (int scale : {0, 1, 2, 3})
        for (const auto& gmnkv : {std::array<int, 5>{3, 1, 64, 128, 0}, std::array<int, 5>{1, 7, 160, 128, 1},
                                  std::array<int, 5>{5, 65, 264, 384, 20}, std::array<int, 5>{8, 200, 200, 256, 64},
                                  std::array<int, 5>{4, 7, 96, 272, 3}, std::array<int, 5>{2, 200, 4104, 128, 150}})
          grid.push_back(masked_fp8_shape(gmnkv[0], gmnkv[1], gmnkv[2], gmnkv[3], scale, gmnkv[4]));
      break;
    case Family::attention:
      for (const Shape& s :
           {attn_shape(1, 2, 1, 64, false), attn_shape(1, 2, 77, 64, true), attn_shape(2, 3, 129, 128, false),
            attn_shape(1, 2, 1000, 128, true), attn_shape(2, 2, 333, 64, false), attn_shape(1, 1, 200, 128, true)})
        grid.push_back(s);
      break;
    default:
      for (const Shape& s : {row_shape(family, 4096, 1000), row_shape(family, 1024, 4097), row_shape(family, 1000, 1),
                             row_shape(family, 7, 8192), row_shape(family, 3, 65536), row_shape(family, 4, 300000),
                             row_shape(family, 5, 8), row_shape(family, 129, 4104), row_shape(family, 3, 20000)})
        grid.push_back(s);
      break;
  }
  return grid;
}

Problem make_problem(const Shape& s, DType dtype) {
  Problem p;
  p.family = s.family;
  switch (s.family) {
    case Family::gemm: p.gemm = {nullptr, nullptr, nullptr, s.m, s.n, s.k, dtype}; break;
    case Family::gemm_fp8:
      p.gemm_fp8 = {
          nullptr, nullptr, nullptr, nullptr, nullptr, s.m, s.n, s.k, static_cast<kport::kernels::Fp8Scale>(s.scale),
          dtype};
      break;
    case Family::grouped_gemm: p.grouped_gemm = {nullptr, nullptr, nullptr, s.groups, s.m, s.n, s.k, dtype}; break;
    case Family::grouped_gemm_fp8:
      p.grouped_gemm_fp8 = {nullptr,  nullptr, nullptr, nullptr, nullptr,
                            s.groups, s.m,     s.n,     s.k,     static_cast<kport::kernels::Fp8Scale>(s.scale),
                            dtype};
      break;
    case Family::declared: {
      auto& a = p.declared;
      a.def = s.def;
      a.dtype = dtype;
      for (std::size_t i = 0; i < s.dims.size() && i < std::size_t(kport::kernels::k_max_family_dims); ++i)
        a.dims[i] = s.dims[i];
      break;
    }
    case Family::attention:
      p.attention = {nullptr,
                     nullptr,
                     nullptr,
                     nullptr,
                     nullptr,
                     s.batch,
                     s.heads,
                     s.seq_len,
                     s.head_dim,
                     s.causal,
                     static_cast<float>(1.0 / std::sqrt(double(s.head_dim))),
                     dtype};
      break;
    default: p.rowwise = {nullptr, nullptr, nullptr, s.rows, s.cols, 1e-6f, dtype}; break;
  }
  return p;
}

}  // namespace kport::harness
