#include "best_evidence.h"

#include <boost/json.hpp>

#include <set>
#include <utility>

namespace kport::coordinator {

bool of_library(std::string_view row_repo, const std::optional<std::string>& repo) {
  return !repo || row_repo.empty() || repo->empty() || row_repo == *repo;
}

Result<std::optional<std::string>> one_library(const std::vector<std::string>& libraries, std::string_view subject,
                                               std::string_view ask) {
  std::set<std::string> seen;
  for (const auto& r : libraries)
    if (!r.empty()) seen.insert(r);  // a row of no library counts for every one
  if (seen.empty()) return std::optional<std::string>{};
  if (seen.size() == 1) return std::optional<std::string>(*seen.begin());
  std::string names;
  for (const auto& r : seen) names += (names.empty() ? "'" : ", '") + r + "'";
  return make_error(Errc::invalid_argument, std::string(subject) + " has instances of " + std::to_string(seen.size()) +
                                                " libraries (repositories " + names +
                                                "), which kport does not rank together; " + std::string(ask));
}

std::vector<porting::Measurement> library_measurements(const std::vector<db::BestCandidate>& rows,
                                                       const std::optional<std::string>& repo) {
  std::set<std::pair<std::string_view, std::string_view>> own;  // (instance, shape) of named rows
  for (const auto& c : rows)
    if (!c.repo.empty() && of_library(c.repo, repo)) own.emplace(c.instance, c.shape);
  std::vector<porting::Measurement> out;
  for (const auto& c : rows) {
    if (!of_library(c.repo, repo)) continue;
    if (c.repo.empty() && own.count({c.instance, c.shape})) continue;
    out.push_back(to_measurement(c));
  }
  return out;
}

Result<WaveInputs> wave_inputs(db::Store& store, const std::string& gpu_model, const porting::FamilySet& known,
                               const std::optional<std::string>& family, const std::optional<std::string>& repo) {
  WaveInputs out;
  auto sms = store.gpu_sm_count(gpu_model);
  if (!sms.ok()) return std::move(sms).error();
  out.sm_count = *sms;
  // Read whatever the SM count: path bounds place shapes without it.
  auto instances = store.list_kernel_instances(family);
  if (!instances.ok()) return std::move(instances).error();
  // The library's own instances first, then those of no library not named by it.
  std::set<std::string_view> named;
  for (const auto& i : *instances)
    if (!i.repo.empty() && of_library(i.repo, repo)) named.insert(i.name);
  for (const auto& i : *instances) {
    if (!of_library(i.repo, repo) || (i.repo.empty() && named.count(i.name))) continue;
    const porting::OpFamily* declared = known.find(i.family);
    if (!declared || declared->geometry.empty()) continue;
    boost::system::error_code ec;
    auto config = boost::json::parse(i.config_json, ec);
    if (ec || !config.is_object()) continue;
    const auto& obj = config.as_object();
    auto g =
        porting::geometry_from_config(declared->geometry, [&](std::string_view key) -> std::optional<std::int64_t> {
          const auto* v = obj.if_contains(key);
          if (!v) return std::nullopt;
          if (v->is_int64()) return v->as_int64();
          if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
            return static_cast<std::int64_t>(v->as_uint64());
          return std::nullopt;
        });
    if (g) out.geometry.push_back({i.name, std::move(*g)});
  }
  return out;
}

Result<std::vector<porting::Measurement>> gpu_measurements(db::Store& store, const std::string& gpu_model,
                                                           const std::string& family, const std::string& dtype) {
  auto rows = store.best_candidates(gpu_model, family, dtype);
  if (!rows.ok()) return std::move(rows).error();
  std::vector<porting::Measurement> out;
  out.reserve(rows->size());
  for (const auto& c : *rows) out.push_back(to_measurement(c));
  return out;
}

ExactAnswer exact_answer(const std::vector<porting::Measurement>& on_gpu, const std::string& gpu_model,
                         const std::string& dtype, const porting::Shape& shape) {
  // Without comparable rows select_best answers provisional or unranked, never measured,
  // so the provisional inputs /api/v1/best gathers cannot change this answer.
  porting::SelectionQuery q{gpu_model, on_gpu.empty() ? std::string() : on_gpu.front().arch, "", shape, dtype};
  porting::SelectionInputs in;
  in.on_gpu = on_gpu;
  const auto sel = porting::select_best(q, in);
  ExactAnswer out;
  out.measured = sel.kind == porting::Selection::Kind::measured && sel.exact_shape;
  if (!out.measured) return out;
  if (const auto* b = sel.best()) out.best = b->instance;
  out.result_ids = sel.evidence.result_ids;
  return out;
}

Result<ExactAnswer> exact_answer(db::Store& store, const db::BestKey& key, const std::optional<std::string>& repo) {
  auto shape = porting::Shape::parse(key.shape);
  if (!shape.ok()) return std::move(shape).error();
  if (!repo || repo->empty()) {
    auto on_gpu = gpu_measurements(store, key.gpu_model, key.family, key.dtype);
    if (!on_gpu.ok()) return std::move(on_gpu).error();
    return exact_answer(*on_gpu, key.gpu_model, key.dtype, *shape);
  }
  auto rows = store.best_candidates(key.gpu_model, key.family, key.dtype);
  if (!rows.ok()) return std::move(rows).error();
  return exact_answer(library_measurements(*rows, repo), key.gpu_model, key.dtype, *shape);
}

}  // namespace kport::coordinator
