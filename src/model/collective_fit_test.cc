#include "model/collective_fit.h"

#include <gtest/gtest.h>

#include <random>

namespace stepscope::model {
namespace {

TEST(AllreduceSeconds, RingFormulaByHand) {
  // 4 ranks, 1 MB at 1 GB/s and 10 us: 6 x 10 us + 1.5 x 1 ms.
  EXPECT_NEAR(AllreduceSeconds(LinkAlphaBeta(1.0, 10e-6), 4, 1000000), 60e-6 + 1.5e-3, 1e-12);
  EXPECT_EQ(AllreduceSeconds(LinkAlphaBeta(1.0, 10e-6), 1, 1000000), 0.0);
  // 2 ranks: 2 latency steps and the whole payload once.
  EXPECT_NEAR(AllreduceSeconds(LinkAlphaBeta(2.0, 5e-6), 2, 4000000), 10e-6 + 2e-3, 1e-12);
}

TEST(FitAlphaBeta, RecoversKnownConstantsFromNoisyReductions) {
  const double alpha = 50e-6, inv_beta = 1.0 / 2e9;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(-0.02, 0.02);
  std::vector<CollectiveSample> samples;
  for (int n : {2, 4, 8, 16}) {
    for (Bytes bytes : {Bytes{1} << 20, Bytes{8} << 20}) {
      for (int i = 0; i < 5; ++i) {
        const double t = LatencySteps(n) * alpha + BandwidthShare(n) * bytes * inv_beta;
        samples.push_back({n, bytes, t * (1 + noise(rng))});
      }
    }
  }
  Result<AlphaBeta> ab = FitAlphaBeta(samples);
  ASSERT_TRUE(ab.ok()) << ab.status().message();
  EXPECT_NEAR(ab->alpha_s.value, alpha, 0.1 * alpha);
  EXPECT_NEAR(ab->seconds_per_byte.value, inv_beta, 0.03 * inv_beta);
  EXPECT_TRUE(ab->alpha_s.Contains(alpha));
  EXPECT_TRUE(ab->seconds_per_byte.Contains(inv_beta));
  EXPECT_FALSE(ab->alpha_assumed);
  EXPECT_FALSE(ab->beta_assumed);
}

TEST(FitAlphaBeta, OneReplicaCountAndPayloadCannotSeparateLatency) {
  Result<AlphaBeta> ab = FitAlphaBeta({{4, 1000000, 2e-3}, {4, 1000000, 2e-3}});
  ASSERT_TRUE(ab.ok());
  EXPECT_TRUE(ab->alpha_assumed);
  EXPECT_EQ(ab->alpha_s.value, 0.0);
  // All the time taken as bandwidth: 1.5 x 1 MB x s/B = 2 ms.
  EXPECT_NEAR(ab->seconds_per_byte.value, 2e-3 / 1.5e6, 1e-15);
}

TEST(FitAlphaBeta, NeedsAReductionAtTwoReplicas) {
  EXPECT_FALSE(FitAlphaBeta({}).ok());
  EXPECT_FALSE(FitAlphaBeta({{1, 1000, 0.0}}).ok());
}

TEST(FitBandwidthGivenLatency, SharesTheLatency) {
  const Estimate alpha = Estimate::Exact(20e-6);
  // 8 ranks, 2 MB, 1e-9 s/B: 14 x 20 us + 1.75 x 2 ms.
  const double t = 14 * 20e-6 + 1.75 * 2e6 * 1e-9;
  Result<AlphaBeta> ab = FitBandwidthGivenLatency({{8, 2000000, t}}, alpha);
  ASSERT_TRUE(ab.ok());
  EXPECT_NEAR(ab->seconds_per_byte.value, 1e-9, 1e-15);
  EXPECT_TRUE(ab->alpha_assumed);
}

}  // namespace
}  // namespace stepscope::model
