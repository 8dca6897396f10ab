#include "train/slice_readiness.h"

#include <gtest/gtest.h>

namespace stepscope::train {
namespace {

TEST(SliceReadiness, EachSlicesMedianShareOfBackward) {
  SliceReadiness r;
  // Three steps of a 10 s backward; the middle one disturbed in its first slice.
  for (const double first : {2.0, 9.0, 2.0}) {
    r.BeginBackward(100);
    r.SliceReady(100 + first);
    r.SliceReady(107);
    r.SliceReady(110);
    r.EndBackward(110, true);
  }
  const std::vector<double> shares = r.MedianShares();
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_DOUBLE_EQ(shares[0], 0.2);
  EXPECT_DOUBLE_EQ(shares[1], 0.7);
  EXPECT_DOUBLE_EQ(shares[2], 1.0);
}

TEST(SliceReadiness, WarmUpAndOtherSlicesAreLeftOutAndSharesNeverDecrease) {
  SliceReadiness r;
  r.BeginBackward(0);
  r.SliceReady(9);
  r.SliceReady(9.5);
  r.EndBackward(10, false);  // warm-up: not kept
  EXPECT_TRUE(r.MedianShares().empty());
  r.BeginBackward(0);
  r.SliceReady(6);
  r.SliceReady(5);  // reported out of order: held at the share before it
  r.EndBackward(10, true);
  r.BeginBackward(0);
  r.SliceReady(1);  // a step reporting other slices than the first kept one
  r.EndBackward(10, true);
  const std::vector<double> shares = r.MedianShares();
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0], 0.6);
  EXPECT_DOUBLE_EQ(shares[1], 0.6);
}

TEST(SliceReadiness, KeepsABoundedNumberOfSteps) {
  SliceReadiness r;
  for (int step = 0; step < SliceReadiness::kMaxSteps + 100; ++step) {
    r.BeginBackward(0);
    r.SliceReady(step < SliceReadiness::kMaxSteps ? 3 : 9);  // the later steps are not kept
    r.EndBackward(10, true);
  }
  EXPECT_DOUBLE_EQ(r.MedianShares().at(0), 0.3);
}

}  // namespace
}  // namespace stepscope::train
