// Which GPU arches check a target: the one rule that decides where the check jobs of a
// build run, which targets a new GPU or driver revalidates, and which results count for
// a target's bring-up.
//
// A target is checked on its own arch (code compiled for compute capability X always
// loads on X) plus every arch registered for it (the table target_check_arches, filled
// from the catalog's runs_on: sm_80 code also runs on 8.6 and 8.9 GPUs). A registered
// list never removes the target's own arch.
// Pure functions over plain data; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kport::porting {

// The arches whose GPUs check a target of `target_arch` with `registered` extra arches:
// sorted as strings, without duplicates or empty entries. Empty when the target has no
// arch and none is registered.
std::vector<std::string> check_arches(std::string_view target_arch, std::vector<std::string> registered);

// True when GPUs of `arch` check that target (check_arches contains it).
bool checks_target(std::string_view arch, std::string_view target_arch, const std::vector<std::string>& registered);

}  // namespace kport::porting
