// The shapes an op family can be run on: which dimensions its harness reads, their
// ranges, and the order the harness spells them in. This is the harness protocol's
// shape contract (kernels/harness/shapes.h) seen from the services, so a shape the
// coordinator queues for measurement is one the harness accepts.
//
//   gemm                m, n, k                 each 1 .. 2^30
//   attention           b, h, l, d [, causal]   each 1 .. 2^30; causal 0 or 1 (default 0)
//   rmsnorm, softmax    rows, cols              each 1 .. 2^30
//   gemm_fp8            m, n, k [, scale]       each 1 .. 2^30; scale 0, 1 or 2 (default 0)
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kport/common/result.h"
#include "kport/porting/shape.h"

namespace kport::porting {

struct OpShape {
  Shape shape;       // with defaults filled in (causal=0, scale=0); canonical() sorts keys
  std::string text;  // the family's own order, as the harness prints it: "m=3000,n=3000,k=3000"
};

// The op families whose shapes are known here, in a stable order.
const std::vector<std::string>& op_families();

// Parses `text` as a shape of `family` and checks it against the family's dimensions.
// invalid_argument: the family is not one of op_families(), the text is not
// key=value,... (Shape::parse) or a key is unknown, missing or out of range for the
// family; the message names the key and lists the family's keys.
Result<OpShape> op_shape(std::string_view family, std::string_view text);

}  // namespace kport::porting
