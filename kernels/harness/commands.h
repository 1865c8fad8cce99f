// The four harness commands; each prints one JSON document and returns the exit code.
#pragma once

#include <cstdint>
#include <vector>

#include "cli.h"

namespace kport::harness {

int run_list(const Options& o);
int run_device(const Options& o);
int run_check(const Options& o);
int run_bench(const Options& o);

struct Case;
// --plan: prints {"command", "target", "plan": [{instance, family, variant, dtype, shape_text}]}.
int print_plan(const Options& o, const std::vector<Case>& cases);

// --seed when given, otherwise a fresh random seed (recorded in the report).
std::uint64_t resolve_seed(const Options& o);

}  // namespace kport::harness
