// How one build's check on an arch splits over the GPUs that can take it: the one rule
// that decides how many check jobs a build spawns per arch and which families each runs.
//
// A check job runs on one GPU, so a pipeline over the whole library on a host of several
// GPUs would keep all but one idle. The check is split by family, never finer: the
// instances of a family are screened against each other (the runner measures precisely
// only those near the fastest of a case), so they stay in one job. Families go heaviest
// first to the lightest shard (longest processing time first); a family's weight is what
// the previous pipeline of the target and arch measured of it (its result count), or its
// built variants where no earlier pipeline says. The last shard takes every family the
// others do not name ("the rest"), so a family nobody weighed (one the harness holds
// without a build record) is still checked.
// Pure functions over plain data; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kport::porting {

struct FamilyWeight {
  std::string family;
  double weight = 0;
};

struct CheckShard {
  std::vector<std::string> families;  // sorted; for the rest shard, the weighed families it takes
  double weight = 0;                  // the sum of its families' weights
  bool rest = false;                  // also every family no other shard names
};

// The shards of one arch's check with `workers` GPUs able to take it: one shard per
// worker, never more than the families weighed, at least one. One shard is the whole
// check (rest, naming every family). Families are deduplicated (the weights of a repeated
// name add up) and a negative weight counts as zero; ties go by name, so the plan is the
// same for the same input.
std::vector<CheckShard> plan_check_shards(const std::vector<FamilyWeight>& weights, std::int64_t workers);

}  // namespace kport::porting
