// The four harness commands; each prints one JSON document and returns the exit code.
#pragma once

#include "cli.h"

namespace kport::harness {

int run_list(const Options& o);
int run_device(const Options& o);
int run_check(const Options& o);
int run_bench(const Options& o);

}  // namespace kport::harness
