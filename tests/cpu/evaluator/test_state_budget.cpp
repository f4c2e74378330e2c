#include <gtest/gtest.h>

#include "evaluator/state_budget.h"

using namespace ptxbench;

TEST(StateBudget, EvictsLeastRecentlyUsedToStayUnderTheBudget) {
  StateBudget b(100);
  EXPECT_TRUE(b.admit("gemm", 40).empty());
  EXPECT_TRUE(b.admit("fwd", 40).empty());
  EXPECT_TRUE(b.touch("gemm"));  // fwd is now the least recently used
  EXPECT_EQ(b.admit("bwd", 30), (std::vector<std::string>{"fwd"}));
  EXPECT_EQ(b.used(), 70u);
  EXPECT_TRUE(b.admit("gemm", 40).empty()) << "a cached key is a hit, not a second copy";
  EXPECT_EQ(b.used(), 70u);
  EXPECT_FALSE(b.touch("fwd"));
}

TEST(StateBudget, AStateLargerThanTheBudgetStaysAlone) {
  StateBudget b(100);
  b.admit("a", 30);
  b.admit("b", 30);
  EXPECT_EQ(b.admit("huge", 500), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b.admit("c", 10), (std::vector<std::string>{"huge"}));
  EXPECT_EQ(b.used(), 10u);
}
