// Which (instance, dtype, shape) cases a check or bench run covers. Host-only.
//   --instance NAME --dtype D --shape S   one case
//   --all [--instance NAME | --filter TEXT] [--dtype D|all] [--shape S]
//       the instance NAME, or every registered instance whose name contains TEXT; dtypes: all the instance
//       supports for check, bf16 (or its first dtype) for bench unless --dtype says; shapes:
//       the family grid, or --shape for the families it parses for (when it parses for none,
//       the error is that of a declared family whose dim the shape names, else a guessed one's).
// An empty selection is an error (no_cases): a run that checks nothing must not pass.
#pragma once

#include <optional>
#include <vector>

#include "cli.h"
#include "shapes.h"

namespace kport::harness {

struct Case {
  const kport::kernels::Instance* instance = nullptr;
  DType dtype = DType::bf16;
  Shape shape;
};

std::optional<HarnessError> select_cases(const Options& o, const std::vector<const kport::kernels::Instance*>& all,
                                         std::vector<Case>& out);

}  // namespace kport::harness
