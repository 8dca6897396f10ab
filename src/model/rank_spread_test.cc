#include "model/rank_spread.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stepscope::model {
namespace {

// A run whose rank r computes compute[r][s] seconds in steady step s (forward only), with
// `tokens[r]` positions a step when given; one warm-up step of 10 s each, left out.
RunObservation RunOf(const std::vector<std::vector<double>>& compute,
                     const std::vector<int>& tokens = {}) {
  RunObservation run;
  for (int r = 0; r < static_cast<int>(compute.size()); ++r) {
    StepRecord warm;
    warm.rank = r, warm.step = 0, warm.warmup = true, warm.forward = 10;
    run.records.push_back(warm);
    for (size_t s = 0; s < compute[r].size(); ++s) {
      StepRecord x;
      x.rank = r, x.step = static_cast<int64_t>(s) + 1, x.forward = compute[r][s];
      x.start = static_cast<double>(s), x.end = x.start + 1.0;
      if (!tokens.empty()) x.tokens = tokens[r];
      run.records.push_back(x);
    }
  }
  return run;
}

TEST(RankSpread, JitterIsEachRanksComputeOverItsOwnMeanSorted) {
  const RunObservation run = RunOf({{0.9, 1.1}, {1.8, 2.2}});
  StepModel m;
  FitComputeJitter({&run}, &m);
  ASSERT_EQ(m.compute_jitter.size(), 4u);
  EXPECT_DOUBLE_EQ(m.compute_jitter.front(), 0.9);
  EXPECT_DOUBLE_EQ(m.compute_jitter.back(), 1.1);
  EXPECT_TRUE(m.notes.empty());

  const RunObservation idle = RunOf({{0.0, 0.0}});
  StepModel none;
  FitComputeJitter({&idle}, &none);
  EXPECT_EQ(none.compute_jitter, std::vector<double>{1.0});
}

TEST(RankSpread, LengthBucketedRunsTakeTheBucketedSpreadAndSaySo) {
  const RunObservation run = RunOf({{0.5, 1.5}, {0.5, 1.5}});
  StepModel m;
  m.length_buckets = LengthBuckets{};
  m.length_buckets->applied = true;
  m.length_buckets->spread = {0.8, 1.2};
  m.length_buckets->token_share = 1;
  FitComputeJitter({&run}, &m);
  // Not the ranks' 0.5 and 1.5: the bucket's spread, times the noise (1).
  EXPECT_EQ(m.compute_jitter, (std::vector<double>{0.8, 1.2}));
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("length-bucketed"), std::string::npos);
}

TEST(RankSpread, AStragglerIsAtLeastTheMarginAboveTheOtherRanksMedian) {
  const RunObservation run = RunOf({{1.0, 1.0}, {1.0, 1.0}, {1.5, 1.5}, {1.05, 1.05}});
  const std::map<int, double> s = FindStragglers(run, 0, std::nullopt, 0.10);
  ASSERT_EQ(s.size(), 1u);  // rank 3, 5 % slower, is within the margin
  EXPECT_DOUBLE_EQ(s.at(2), 1.5);
  EXPECT_TRUE(FindStragglers(run, 0, std::nullopt, 0.60).empty());
}

TEST(RankSpread, ARankThatDrewLongerExamplesIsNoStraggler) {
  // Rank 1 computes twice as long because it drew twice the positions, all of its compute
  // scaling with them.
  const RunObservation run = RunOf({{1.0, 1.0}, {2.0, 2.0}}, {100, 200});
  LengthBuckets lengths;
  lengths.token_share = 1;
  EXPECT_TRUE(FindStragglers(run, 100, lengths, 0.10).empty());
  // Without the positions it would be named.
  EXPECT_EQ(FindStragglers(run, 0, std::nullopt, 0.10).count(1), 1u);
}

}  // namespace
}  // namespace stepscope::model
