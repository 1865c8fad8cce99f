// Which GPU arches check a target: its own arch plus the registered ones.
#include <gtest/gtest.h>

#include "kport/porting/check_arches.h"

namespace kport::porting {
namespace {

using Arches = std::vector<std::string>;

TEST(CheckArches, ATargetWithNothingRegisteredIsCheckedOnItsOwnArch) {
  EXPECT_EQ(check_arches("9.0", {}), Arches{"9.0"});
}

TEST(CheckArches, RegisteredArchesAddToTheOwnArchSortedAndUnique) {
  EXPECT_EQ(check_arches("8.0", {"8.9", "8.6", "8.0", "8.6"}), (Arches{"8.0", "8.6", "8.9"}));
}

TEST(CheckArches, ARegisteredListWithoutTheOwnArchStillChecksTheOwnArch) {
  // sm_80 code always loads on 8.0 GPUs; registering only 8.6 adds, never replaces.
  EXPECT_EQ(check_arches("8.0", {"8.6"}), (Arches{"8.0", "8.6"}));
  EXPECT_TRUE(checks_target("8.0", "8.0", {"8.6"}));
  EXPECT_TRUE(checks_target("8.6", "8.0", {"8.6"}));
}

TEST(CheckArches, OrderIsByStringSoTenComesBeforeNine) {
  EXPECT_EQ(check_arches("9.0", {"10.0"}), (Arches{"10.0", "9.0"}));
}

TEST(CheckArches, EmptyArchesAreDropped) {
  EXPECT_TRUE(check_arches("", {}).empty());
  EXPECT_EQ(check_arches("", {"", "12.0"}), Arches{"12.0"});
  EXPECT_FALSE(checks_target("", "", {}));
}

TEST(CheckArches, OtherArchesDoNotCheckTheTarget) {
  EXPECT_FALSE(checks_target("10.0", "9.0", {}));
  EXPECT_FALSE(checks_target("9.0", "10.0", {"10.3"}));
}

}  // namespace
}  // namespace kport::porting
