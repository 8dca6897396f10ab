#include "decide/binding_losses.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace stepscope::decide
