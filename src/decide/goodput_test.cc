#include "decide/goodput.h"

#include <gtest/gtest.h>

namespace stepscope::decide {
namespace {

TEST(StatisticalEfficiency, OneAtTheReferenceAndFallingWithTheBatch) {
  const StatisticalScale s{true, 1000, 100, "test"};
  EXPECT_DOUBLE_EQ(StatisticalEfficiency(s, 100), 1.0);
  // E(B) = E_min (1 + B/B_noise): at B = B_noise a sample is worth 1.1 / 2 of one at B0 = 100.
  EXPECT_NEAR(StatisticalEfficiency(s, 1000), 1.1 / 2.0, 1e-12);
  EXPECT_GT(StatisticalEfficiency(s, 50), 1.0);  // a smaller batch is worth more per sample
  EXPECT_NEAR(Goodput(s, 200, 1000), 110, 1e-9);
}

TEST(StatisticalEfficiency, UnknownNoiseScaleCountsEverySampleAlike) {
  const StatisticalScale unknown{false, 0, 100, "no gradient norms"};
  EXPECT_EQ(StatisticalEfficiency(unknown, 1e6), 1.0);
  EXPECT_EQ(Goodput(unknown, 42, 1e6), 42);
}

}  // namespace
}  // namespace stepscope::decide
