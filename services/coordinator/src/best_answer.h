// GET /api/v1/best's question and its measured answers, shared by the HTTP I/O thread
// (a current BestIndex entry: no store, no worker hop) and the worker pool (which loads
// the entry first). Provisional and unranked answers from other GPUs' evidence stay on
// the worker pool (routes_results.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "best_asks.h"
#include "best_index.h"
#include "selection_text.h"
#include "kport/common/result.h"
#include "kport/db/best_requests.h"
#include "kport/http/message.h"
#include "kport/porting/op_shape.h"
#include "kport/porting/shape.h"

namespace kport::coordinator {

struct BestQuestion {
  std::string gpu, op, dtype, shape_text;
  std::string arch, target;   // as given; either may be empty
  std::string repo;           // the library asked about (?repo=); empty: the one the evidence is of
  porting::Shape shape;       // the family's whole shape: every dimension, defaults filled in
  std::string canonical;      // shape.canonical(), written once
  std::string op_shape_text;  // the same in the harness's order (porting::op_shape)
  std::shared_ptr<const porting::FamilySet> families;  // the families known when it was asked
  const porting::OpFamily* family = nullptr;           // op's, in `families`
};

// The question a request asks of the `families` known (Families::current()); invalid_argument
// naming the parameter and an example when a parameter is missing or malformed, naming
// the families known when `op` is none of them, or saying what is wrong with a shape its
// family cannot take (porting::op_shape); unprocessable for a shape the family's
// requirements rule out for every instance (porting::unmet_requirement).
Result<BestQuestion> parse_best_question(const http::Request& req, std::shared_ptr<const porting::FamilySet> families);

// The answer body when `entry`'s rows are one library's, the one asked about if any,
// and comparable with the question's shape (porting::PreparedSelection::match), else
// nullopt: the answer needs the store (one library's rows picked out of several, or a
// provisional or unranked answer from other GPU models' evidence). `unmeasured` is set when the answer is
// not a measurement at the exact shape asked: the key, in the answer's library, counted as an
// unmeasured ask; its views are into `q` and `entry`.
std::optional<std::string> measured_answer(const BestIndex::Entry& entry, const BestQuestion& q,
                                           std::optional<AskView>& unmeasured);

// The members every answer ends with, `,"query":{...}` (the question as answered, arch,
// target and repo (the library the answer is of, "" when none) as resolved) and, when
// the answer is not a measurement at the exact shape on a GPU model kport knows,
// `,"measure":{...}` (how to ask for one: a request of the answer's library, naming it
// whenever the answer has one, asked or not, so that the request stays the answer's
// library's once another library runs the op), setting `unmeasured` (the key, of that
// library: views into `q` and `repo`).
void write_question_members(JsonText& w, const BestQuestion& q, std::string_view arch, std::string_view target,
                            std::string_view repo, bool measured_exactly, bool known_gpu,
                            std::optional<AskView>& unmeasured);

}  // namespace kport::coordinator
