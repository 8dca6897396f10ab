#include "data/lengths.h"

#include <gtest/gtest.h>

#include <set>

namespace stepscope::data {
namespace {

TEST(BatchLength, FixedUnlessVariable) {
  EXPECT_EQ(BatchLength({}, 64, 1, 0, 3, 1), 64);
  EXPECT_EQ(BatchLength({.variable = true}, 1, 1, 0, 3, 1), 1);
}

TEST(BatchLength, VariesByRankAndStepWithinAQuarterToAll) {
  const LengthOptions o{.variable = true};
  std::set<int> seen;
  int differ = 0;
  for (int64_t index = 0; index < 200; ++index) {
    const int a = BatchLength(o, 64, 7, 0, index, 0);
    const int b = BatchLength(o, 64, 7, 0, index, 1);
    EXPECT_GE(a, 16);
    EXPECT_LE(a, 64);
    EXPECT_EQ(a, BatchLength(o, 64, 7, 0, index, 0));  // reproducible
    seen.insert(a);
    differ += a != b;
  }
  EXPECT_GT(seen.size(), 30u);  // spread over the range
  EXPECT_GT(differ, 180);       // the ranks' work differs almost every step
}

TEST(BatchLength, BalancedGivesEveryRankTheSameLengthPerStep) {
  const LengthOptions o{.variable = true, .balanced = true};
  std::set<int> seen;
  for (int64_t index = 0; index < 100; ++index) {
    const int a = BatchLength(o, 64, 7, 1, index, 0);
    for (int rank = 1; rank < 8; ++rank) EXPECT_EQ(BatchLength(o, 64, 7, 1, index, rank), a);
    seen.insert(a);
  }
  EXPECT_GT(seen.size(), 20u);  // still variable from step to step
}

TEST(TruncateSequences, KeepsEachRowsFirstPositions) {
  Batch b;
  b.size = 2;
  b.tokens = {1, 2, 3, 4, 5, 6, 7, 8};  // (2, 4)
  b.targets = {2, 3, 4, 5, 6, 7, 8, 9};
  TruncateSequences(3, &b);
  EXPECT_EQ(b.tokens, (std::vector<int32_t>{1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(b.targets, (std::vector<int32_t>{2, 3, 4, 6, 7, 8}));
  TruncateSequences(9, &b);  // never longer than it is
  EXPECT_EQ(b.tokens.size(), 6u);
  Batch images;
  images.size = 2;
  images.inputs = {0.5f, 0.25f};
  images.targets = {1, 2};
  TruncateSequences(1, &images);
  EXPECT_EQ(images.targets.size(), 2u);
}

}  // namespace
}  // namespace stepscope::data
