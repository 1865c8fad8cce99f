// The instance a kernels test asks about, by its registered name.
#pragma once

#include <gtest/gtest.h>

#include "kport/kernels/registry.h"

namespace kport::kernels::stand_ins {

// The instance registered as `name`; a failed expectation and an empty instance when none is.
inline const Instance& registered(const char* name) {
  const Instance* inst = find_instance(name);
  EXPECT_NE(inst, nullptr) << name;
  static const Instance none{};
  return inst != nullptr ? *inst : none;
}

}  // namespace kport::kernels::stand_ins
