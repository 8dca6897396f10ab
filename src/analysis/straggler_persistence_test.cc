#include "analysis/straggler_persistence.h"

#include <gtest/gtest.h>

#include "analysis/synthetic_run.h"

namespace stepscope::analysis {
namespace {

// The skew of a 4-rank run with `slow` (if any) computing 30 % more.
SkewReport RunWithSlowRank(int slow, uint64_t seed) {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.buckets = 2;
  spec.jitter = 0.02;
  spec.seed = seed;
  if (slow >= 0) spec.rank_compute_factor[slow] = 1.3;
  Result<SkewReport> s = AnalyzeSkew(SynthesizeRun(spec));
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : SkewReport{};
}

bool Mentions(const SkewReport& s, const std::string& what) {
  for (const std::string& e : s.evidence) {
    if (e.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(KeepPersistentStragglers, ARankSlowInEveryRunStaysNamed) {
  SkewReport base = RunWithSlowRank(2, 1);
  ASSERT_EQ(base.straggler_ranks, std::vector<int>{2});
  KeepPersistentStragglers({RunWithSlowRank(2, 2), RunWithSlowRank(2, 3)}, &base);
  EXPECT_EQ(base.straggler_ranks, std::vector<int>{2});
  EXPECT_TRUE(Mentions(base, "rank 2 is a straggler in 3 of the point's 3 runs"));
}

TEST(KeepPersistentStragglers, ARankSlowInOneRunOnlyIsNotNamed) {
  SkewReport base = RunWithSlowRank(2, 1);
  ASSERT_EQ(base.straggler_ranks, std::vector<int>{2});
  // In the repeats another rank, then none, is slow: nothing stays with rank 2.
  KeepPersistentStragglers({RunWithSlowRank(1, 2), RunWithSlowRank(-1, 3)}, &base);
  EXPECT_TRUE(base.straggler_ranks.empty());
  EXPECT_TRUE(Mentions(base, "rank 2 is a straggler in 1 of the point's 3 runs, not in most"));
}

TEST(KeepPersistentStragglers, TwoRunsMustBothNameTheRank) {
  SkewReport base = RunWithSlowRank(2, 1);
  KeepPersistentStragglers({RunWithSlowRank(-1, 2)}, &base);
  EXPECT_TRUE(base.straggler_ranks.empty());
  SkewReport again = RunWithSlowRank(2, 1);
  KeepPersistentStragglers({RunWithSlowRank(2, 4)}, &again);
  EXPECT_EQ(again.straggler_ranks, std::vector<int>{2});
}

TEST(KeepPersistentStragglers, WithoutRepeatsNothingChanges) {
  SkewReport base = RunWithSlowRank(2, 1);
  const size_t sentences = base.evidence.size();
  KeepPersistentStragglers({}, &base);
  EXPECT_EQ(base.straggler_ranks, std::vector<int>{2});
  EXPECT_EQ(base.evidence.size(), sentences);
}

}  // namespace
}  // namespace stepscope::analysis
