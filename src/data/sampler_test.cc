#include "data/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "data/prng.h"

namespace stepscope::data {
namespace {

TEST(Prng, SplitMix64MatchesReferenceSequence) {
  // The reference implementation's output for seed 1234567.
  SplitMix64 g(1234567);
  EXPECT_EQ(g.Next(), 6457827717110365317ULL);
  EXPECT_EQ(g.Next(), 3203168211198807973ULL);
  EXPECT_EQ(g.Next(), 9817491932198370423ULL);
}

TEST(Prng, BelowStaysInRange) {
  Xoshiro256 rng(7);
  std::vector<int> counts(5, 0);
  for (int i = 0; i < 5000; ++i) {
    const uint64_t v = rng.Below(5);
    ASSERT_LT(v, 5u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_GT(c, 0);
}

TEST(EpochPermutation, IsAPermutationAndDependsOnSeedAndEpoch) {
  const auto p = EpochPermutation(1000, 42, 0);
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(p, EpochPermutation(1000, 42, 0));  // same seed, same order
  EXPECT_NE(p, EpochPermutation(1000, 42, 1));  // new epoch, new order
  EXPECT_NE(p, EpochPermutation(1000, 43, 0));  // new seed, new order
}

TEST(ShardedSampler, BatchesPerEpoch) {
  EXPECT_EQ(ShardedSampler(100, 8, 0, 3, 1, true).batches_per_epoch(), 4);   // 100 / 24
  EXPECT_EQ(ShardedSampler(100, 8, 0, 3, 1, false).batches_per_epoch(), 5);  // ceil
  EXPECT_EQ(ShardedSampler(96, 8, 0, 3, 1, true).batches_per_epoch(), 4);
}

TEST(ShardedSampler, RanksAreDisjointAndCoverTheEpochPrefix) {
  const int64_t size = 1003;
  const int batch = 7;
  const int world = 4;
  const uint64_t seed = 99;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::multiset<int64_t> seen;
    int64_t per_epoch = 0;
    for (int r = 0; r < world; ++r) {
      ShardedSampler s(size, batch, r, world, seed, true);
      per_epoch = s.batches_per_epoch();
      std::vector<int64_t> idx;
      for (int64_t j = 0; j < per_epoch; ++j) {
        s.BatchIndices(epoch, j, &idx);
        ASSERT_EQ(idx.size(), static_cast<size_t>(batch));
        seen.insert(idx.begin(), idx.end());
      }
    }
    ASSERT_EQ(per_epoch, size / (world * batch));
    const auto perm = EpochPermutation(size, seed, epoch);
    const std::multiset<int64_t> prefix(perm.begin(), perm.begin() + world * batch * per_epoch);
    EXPECT_EQ(seen, prefix);  // equal multisets: union is the prefix and no index repeats
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size());
  }
}

TEST(ShardedSampler, TwoRanksAtBInterleaveIntoOneRankAt2B) {
  const int64_t size = 500;
  const int b = 6;
  ShardedSampler r0(size, b, 0, 2, 5, true);
  ShardedSampler r1(size, b, 1, 2, 5, true);
  ShardedSampler single(size, 2 * b, 0, 1, 5, true);
  ASSERT_EQ(r0.batches_per_epoch(), single.batches_per_epoch());
  std::vector<int64_t> a, c, whole;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    for (int64_t j = 0; j < single.batches_per_epoch(); ++j) {
      r0.BatchIndices(epoch, j, &a);
      r1.BatchIndices(epoch, j, &c);
      single.BatchIndices(epoch, j, &whole);
      a.insert(a.end(), c.begin(), c.end());
      ASSERT_EQ(a, whole) << "epoch " << epoch << " step " << j;
    }
  }
}

TEST(ShardedSampler, WithoutDropLastWrapsAroundToKeepBatchesFull) {
  ShardedSampler s(10, 4, 0, 1, 3, false);
  ASSERT_EQ(s.batches_per_epoch(), 3);
  const auto perm = EpochPermutation(10, 3, 0);
  std::vector<int64_t> idx;
  s.BatchIndices(0, 2, &idx);
  EXPECT_EQ(idx, (std::vector<int64_t>{perm[8], perm[9], perm[0], perm[1]}));
}

}  // namespace
}  // namespace stepscope::data
