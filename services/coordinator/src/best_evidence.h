// The store's best-kernel rows as porting::select_best reads them (db::to_measurement, the
// one conversion), and the one question measure requests ask of that rule: is (GPU model, op,
// dtype, shape) answered by a measurement at that exact shape?
//
// Thread-safe as the store is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kport/common/result.h"
#include "kport/db/best_measurement.h"
#include "kport/db/store.h"
#include "kport/porting/op_shape.h"
#include "kport/porting/selection.h"

namespace kport::coordinator {

using db::to_measurement;  // kport/db/best_measurement.h

// Several libraries side by side: a row belongs to the library (repository) its result or
// instance came from, and an answer is about one library. A row of no library (repo "",
// an operator's upload) counts for every one. `repo` nullopt: any library.
bool of_library(std::string_view row_repo, const std::optional<std::string>& repo);

// The one library (repository) `libraries` name, nullopt when they name none (a name ""
// is a row of no library, which counts for every one). When they name several, kport
// would rank two libraries' instances together: invalid_argument "<subject> has instances
// of N libraries (repositories 'a', 'b'), which kport does not rank together; <ask>",
// for the caller to pick one (/api/v1/best's ?repo=, a measure request's field 'repo').
Result<std::optional<std::string>> one_library(const std::vector<std::string>& libraries, std::string_view subject,
                                               std::string_view ask);

// The rows of `rows` that count for `repo` (of_library), as Measurements; a row of no
// library is left out where the library has its own row of that instance and shape.
std::vector<porting::Measurement> library_measurements(const std::vector<db::BestCandidate>& rows,
                                                       const std::optional<std::string>& repo);

// What select_best answers from a GPU model's own current figures at one shape.
struct ExactAnswer {
  bool measured = false;  // kind measured and the matched shape is the query's
  std::string best;       // the recommended instance when measured
  std::vector<std::int64_t> result_ids;
};

// select_best over `on_gpu` (the GPU model's rows of one family and dtype).
ExactAnswer exact_answer(const std::vector<porting::Measurement>& on_gpu, const std::string& gpu_model,
                         const std::string& dtype, const porting::Shape& shape);

// Reads the GPU model's rows of the family and dtype and answers as above: every row
// when `repo` is nullopt or "", else library `repo`'s (library_measurements).
Result<ExactAnswer> exact_answer(db::Store& store, const db::BestKey& key,
                                 const std::optional<std::string>& repo = std::nullopt);

// What moves a figure to a shape that was not measured (porting/wave_model.h): the GPU
// model's SM count (0 when no runner said) and the family's instances' geometries, read
// from their published configs by the keys their family declares in `known` (instances
// without a geometry, or of a family that declares none, are left out).
struct WaveInputs {
  int sm_count = 0;
  std::vector<porting::InstanceGeometry> geometry;
};
// `family` nullopt: every family's instances; `repo` set: that library's instances only
// (an instance is named within its library).
Result<WaveInputs> wave_inputs(db::Store& store, const std::string& gpu_model, const porting::FamilySet& known,
                               const std::optional<std::string>& family,
                               const std::optional<std::string>& repo = std::nullopt);

// The GPU model's rows of a family and dtype, as Measurements.
Result<std::vector<porting::Measurement>> gpu_measurements(db::Store& store, const std::string& gpu_model,
                                                           const std::string& family, const std::string& dtype);

}  // namespace kport::coordinator
