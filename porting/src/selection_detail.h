// Private to kport::selection: the two halves of a measured answer, shared by
// select_best() and PreparedSelection so that both answer by the very same code.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kport/porting/selection.h"

namespace kport::porting::detail {

// What select_best answers from the current figures at `shape` (current not empty),
// before anything that depends on the query's own shape: ranking, exclusions, evidence,
// notes on unstable figures, commits and drivers; kind measured, or unranked when
// nothing there ranks.
Selection measured_at(const std::string& gpu_model, std::span<const DriverSeen> drivers,
                      const std::vector<Measurement>& current, const Shape& shape);

// Adds what depends on the query: exactness, distance, the note naming the stand-in
// shape and, for a measured answer from another shape, the neighbour regret (asked of
// `regret` only then) and its note.
void answer_query(Selection& sel, const std::string& gpu_model, const Shape& want, double distance,
                  const std::function<std::optional<NeighbourRegret>()>& regret);

// NeighbourRegret over the timed current figures (nullopt below two scored shapes).
std::optional<NeighbourRegret> neighbour_regret(const std::vector<Measurement>& timed);

}  // namespace kport::porting::detail
