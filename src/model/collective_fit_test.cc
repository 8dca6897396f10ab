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

TEST(FitAlphaBeta, RecoversAFixedCostPerReductionBesideLatencyAndBandwidth) {
  const double fixed = 2e-3, alpha = 50e-6, inv_beta = 1e-9;
  std::vector<CollectiveSample> samples;
  for (int n : {2, 4, 8, 16}) {
    for (Bytes bytes : {Bytes{1} << 20, Bytes{8} << 20}) {
      samples.push_back(
          {n, bytes, fixed + LatencySteps(n) * alpha + BandwidthShare(n) * bytes * inv_beta});
    }
  }
  Result<AlphaBeta> ab = FitAlphaBeta(samples);
  ASSERT_TRUE(ab.ok());
  EXPECT_NEAR(ab->fixed_s.value, fixed, 1e-9);
  EXPECT_NEAR(ab->alpha_s.value, alpha, 1e-10);
  EXPECT_NEAR(ab->seconds_per_byte.value, inv_beta, 1e-15);
  // The cost at a new point, by hand: 2 ms + 62 x 50 us + 62/32 x 4 MiB x 1 ns.
  EXPECT_NEAR(AllreduceSeconds(*ab, 32, Bytes{4} << 20),
              fixed + 62 * alpha + 62.0 / 32 * (4 << 20) * inv_beta, 1e-9);
}

TEST(FitAlphaBeta, ANegativeTermIsFixedAtZeroAndSaidSo) {
  // Durations that fall with N at a fixed payload: latency would come out negative.
  Result<AlphaBeta> ab = FitAlphaBeta(
      {{2, 1000000, 3e-3}, {4, 1000000, 2.9e-3}, {8, 1000000, 2.8e-3}, {2, 4000000, 9e-3}});
  ASSERT_TRUE(ab.ok());
  EXPECT_GE(ab->alpha_s.value, 0.0);
  EXPECT_GE(ab->fixed_s.value, 0.0);
  EXPECT_GE(ab->seconds_per_byte.value, 0.0);
  EXPECT_NE(ab->how.find("fixed at 0"), std::string::npos) << ab->how;
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
  Result<AlphaBeta> ab = FitBandwidthGivenLatency({{8, 2000000, t}}, alpha, Estimate::Exact(0));
  ASSERT_TRUE(ab.ok());
  EXPECT_NEAR(ab->seconds_per_byte.value, 1e-9, 1e-15);
  EXPECT_TRUE(ab->alpha_assumed);
}

}  // namespace
}  // namespace stepscope::model
