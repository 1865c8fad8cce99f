// An answer from one measured shape's figures to a question at another shape
// (porting::PreparedSelection::moved), written from text serialized once per shape: what
// depends only on the shape (every figure's instance, evidence and commit, the exclusions,
// the evidence's totals, the regret) is held as text; a question writes its distance, the
// ranking's order, slowdowns and estimates, and the members that follow from the order.
// The bytes are write_members(PreparedSelection::answer(want, m))'s (best_index_test holds
// them to select_best's answer written by selection_text.h).
//
// Thread-safety: a MovedText is immutable once made; any number of threads may write from it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kport/porting/prepared_selection.h"
#include "selection_text.h"

namespace kport::coordinator {

struct MovedText {
  struct Figure {              // a figure that ranks; all empty for one that does not
    std::string head;          // {"instance":"…","variant":"…","tie_with_best":
    std::string tail;          // ,"ranked":true,"evidence":{…},"estimate_us":
    std::string instance;      // "…", as best and tied name it
    std::string commit;        // "…"
    std::string driver;        // "…"
    std::string result;        // the result id's digits
    std::string commits_note;  // the note on several commits with this figure's as the best's, "…"; empty with one
  };
  std::vector<Figure> figures;  // by index in PreparedSelection::figures(shape)
  std::string head;             // {"kind":…,"confidence":{"basis":…,"method":…,"shape_distance":
  std::string after_distance;   // ,"nearest_shape_regret":{…}},"best":  (without a regret: },"best":)
  std::string reason_before;    // ,"reason":"nearest measured shape … stands in for
  std::string reason_after;     // ; …","notes":[
  bool drivers_vary = false;    // several drivers ranked: the drivers note is written per question
  std::string drivers_note;     // otherwise, the note ("…"), or empty when there is none
  std::string gpus_note;        // "…" (porting::gpus_note of the shape's ranked figures); empty for one GPU
  std::string regret_note;      // "…"; empty without a regret
  std::string middle;           // ],"ranked_by":…,"evidence":{"gpu_model":…,"arch":…,"commit":
  std::string other_drivers;    // ,"other_drivers":[…],"results":[
  std::string evidence_tail;    // ],"samples":…,"measured":…,"oldest":…},"ranking":[
  std::string excluded;         // ],"excluded":[…]
  std::size_t size = 0;         // the text held: what an answer's body reserves, with room for the rest
  std::size_t bytes() const;    // estimated heap and inline bytes
};

// The texts of answers from timed shape `shape` of `p` to others; `excluded` is the
// shape's excluded member's value as written by write_members.
MovedText moved_text(const porting::PreparedSelection& p, std::size_t shape, std::string_view excluded);

// `{` and every member of the answer `moved` describes (PreparedSelection::moved from
// `shape`'s figures to a question at `want`, canonical text, `distance` away), without
// the closing brace: what write_members(answer(want, m)) writes after its `{`.
void write_moved(JsonText& w, const MovedText& t, const porting::PreparedSelection& p, std::size_t shape,
                 const porting::PreparedSelection::Moved& moved, std::string_view want, double distance);

}  // namespace kport::coordinator
