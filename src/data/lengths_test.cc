#include "data/lengths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace stepscope::data {
namespace {

BatchPlace Place(int64_t index, int rank, int batch = 8, int context = 64) {
  return {.seed = 7, .epoch = 1, .index = index, .rank = rank, .batch = batch, .context = context};
}

int Longest(const std::vector<int>& lengths) {
  return *std::max_element(lengths.begin(), lengths.end());
}

TEST(ExampleLengths, TheContextUnlessVariable) {
  EXPECT_EQ(ExampleLengths({}, Place(3, 1)), std::vector<int>(8, 64));
  EXPECT_EQ(ExampleLengths({.variable = true}, Place(3, 1, 2, 1)), std::vector<int>(2, 1));
  EXPECT_TRUE(ExampleLengths({.variable = true}, Place(3, 1, 0)).empty());
}

TEST(ExampleLengths, EachExampleItsOwnLogUniformLength) {
  const LengthOptions o{.variable = true};
  std::vector<int> all;
  int longest_differs = 0;
  for (int64_t index = 0; index < 300; ++index) {
    const std::vector<int> a = ExampleLengths(o, Place(index, 0));
    const std::vector<int> b = ExampleLengths(o, Place(index, 1));
    ASSERT_EQ(a.size(), 8u);
    EXPECT_EQ(a, ExampleLengths(o, Place(index, 0)));  // reproducible
    all.insert(all.end(), a.begin(), a.end());
    longest_differs += Longest(a) != Longest(b);
  }
  EXPECT_EQ(*std::min_element(all.begin(), all.end()), 2);  // 64 / 32
  EXPECT_EQ(*std::max_element(all.begin(), all.end()), 64);
  // Log-uniform over [2, 64]: the median near sqrt(2 * 64) = 11.3, a quarter at most 4.8.
  std::sort(all.begin(), all.end());
  EXPECT_NEAR(all[all.size() / 2], 11.3, 2.0);
  EXPECT_NEAR(all[all.size() / 4], 4.8, 1.5);
  // The ranks' padded lengths (their work) differ in most steps.
  EXPECT_GT(longest_differs, 200);
}

// Over `steps` steps of `world` ranks: the mean gap between the longest and the shortest padded
// length of a step's ranks, the mean padded length, every example's length, and how often each
// rank alone had the longest batch.
struct Steps {
  double gap = 0, padded = 0;
  std::vector<int> lengths;
  std::vector<int> alone_longest;
};

Steps RunSteps(const LengthOptions& o, int steps, int world) {
  Steps s;
  s.alone_longest.assign(world, 0);
  for (int64_t index = 0; index < steps; ++index) {
    int low = 1 << 30, high = 0, longest = -1;
    for (int rank = 0; rank < world; ++rank) {
      const std::vector<int> lengths = ExampleLengths(o, Place(index, rank));
      EXPECT_EQ(lengths, ExampleLengths(o, Place(index, rank)));  // reproducible
      s.lengths.insert(s.lengths.end(), lengths.begin(), lengths.end());
      const int l = Longest(lengths);
      longest = l > high ? rank : l == high ? -1 : longest;
      low = std::min(low, l);
      high = std::max(high, l);
      s.padded += l;
    }
    if (longest >= 0) ++s.alone_longest[longest];
    s.gap += high - low;
  }
  s.gap /= steps;
  s.padded /= steps * world;
  std::sort(s.lengths.begin(), s.lengths.end());
  return s;
}

TEST(ExampleLengths, BalancedStepsDrawFromOneBucketForAllRanks) {
  const int world = 4, steps = 400;
  const Steps balanced = RunSteps({.variable = true, .balanced = true}, steps, world);
  const Steps unbalanced = RunSteps({.variable = true}, steps, world);
  // The examples' lengths keep their distribution (the same median).
  EXPECT_NEAR(balanced.lengths[balanced.lengths.size() / 2],
              unbalanced.lengths[unbalanced.lengths.size() / 2], 1.5);
  // The ranks of a step pad to nearly the same length: a few tokens apart on average against
  // tens unbalanced, and with less padding.
  EXPECT_LT(balanced.gap, 4.0);
  EXPECT_GT(unbalanced.gap, 15.0);
  EXPECT_LT(balanced.padded, 0.6 * unbalanced.padded);
  // Which rank is slowest still turns from step to step.
  for (int rank = 0; rank < world; ++rank) {
    EXPECT_GT(balanced.alone_longest[rank], 0) << rank;
    EXPECT_LT(balanced.alone_longest[rank], steps / 8) << rank;  // ties are common
  }
}

TEST(PadToLongest, CutsToTheLongestAndMasksEachRowsTail) {
  Batch b;
  b.size = 2;
  b.tokens = {1, 2, 3, 4, 5, 6, 7, 8};  // (2, 4)
  b.targets = {2, 3, 4, 5, 6, 7, 8, 9};
  PadToLongest(std::vector<int>{1, 3}, &b);
  EXPECT_EQ(b.tokens, (std::vector<int32_t>{1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(b.targets, (std::vector<int32_t>{2, kPaddedTarget, kPaddedTarget, 6, 7, 8}));
  Batch full;
  full.size = 1;
  full.tokens = {1, 2};
  full.targets = {2, 3};
  PadToLongest(std::vector<int>{9}, &full);  // never longer than it is
  EXPECT_EQ(full.tokens.size(), 2u);
  EXPECT_EQ(full.targets, (std::vector<int32_t>{2, 3}));
  Batch images;
  images.size = 2;
  images.inputs = {0.5f, 0.25f};
  images.targets = {1, 2};
  PadToLongest(std::vector<int>{1, 1}, &images);
  EXPECT_EQ(images.targets, (std::vector<int32_t>{1, 2}));
}

}  // namespace
}  // namespace stepscope::data
