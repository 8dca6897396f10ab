#include "decide/binding_losses.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/synthetic_run.h"

namespace stepscope::decide {
namespace {

analysis::Decomposition Decomposed(int replicas, double jitter, uint64_t seed) {
  analysis::SyntheticRunSpec spec;
  spec.replicas = replicas;
  spec.steps = 60;
  spec.buckets = 2;
  spec.jitter = jitter;
  spec.seed = seed;
  Result<analysis::Decomposition> d = analysis::Decompose(analysis::SynthesizeRun(spec));
  EXPECT_TRUE(d.ok()) << d.status().message();
  return std::move(d).value();
}

// The losses split the growth since one replica exactly, and each candidate's interval holds
// the 1-replica reference's noise as well as the N-replica run's: with the same 4-replica run,
// a jittery reference widens the compute candidate's interval against a steady one.
TEST(BindingLosses, IntervalsHoldTheReferencesNoise) {
  const analysis::Decomposition at_n = Decomposed(4, 0.05, 3);
  const analysis::Decomposition steady = Decomposed(1, 0.0, 1);
  const analysis::Decomposition jittery = Decomposed(1, 0.3, 2);
  const BindingLosses quiet = SplitLosses(steady, false, at_n, 0);
  const BindingLosses noisy = SplitLosses(jittery, false, at_n, 0);
  Seconds sum = 0;
  for (const BindingLoss& l : quiet.losses) {
    EXPECT_TRUE(l.estimate.Contains(l.seconds)) << ToString(l.binding);
    sum += l.seconds;
  }
  EXPECT_NEAR(sum, at_n.job.step - steady.job.step, 1e-9);
  const Estimate quiet_compute = quiet.Of(Binding::kCompute).estimate;
  const Estimate noisy_compute = noisy.Of(Binding::kCompute).estimate;
  EXPECT_GT(noisy_compute.Width(), 1.5 * quiet_compute.Width());
  // A reference estimated from the N-replica run (analyze at one replica count) is held fixed.
  const BindingLosses estimated = SplitLosses(jittery, true, at_n, 0);
  EXPECT_FALSE(estimated.measured_reference);
  EXPECT_NEAR(estimated.Of(Binding::kInput).estimate.Width(), 0, 1e-12);
}

// Runs of one point whose losses are (seconds, [low, high]) for communication, 0 elsewhere.
BindingLosses CommunicationLoss(double seconds, double low, double high) {
  BindingLosses b;
  for (Binding binding : {Binding::kCommunication, Binding::kStragglers, Binding::kImbalance,
                          Binding::kInput, Binding::kOverhead, Binding::kCompute}) {
    BindingLoss l;
    l.binding = binding;
    if (binding == Binding::kCommunication) {
      l.seconds = seconds, l.devices = 4 * seconds / 0.1, l.estimate = {seconds, low, high};
    }
    b.losses.push_back(l);
  }
  return b;
}

TEST(PoolLosses, AgreeingRunsNarrowTheIntervalBySqrtR) {
  const BindingLosses one = CommunicationLoss(0.010, 0.008, 0.013);
  const BindingLosses four = PoolLosses({one, one, one, one});
  const BindingLoss& l = four.Of(Binding::kCommunication);
  EXPECT_NEAR(l.seconds, 0.010, 1e-15);
  EXPECT_NEAR(l.devices, 0.4, 1e-12);
  EXPECT_NEAR(l.estimate.low, 0.010 - 0.002 / 2, 1e-12);  // half-widths over sqrt(4)
  EXPECT_NEAR(l.estimate.high, 0.010 + 0.003 / 2, 1e-12);
  EXPECT_EQ(PoolLosses({one}).Of(Binding::kCommunication).estimate.low, 0.008);
}

TEST(PoolLosses, RunsThatDisagreeWidenItByTheirSpread) {
  // 8 and 12 ms: mean 10, standard deviation 2.83 ms, t(1) = 6.314: 6.314 x 2.83 / sqrt(2).
  const BindingLosses pooled = PoolLosses(
      {CommunicationLoss(0.008, 0.0079, 0.0081), CommunicationLoss(0.012, 0.0119, 0.0121)});
  const BindingLoss& l = pooled.Of(Binding::kCommunication);
  EXPECT_NEAR(l.seconds, 0.010, 1e-15);
  EXPECT_NEAR(l.estimate.high - l.seconds, 6.314 * 0.004 / std::sqrt(2.0) / std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(l.seconds - l.estimate.low, l.estimate.high - l.seconds, 1e-12);
}

}  // namespace
}  // namespace stepscope::decide
