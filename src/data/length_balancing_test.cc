#include "data/length_balancing.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace stepscope::data {
namespace {

// Steps 0..steps-1 of `ranks` ranks, tallied.
LengthTally Tally(const LengthOptions& o, int batch, int steps = 256, int ranks = 8) {
  LengthTally t;
  for (int step = 0; step < steps; ++step) {
    for (int rank = 0; rank < ranks; ++rank) {
      t.Add(o, {.seed = 7, .epoch = 0, .index = step, .rank = rank, .batch = batch, .context = 64});
    }
  }
  return t;
}

TEST(LengthTally, FixedLengthsComputeNoPadding) {
  const LengthTally t = Tally({}, 8);
  EXPECT_EQ(t.drawn_work, 0);
  EXPECT_EQ(t.PaddedShare(), 0);
  EXPECT_EQ(t.WorkRatio(), 1);
  EXPECT_EQ(StepSpread({}, 7, 8, 64), std::vector<double>{1.0});
}

TEST(LengthTally, BucketsComputeLessPadding) {
  // Batch 8 of log-uniform lengths over 2..64: the longest of 8 is near the context, the mean
  // length near a third of it, so most computed positions are padding.
  const LengthTally t = Tally({.variable = true}, 8);
  EXPECT_GT(t.PaddedShare(), 0.5);
  EXPECT_LT(t.PaddedShare(), 0.85);
  // Bucketed, a rank pads to its bucket's top: under half the positions (the expected longest
  // of 8 as drawn is about 2 x 32^(8/9), 43; a bucket's top averages about 20).
  EXPECT_GT(t.WorkRatio(), 0.35);
  EXPECT_LT(t.WorkRatio(), 0.55);
  // The same places tally the same whichever way the job itself drew them.
  const LengthTally bucketed = Tally({.variable = true, .balanced = true}, 8);
  EXPECT_EQ(bucketed.drawn_work, t.drawn_work);
  EXPECT_EQ(bucketed.bucketed_work, t.bucketed_work);
  // Tallies add up.
  LengthTally sum = t;
  sum.Add(t);
  EXPECT_EQ(sum.WorkRatio(), t.WorkRatio());
  EXPECT_EQ(sum.drawn_work, 2 * t.drawn_work);
}

TEST(LengthTally, BiggerBatchesPadMore) {
  const LengthTally b8 = Tally({.variable = true}, 8);
  const LengthTally b32 = Tally({.variable = true}, 32);
  EXPECT_GT(b32.PaddedShare(), b8.PaddedShare());
  EXPECT_LT(b32.WorkRatio(), b8.WorkRatio());
}

TEST(StepSpread, RanksOfABucketDifferLittle) {
  const std::vector<double> bucketed = StepSpread({.variable = true, .balanced = true}, 7, 8, 64);
  const std::vector<double> drawn = StepSpread({.variable = true}, 7, 8, 64);
  ASSERT_EQ(bucketed.size(), 101u);
  ASSERT_EQ(drawn.size(), 101u);
  EXPECT_TRUE(std::is_sorted(bucketed.begin(), bucketed.end()));
  EXPECT_TRUE(std::is_sorted(drawn.begin(), drawn.end()));
  // Bucketed, about the bucket's span (32^(1/16), 1.24; more in the shortest buckets, where
  // whole tokens are coarse); as drawn, the longest of 8 ranges over most of the context.
  EXPECT_GT(bucketed.front(), 0.6);
  EXPECT_LT(bucketed.back(), 1.3);
  EXPECT_NEAR(bucketed[50], 1.0, 0.05);
  EXPECT_LT(drawn.front(), 0.5);
  EXPECT_GT(drawn[90] - drawn[10], 2 * (bucketed[90] - bucketed[10]));
}

}  // namespace
}  // namespace stepscope::data
