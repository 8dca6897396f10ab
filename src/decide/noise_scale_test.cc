#include "decide/noise_scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "analysis/synthetic_run.h"

namespace stepscope::decide {
namespace {

TEST(NoiseScale, RecoversKnownNoiseScale) {
  analysis::SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.samples_per_rank = 32;
  spec.grad_sq = 2.0;
  spec.trace_sigma = 100.0;  // B_noise = 50
  const NoiseScale ns = EstimateNoiseScale(analysis::SynthesizeRun(spec));
  ASSERT_TRUE(ns.known) << ns.reason;
  EXPECT_NEAR(ns.grad_sq, 2.0, 1e-9);
  EXPECT_NEAR(ns.trace_sigma, 100.0, 1e-7);
  EXPECT_NEAR(ns.b_noise, 50.0, 1e-7);
  EXPECT_DOUBLE_EQ(ns.local_batch, 32);
  EXPECT_DOUBLE_EQ(ns.global_batch, 128);
}

TEST(NoiseScale, UnknownWithoutData) {
  analysis::SyntheticRunSpec spec;
  spec.grad_sq = 1;
  spec.trace_sigma = 1;
  EXPECT_FALSE(EstimateNoiseScale(analysis::SynthesizeRun(spec)).known);  // one replica
  spec.replicas = 2;
  spec.grad_sq = -1;
  EXPECT_FALSE(EstimateNoiseScale(analysis::SynthesizeRun(spec)).known);  // no norms
  // Global norm above the local one: negative variance, reported unknown.
  std::vector<StepRecord> records = analysis::SynthesizeRun(spec);
  for (StepRecord& r : records) {
    r.local_grad_sq = 1.0;
    r.global_grad_sq = 2.0;
  }
  const NoiseScale ns = EstimateNoiseScale(records);
  EXPECT_FALSE(ns.known);
  EXPECT_NE(ns.reason.find("not positive"), std::string::npos);
}

// Records whose norms come from real sampled gradients: per-sample gradient = G + noise with
// covariance s^2 I in D dimensions (tr Sigma = D s^2), a rank's local gradient the mean of its b
// samples, the reduced one the mean over ranks.
std::vector<StepRecord> SampledRun(int replicas, int b, int steps, uint64_t seed) {
  constexpr int kDim = 40;
  constexpr double kSigma = 1.0, kG = 0.5;  // |G|^2 = 40 x 0.25 = 10, tr = 40: B_noise = 4
  analysis::SyntheticRunSpec spec;
  spec.replicas = replicas;
  spec.samples_per_rank = b;
  spec.steps = steps;
  spec.grad_sq = 1;
  spec.trace_sigma = 1;
  std::vector<StepRecord> records = analysis::SynthesizeRun(spec);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, kSigma);
  std::map<int64_t, std::vector<StepRecord*>> by_step;
  for (StepRecord& r : records) by_step[r.step].push_back(&r);
  for (auto& [step, ranks] : by_step) {
    std::vector<double> global(kDim, 0);
    for (StepRecord* r : ranks) {
      std::vector<double> local(kDim, 0);
      for (int i = 0; i < b; ++i) {
        for (int d = 0; d < kDim; ++d) local[d] += (kG + noise(rng)) / b;
      }
      double sq = 0;
      for (int d = 0; d < kDim; ++d) sq += local[d] * local[d], global[d] += local[d] / replicas;
      r->local_grad_sq = sq;
    }
    double sq = 0;
    for (double g : global) sq += g * g;
    for (StepRecord* r : ranks) r->global_grad_sq = sq;
  }
  return records;
}

TEST(NoiseScale, PooledOverRunsRecoversSampledGradientsWithABand) {
  const std::vector<StepRecord> a = SampledRun(2, 4, 300, 1), c = SampledRun(4, 8, 300, 2);
  const std::vector<StepRecord> one = SampledRun(1, 8, 50, 3);  // no say: one replica
  const NoiseScale ns = EstimatePooledNoiseScale({&a, &c, &one});
  ASSERT_TRUE(ns.known) << ns.reason;
  EXPECT_EQ(ns.runs, 2);
  EXPECT_EQ(ns.steps, 600);
  EXPECT_DOUBLE_EQ(ns.global_batch, 32);
  EXPECT_NEAR(ns.grad_sq, 10, 1.5);
  EXPECT_NEAR(ns.trace_sigma, 40, 6);
  EXPECT_LE(ns.b_noise_low, ns.b_noise);
  EXPECT_GE(ns.b_noise_high, ns.b_noise);
  EXPECT_LT(ns.b_noise_low, 4.0);  // the band holds the true B_noise
  EXPECT_GT(ns.b_noise_high, 4.0);
  EXPECT_LT(ns.b_noise_high - ns.b_noise_low, 3.0);  // and means something
  // The training progress it was measured at: the steps sampled, and the samples the 4-replica
  // run (32 per step) had trained on by its last one.
  EXPECT_GE(ns.first_step, 0);
  EXPECT_GE(ns.last_step, ns.first_step + 299);
  EXPECT_DOUBLE_EQ(ns.samples_seen, 32.0 * static_cast<double>(ns.last_step + 1));
  EXPECT_NE(ns.reason.find("grows as training proceeds"), std::string::npos) << ns.reason;

  // Few steps: a wider band around the same truth.
  const std::vector<StepRecord> few = SampledRun(2, 4, 20, 4);
  const NoiseScale small = EstimatePooledNoiseScale({&few});
  if (small.known) {
    EXPECT_GT(small.b_noise_high - small.b_noise_low, ns.b_noise_high - ns.b_noise_low);
  }
  EXPECT_FALSE(EstimatePooledNoiseScale({&one}).known);
  EXPECT_FALSE(EstimatePooledNoiseScale({}).known);
}

TEST(NoiseScale, StepsAndSampleCost) {
  EXPECT_DOUBLE_EQ(StepsToTarget(1000, 50, 50), 2000);
  EXPECT_DOUBLE_EQ(RelativeSampleCost(100, 100, 200), 1.5);
  EXPECT_DOUBLE_EQ(RelativeSampleCost(0, 100, 200), 1);
}

}  // namespace
}  // namespace stepscope::decide

namespace stepscope::decide {
namespace {

// With E|G_b|^2 = |G|^2 + tr/b, the estimator recovers B_noise = tr/|G|^2 exactly.
TEST(NoiseScaleFromMeans, RecoversKnownValue) {
  const double g2 = 4.0, tr = 800.0, b = 32, big_b = 128;
  NoiseScale ns = NoiseScaleFromMeans(g2 + tr / b, g2 + tr / big_b, b, big_b);
  ASSERT_TRUE(ns.known) << ns.reason;
  EXPECT_NEAR(ns.b_noise, tr / g2, 1e-9);
  EXPECT_FALSE(NoiseScaleFromMeans(1, 1, 32, 32).known);  // B == b
  EXPECT_FALSE(NoiseScaleFromMeans(1, 2, 32, 64).known);  // tr(Sigma) < 0
}

// B_noise rising from 10 to 100 over training while |G|^2 falls a hundredfold: the ratio of the
// whole run's means sits near the early values, the mean over stretches of training near the
// steps' own average (55), which is what the steps of a whole run follow.
TEST(NoiseScale, OverTrainingFollowsTheStepsNotTheFirstOnes) {
  const int steps = 800;
  const double b = 16, big_b = 32;
  std::vector<double> local, global;
  double truth = 0;
  for (int i = 0; i < steps; ++i) {
    const double t = static_cast<double>(i) / (steps - 1);
    const double grad_sq = 10 * std::pow(0.01, t);
    const double b_noise = 10 + 90 * t;
    truth += b_noise / steps;
    local.push_back(grad_sq + b_noise * grad_sq / b);
    global.push_back(grad_sq + b_noise * grad_sq / big_b);
  }
  const NoiseScale over = NoiseScaleOverTraining(local, global, b, big_b);
  ASSERT_TRUE(over.known) << over.reason;
  EXPECT_NEAR(over.b_noise, truth, 0.05 * truth);
  EXPECT_LT(over.b_noise_low, 20);
  EXPECT_GT(over.b_noise_high, 90);
  double l = 0, g = 0;
  for (int i = 0; i < steps; ++i) l += local[i] / steps, g += global[i] / steps;
  const NoiseScale whole = NoiseScaleFromMeans(l, g, b, big_b);
  ASSERT_TRUE(whole.known);
  EXPECT_LT(whole.b_noise, 0.6 * truth);
  // A stretch where |G|^2 is lost in the noise (its estimate negative): the cut is halved, and
  // the pooled stretch gives a positive estimate.
  std::vector<double> noisy_local = local, noisy_global = global;
  for (int i = 5 * steps / 8; i < 6 * steps / 8; ++i) noisy_global[i] = noisy_local[i] * 0.4;
  const NoiseScale halved = NoiseScaleOverTraining(noisy_local, noisy_global, b, big_b);
  ASSERT_TRUE(halved.known) << halved.reason;
  EXPECT_NE(halved.reason.find("mean over 4 equal stretches"), std::string::npos) << halved.reason;
  // Too few steps for the stretches, or a batch that is not bigger: unknown, with the reason.
  EXPECT_FALSE(NoiseScaleOverTraining({1, 2}, {1, 2}, b, big_b).known);
  EXPECT_FALSE(NoiseScaleOverTraining(local, global, b, b).known);
}

// The dedicated run: every step with every rank's norms, warm-up included, in training order.
TEST(NoiseScale, OfOneRunCountsItsWarmupAndItsProgress) {
  analysis::SyntheticRunSpec spec;
  spec.replicas = 2;
  spec.steps = 40;
  spec.warmup_steps = 2;
  spec.grad_sq = 1;
  spec.trace_sigma = 64;
  std::vector<StepRecord> records = analysis::SynthesizeRun(spec);
  const NoiseScale ns = NoiseScaleOfRun(records);
  ASSERT_TRUE(ns.known) << ns.reason;
  EXPECT_NEAR(ns.b_noise, 64, 1e-6);
  EXPECT_EQ(ns.steps, 42);
  EXPECT_EQ(ns.first_step, records.front().step);
  EXPECT_EQ(ns.runs, 1);
  EXPECT_DOUBLE_EQ(ns.local_batch, 32);
  EXPECT_DOUBLE_EQ(ns.global_batch, 64);
  EXPECT_GT(ns.samples_seen, 40 * 64 - 1);
  // A step that lacks a rank's norm is left out; one rank alone says why it is unknown.
  records[0].local_grad_sq = -1;
  EXPECT_EQ(NoiseScaleOfRun(records).steps, 41);
  spec.replicas = 1;
  const NoiseScale alone = NoiseScaleOfRun(analysis::SynthesizeRun(spec));
  EXPECT_FALSE(alone.known);
  EXPECT_NE(alone.reason.find("one rank"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::decide
