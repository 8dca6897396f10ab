#include "model/compute_fit.h"

#include <gtest/gtest.h>

#include "model/synthetic_testing.h"

namespace stepscope::model {
namespace {

using testing::SyntheticRun;
using testing::Truth;

TEST(ComputeFit, TheDoubleBatchRunPairsWithTheBaselineAtItsReplicaCount) {
  const Truth t;
  const RunObservation b1 = SyntheticRun(t, "baseline-n1", RunRole::kBaseline, 1, 8);
  const RunObservation b2 = SyntheticRun(t, "baseline-n2", RunRole::kBaseline, 2, 8);
  const RunObservation d2 = SyntheticRun(t, "double_batch-n2", RunRole::kDoubleBatch, 2, 16);
  const RunObservation odd = SyntheticRun(t, "double_batch-n1", RunRole::kDoubleBatch, 1, 24);
  RunObservation empty = SyntheticRun(t, "double_batch-n1", RunRole::kDoubleBatch, 1, 16);
  for (StepRecord& r : empty.records) r.warmup = true;  // no steady step

  const DoubleBatchPair pair = FindDoubleBatchPair({&b1, &b2}, {&odd, &d2, &empty}, 8);
  EXPECT_EQ(pair.baseline, &b2);
  EXPECT_EQ(pair.doubled, &d2);
  const DoubleBatchPair none = FindDoubleBatchPair({&b1, &b2}, {&odd, &empty}, 8);
  EXPECT_EQ(none.baseline, nullptr);
  EXPECT_EQ(none.doubled, nullptr);
}

TEST(ComputeFit, WithoutADoubleBatchRunComputeIsProportionalToTheMicroBatchAndAssumed) {
  Truth t;
  t.forward_fixed = 0, t.backward_fixed = 0;
  const RunObservation b1 = SyntheticRun(t, "baseline-n1", RunRole::kBaseline, 1, 8);
  const RunObservation b2 = SyntheticRun(t, "baseline-n2", RunRole::kBaseline, 2, 8);
  StepModel m;
  m.reference = b2.config;
  FitCompute({b1, b2}, {&b1, &b2}, {}, 0, &m);
  EXPECT_TRUE(m.forward_c0.assumed);
  EXPECT_TRUE(m.backward_c1.assumed);
  EXPECT_NEAR(m.forward_c1.estimate.value, t.forward_per_sample, 1e-9);
  EXPECT_NEAR(m.backward_c1.estimate.value, t.backward_per_sample, 1e-9);
  EXPECT_NEAR(m.optimizer.estimate.value, t.optimizer, 1e-9);
  EXPECT_NEAR(m.compute_ratio.at(1), 1.0, 1e-9);
  EXPECT_NEAR(m.compute_ratio.at(2), 1.0, 1e-9);
}

TEST(ComputeFit, TheDoubleBatchRunGivesTheSlopeAndTheFixedPart) {
  const Truth t;
  const RunObservation b2 = SyntheticRun(t, "baseline-n2", RunRole::kBaseline, 2, 8);
  const RunObservation d2 = SyntheticRun(t, "double_batch-n2", RunRole::kDoubleBatch, 2, 16);
  StepModel m;
  m.reference = b2.config;
  FitCompute({b2, d2}, {&b2}, {&b2, &d2}, 0, &m);
  EXPECT_FALSE(m.forward_c1.assumed);
  EXPECT_NEAR(m.forward_c0.estimate.value, t.forward_fixed, 1e-9);
  EXPECT_NEAR(m.forward_c1.estimate.value, t.forward_per_sample, 1e-9);
  EXPECT_NEAR(m.backward_c0.estimate.value, t.backward_fixed, 1e-9);
  EXPECT_NEAR(m.backward_c1.estimate.value, t.backward_per_sample, 1e-9);
}

}  // namespace
}  // namespace stepscope::model
