// Snapshots built in memory through the coordinator's own writer, for the library's
// unit tests: rows as select_best consumes them, then write_snapshot.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <vector>

#include <filesystem>
#include <map>
#include <stdexcept>

#include "checksum.h"
#include "kport/dispatch/dispatch.h"
#include "kport/dispatch/snapshot_writer.h"
#include "kport/porting/manifest.h"

namespace kport::dispatch::testing {

inline const std::string k_gpu = "NVIDIA H200";
inline const std::string k_commit = std::string(40, 'c');
inline constexpr std::int64_t k_generated_ms = 1'800'000'000'000;

inline porting::Shape shape(const std::string& text) { return *porting::Shape::parse(text); }

inline SnapshotFigure figure(const std::string& op, const std::string& dtype, const std::string& instance,
                             const std::string& shape_text, double median_us, double stddev_us = 0.0,
                             const std::string& status = "passed", bool unstable = false) {
  static std::int64_t next_id = 1;
  porting::Measurement m;
  m.result_id = next_id++;
  m.instance = instance;
  m.variant = instance.substr(instance.find('.') + 1, instance.rfind('.') - instance.find('.') - 1);
  m.target = "sm_90a";
  m.gpu_model = k_gpu;
  m.arch = "9.0";
  m.driver = "580.65.06";
  m.commit = k_commit;
  m.commit_ms = 1'700'000'000'000;
  m.status = status;
  m.shape = shape(shape_text);
  m.median_us = status == "passed" ? median_us : 0;
  m.stddev_us = status == "passed" ? (stddev_us > 0 ? stddev_us : median_us * 0.001) : 0;
  m.samples = status == "passed" && median_us > 0 ? 50 : 0;
  m.unstable = unstable;
  m.measured_at_ms = 1'700'000'100'000;
  return SnapshotFigure{op, dtype, m};
}

// kport's own families' dimension rules by op, as kernels/kport.json declares them and
// the coordinator writes them into a snapshot.
inline const std::map<std::string, porting::ShapeRules>& kport_rules() {
  static const std::map<std::string, porting::ShapeRules> k = [] {
    auto m = porting::load_manifest(std::filesystem::path(KPORT_KERNELS_DIR) / "kport.json", "kernels/kport.json");
    if (!m.ok()) throw std::runtime_error(m.error().message);
    std::map<std::string, porting::ShapeRules> out;
    for (const auto& f : porting::op_families_of(*m)) out.emplace(f.name, f.shape_rules());
    return out;
  }();
  return k;
}

inline std::string write(std::vector<SnapshotFigure> figures, std::int64_t generated_ms = k_generated_ms,
                         int sm_count = 0, std::vector<porting::InstanceGeometry> geometry = {}) {
  SnapshotSource src{
      k_gpu, "9.0", generated_ms, "2027-01-15T08:00:00.000Z", std::move(figures), sm_count, std::move(geometry)};
  src.rules = kport_rules();
  return write_snapshot(src);
}

// A gemm geometry: tiles of bm x bn, K in steps of bk.
inline porting::InstanceGeometry gemm_tiles(const std::string& instance, std::int64_t bm, std::int64_t bn,
                                            std::int64_t bk = 64) {
  return porting::InstanceGeometry{instance, porting::Geometry{{{"m", bm}, {"n", bn}}, {{"k", bk}}}};
}

// The same geometry with each tile split into `split` blocks along K (split K).
inline porting::InstanceGeometry split_k(porting::InstanceGeometry g, std::int64_t split) {
  g.geometry.split = split;
  return g;
}

// A row-wise geometry of path bounds alone: rows of `cols` over `max_bytes`, or not a
// multiple of `align_bytes`, run the instance's fallback.
inline porting::InstanceGeometry row_bounds(const std::string& instance, std::int64_t max_bytes,
                                            std::int64_t align_bytes) {
  porting::Geometry g;
  g.paths.push_back({"cols", max_bytes, align_bytes});
  return porting::InstanceGeometry{instance, std::move(g)};
}

// Re-signs a document edited by a test, as a coordinator would have signed it.
inline std::string resign(std::string text) {
  auto at = detail::find_checksum_digits(text);
  if (at && *at != std::string::npos) text.replace(*at, 16, detail::hex16(detail::fnv1a64_masked(text, *at)));
  return text;
}

inline std::string edit(const std::string& text, void (*change)(boost::json::object&)) {
  auto doc = boost::json::parse(text).as_object();
  change(doc);
  return resign(boost::json::serialize(doc));
}

inline LoadOptions at_generation() {
  LoadOptions o;
  o.now_ms = k_generated_ms;
  return o;
}

}  // namespace kport::dispatch::testing
