#include "analysis/skew.h"

#include <gtest/gtest.h>

#include "analysis/synthetic_run.h"

namespace stepscope::analysis {
namespace {

// The run of `spec` with rank 1 waiting `extra` seconds longer for its input every step (and
// arriving that much later at every collective); its compute is like the others'.
std::vector<StepRecord> RankOneWaitsLongerForInput(const SyntheticRunSpec& spec, Seconds extra) {
  std::vector<StepRecord> records = SynthesizeRun(spec);
  for (StepRecord& r : records) {
    if (r.rank != 1) continue;
    r.input_wait += extra;
    for (CollectiveRecord& c : r.collectives) c.ready += extra;
  }
  return records;
}

TEST(Skew, SlowRankThatArrivesLastIsTheStraggler) {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.buckets = 3;
  spec.jitter = 0.02;
  spec.rank_compute_factor[2] = 1.3;
  Result<SkewReport> s = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->straggler_ranks, std::vector<int>{2});
  EXPECT_EQ(s->ranks[2].last_arrivals, s->arrival_events);
  EXPECT_EQ(s->arrival_events, 20 * 3);
  EXPECT_NEAR(s->ranks[2].compute_excess, 0.3, 0.03);
  EXPECT_NEAR(s->compute_spread, 0.003, 0.0006);
  ASSERT_EQ(s->collectives.size(), 3u);
  // At the last bucket rank 2 is behind by its extra forward + backward.
  EXPECT_NEAR(s->collectives[2].mean, 0.003, 0.0006);
  ASSERT_FALSE(s->evidence.empty());
  EXPECT_NE(s->evidence[0].find("rank 2"), std::string::npos);
  // Slow in every step: a slower rank, not bursts.
  EXPECT_NEAR(s->ranks[2].slow_steps, 1.0, 1e-9);
  EXPECT_FALSE(Intermittent(s->ranks[2]));
  EXPECT_NE(s->evidence[0].find("slow in 100% of the steps: a persistently slower rank"),
            std::string::npos)
      << s->evidence[0];
}

// A healthy 4-rank run where, in every even step, `slow(step)` computes 40 ms more (a burst),
// and in every odd step another rank is last by 0.5 ms: the burst rank is last in only half
// the steps.
std::vector<StepRecord> Bursts(int (*slow)(int64_t)) {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.jitter = 0.01;
  std::vector<StepRecord> records = SynthesizeRun(spec);
  for (StepRecord& r : records) {
    const bool even = r.step % 2 == 0;
    const int odd_last = static_cast<int>((r.step / 2) % 3 == 2 ? 3 : (r.step / 2) % 3);
    const Seconds extra = even && r.rank == slow(r.step) ? 0.040
                          : !even && r.rank == odd_last  ? 0.0005
                                                         : 0.0;
    r.compute += extra;
    r.end += extra;
    for (CollectiveRecord& c : r.collectives) c.ready += extra;
  }
  return records;
}

TEST(Skew, ARankSlowInBurstsIsNamedByTheWaitItCauses) {
  Result<SkewReport> s = AnalyzeSkew(Bursts([](int64_t) { return 2; }));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NEAR(s->ranks[2].last_fraction, 0.5, 1e-9);  // under the 60 % of a steady straggler
  EXPECT_GT(s->ranks[2].wait_share, 0.9);
  EXPECT_EQ(s->straggler_ranks, std::vector<int>{2});
  EXPECT_NE(s->evidence[0].find("of the waiting"), std::string::npos) << s->evidence[0];
  // Slow in half the steps: bursts, which point at the host rather than the device.
  EXPECT_NEAR(s->ranks[2].slow_steps, 0.5, 1e-9);
  EXPECT_TRUE(Intermittent(s->ranks[2]));
  EXPECT_NE(s->evidence[0].find("slow in only 50% of the steps, in bursts"), std::string::npos)
      << s->evidence[0];
  // The same bursts on a different rank each time: imbalance, nobody's fault.
  Result<SkewReport> rotating =
      AnalyzeSkew(Bursts([](int64_t step) { return static_cast<int>((step / 2) % 4); }));
  ASSERT_TRUE(rotating.ok());
  EXPECT_TRUE(rotating->straggler_ranks.empty());
  for (const RankSkew& r : rotating->ranks) EXPECT_LT(r.wait_share, 0.4);
}

TEST(Skew, HealthyRunHasNoStraggler) {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.buckets = 2;
  spec.jitter = 0.03;
  Result<SkewReport> s = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->straggler_ranks.empty());
}

TEST(Skew, TwoRanksWithNoiseHaveNoStraggler) {
  // With two ranks one of them is always last; only a compute margin makes it a straggler.
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SyntheticRunSpec spec;
    spec.replicas = 2;
    spec.jitter = 0.04;
    spec.seed = seed;
    Result<SkewReport> s = AnalyzeSkew(SynthesizeRun(spec));
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->straggler_ranks.empty()) << "seed " << seed;
  }
}

TEST(Skew, TwoRanksWithARealStraggler) {
  SyntheticRunSpec spec;
  spec.replicas = 2;
  spec.jitter = 0.02;
  spec.rank_compute_factor[1] = 1.4;
  Result<SkewReport> s = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->straggler_ranks, std::vector<int>{1});
}

TEST(Skew, LatenessOutsideComputeStillNamesTheRank) {
  // Rank 1 waits 4 ms longer for its input every step; its compute is like the others'.
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.jitter = 0.02;
  std::vector<StepRecord> records = RankOneWaitsLongerForInput(spec, 0.004);
  // Other ranks' ready times stay: rank 1 now arrives last everywhere.
  Result<SkewReport> s = AnalyzeSkew(records);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->straggler_ranks, std::vector<int>{1});
  EXPECT_LT(s->ranks[1].compute_excess, 0.1);
  EXPECT_GT(s->ranks[1].arrival_excess, 0.3);
  EXPECT_NE(s->evidence[0].find("outside measured compute"), std::string::npos);
}

TEST(Skew, AnInputBoundJobsPhaseIsNotAStraggler) {
  // Every rank waits about 30 ms for input per step (a slow pipeline everywhere); rank 1's
  // batches come 4 ms later in phase. That is the input pipeline, not a slow rank.
  SyntheticRunSpec spec;
  spec.replicas = 2;
  spec.input_wait = 0.030;
  spec.jitter = 0.02;
  std::vector<StepRecord> records = RankOneWaitsLongerForInput(spec, 0.004);
  Result<SkewReport> s = AnalyzeSkew(records);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->straggler_ranks.empty());
  ASSERT_FALSE(s->evidence.empty());
  EXPECT_NE(s->evidence[0].find("the input pipeline, not a straggler"), std::string::npos)
      << s->evidence[0];
}

TEST(Skew, AnExcessThatIsASliverOfTheStepIsNoStraggler) {
  // An input-bound job: 0.2 ms of compute in a 30 ms step, rank 1's 50 % more compute is
  // 0.1 ms, a third of a percent of the step.
  SyntheticRunSpec spec;
  spec.replicas = 2;
  spec.compute = 0.0002;
  spec.input_wait = 0.030;
  spec.bucket_time = 0.0001;
  spec.rank_compute_factor = {{1, 1.5}};
  Result<SkewReport> s = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->straggler_ranks.empty());
  ASSERT_FALSE(s->evidence.empty());
  EXPECT_NE(s->evidence[0].find("not called a straggler"), std::string::npos) << s->evidence[0];
}

// `spec`'s run with rank 1 computing `extra` more in the steps `when` picks (arriving that much
// later and ending that much later), of which `waiting` is time spent waiting for a CPU core.
std::vector<StepRecord> RankOneComputesMore(const SyntheticRunSpec& spec, Seconds extra,
                                            bool (*when)(int64_t), Seconds waiting) {
  std::vector<StepRecord> records = SynthesizeRun(spec);
  for (StepRecord& r : records) {
    r.cpu_wait = 0.0;
    if (r.rank != 1 || !when(r.step)) continue;
    r.compute += extra;
    r.backward += extra;
    r.end += extra;
    r.cpu_wait = waiting;
    for (CollectiveRecord& c : r.collectives) c.ready += extra;
  }
  return records;
}

TEST(Skew, ARankWaitingForACoreIsNotAStraggler) {
  // Rank 1 computes 30 % longer every step, all of it waiting for a CPU core (more threads than
  // cores on its host): the host, not a slower rank. The same excess on a core is a straggler.
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.jitter = 0.02;
  const auto always = [](int64_t) { return true; };
  Result<SkewReport> waiting = AnalyzeSkew(RankOneComputesMore(spec, 0.003, always, 0.003));
  ASSERT_TRUE(waiting.ok()) << waiting.status().message();
  EXPECT_TRUE(waiting->straggler_ranks.empty());
  EXPECT_NEAR(waiting->ranks[1].compute_excess, 0.3, 0.03);
  EXPECT_NEAR(waiting->ranks[1].cpu_wait_mean, 0.003, 1e-9);
  EXPECT_LT(waiting->ranks[1].typical_excess, 0.05);
  ASSERT_FALSE(waiting->evidence.empty());
  EXPECT_NE(waiting->evidence[0].find("waiting for a CPU core"), std::string::npos)
      << waiting->evidence[0];
  EXPECT_NE(waiting->evidence[0].find("not called a straggler"), std::string::npos);
  Result<SkewReport> slower = AnalyzeSkew(RankOneComputesMore(spec, 0.003, always, 0.0));
  ASSERT_TRUE(slower.ok());
  EXPECT_EQ(slower->straggler_ranks, std::vector<int>{1});
  EXPECT_NEAR(slower->ranks[1].typical_excess, 0.3, 0.03);
}

TEST(Skew, OneDisturbedStepIsNotAStraggler) {
  // One step of twenty where rank 1 computes 25 ms more (the host took its core once): by far
  // the most waiting, and 12 % more compute on average, but none in a typical step. The same
  // burst in half the steps (a co-tenant) is a straggler.
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.jitter = 0.02;
  Result<SkewReport> once = AnalyzeSkew(RankOneComputesMore(
      spec, 0.025, [](int64_t step) { return step == 9; }, 0));
  ASSERT_TRUE(once.ok()) << once.status().message();
  EXPECT_GT(once->ranks[1].wait_share, 0.6);
  EXPECT_GT(once->ranks[1].compute_excess, 0.1);
  EXPECT_TRUE(once->straggler_ranks.empty());
  ASSERT_FALSE(once->evidence.empty());
  EXPECT_NE(once->evidence[0].find("a few disturbed steps"), std::string::npos)
      << once->evidence[0];
  Result<SkewReport> half = AnalyzeSkew(RankOneComputesMore(
      spec, 0.025, [](int64_t step) { return step % 2 == 0; }, 0));
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->straggler_ranks, std::vector<int>{1});
}

TEST(Skew, OneRankAndNoCollectives) {
  SyntheticRunSpec spec;
  Result<SkewReport> one = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->straggler_ranks.empty());
  EXPECT_EQ(one->compute_spread, 0);
  // No-reduce runs: the rank with the most compute per step counts as last.
  spec.replicas = 3;
  spec.reduce = false;
  spec.rank_compute_factor[0] = 1.5;
  Result<SkewReport> s = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->by_steps);
  EXPECT_EQ(s->straggler_ranks, std::vector<int>{0});
}

// Two slow ranks: only the slower arrives last, the other is named by its steady excess over
// the ranks not named; a healthy rank beside them is not.
TEST(Skew, SeveralSlowRanksAreEachNamed) {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.jitter = 0.03;
  spec.rank_compute_factor = {{1, 1.6}, {3, 1.4}};
  Result<SkewReport> r = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->straggler_ranks, (std::vector<int>{1, 3}));
  ASSERT_EQ(r->evidence.size(), 2u);
  EXPECT_NE(r->evidence[1].find("hidden behind rank 1"), std::string::npos) << r->evidence[1];

  spec.rank_compute_factor = {{1, 1.6}};
  r = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->straggler_ranks, std::vector<int>{1});
}

// A further straggler is judged against the ranks not named, at the first one's margin: 1.2x
// behind 1.3x is named (against the faster half's median, which the jitter pulls down, it took
// twice the margin, and an injected 1.2x sat on that line), and 1.05x is not.
TEST(Skew, AFurtherStragglerTakesTheSameMarginAgainstTheRanksNotNamed) {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.jitter = 0.03;
  spec.rank_compute_factor = {{1, 1.3}, {3, 1.2}};
  Result<SkewReport> r = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->straggler_ranks, (std::vector<int>{1, 3}));
  ASSERT_EQ(r->evidence.size(), 2u);
  EXPECT_NE(r->evidence[1].find("ranks not named"), std::string::npos) << r->evidence[1];

  spec.rank_compute_factor = {{1, 1.3}, {3, 1.05}};
  r = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->straggler_ranks, std::vector<int>{1});

  // Eight ranks, one slow, the others jittered by 8 %: no healthy rank is named beside it.
  spec.replicas = 8;
  spec.jitter = 0.08;
  spec.rank_compute_factor = {{5, 1.5}};
  r = AnalyzeSkew(SynthesizeRun(spec));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->straggler_ranks, std::vector<int>{5});
}

}  // namespace
}  // namespace stepscope::analysis
