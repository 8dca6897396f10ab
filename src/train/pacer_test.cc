#include "train/pacer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/clock.h"

namespace stepscope::train {
namespace {

double Spin(int iters) {
  volatile double x = 1;
  for (int i = 0; i < iters; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

TEST(ComputePacer, InactiveAtOne) {
  ComputePacer p(1.0);
  EXPECT_FALSE(p.active());
  p.Begin();
  p.End();
  EXPECT_EQ(p.segments(), 0);
}

// A step that is not counted (warm-up) is paced (the same End) but left out of the counts.
TEST(ComputePacer, AnUncountedStepIsLeftOutOfTheCounts) {
  ComputePacer p(3.0);
  for (int step = 0; step < 3; ++step) {
    p.BeginStep(step, /*counted=*/step > 0);
    p.Begin();
    Spin(300'000);
    p.End();
    EXPECT_EQ(p.segments(), step);
  }
  EXPECT_LE(p.unhonoured(), 2);
}

// Wall time of a paced segment is at least slowdown x its CPU time (a lower bound: sleeping
// can only make it longer, so this holds on a loaded machine too). The test reads the CPU time
// before End(), which reads it again: what End() itself spends (more under a sanitizer) is not
// counted against it.
TEST(ComputePacer, WallAtLeastSlowdownTimesCpu) {
  ComputePacer p(3.0);
  const double wall0 = SteadySeconds();
  const double cpu0 = ThreadCpuSeconds();
  p.Begin();
  Spin(3'000'000);
  const double cpu = ThreadCpuSeconds() - cpu0;
  p.End();
  const double wall = SteadySeconds() - wall0;
  EXPECT_GE(wall, 3.0 * cpu * 0.99);
  EXPECT_EQ(p.segments(), 1);
  // It slept for the difference, unless a busy host had already stretched the segment that far.
  EXPECT_LE(p.slept(), wall);
  EXPECT_TRUE(p.slept() > 0 || p.unhonoured() == 1 || wall >= 3.0 * cpu);
}

// A step with twice the work is paced to twice the time per unit of work of the history: a
// lower bound, robust on a loaded machine.
TEST(ComputePacer, EachStepIsPacedByItsOwnWork) {
  ComputePacer p(3.0);
  double cpu_one = 0;
  for (int64_t step = 0; step < 3; ++step) {
    p.BeginStep(step);
    const double cpu0 = ThreadCpuSeconds();
    p.Begin();
    Spin(2'000'000);
    p.End(1);
    cpu_one = std::max(cpu_one, ThreadCpuSeconds() - cpu0);
  }
  // The same real work, declared as 4 units: the history holds c, c, c and c / 4, whose median
  // (c) sets the pace per unit.
  p.BeginStep(3);
  const double wall0 = SteadySeconds();
  const double cpu0 = ThreadCpuSeconds();
  p.Begin();
  Spin(2'000'000);
  const double cpu = ThreadCpuSeconds() - cpu0;
  p.End(4);
  const double wall = SteadySeconds() - wall0;
  EXPECT_GE(wall, 3.0 * 4 * std::min(cpu, 0.5 * cpu_one));
}

// Once calibrated, a segment is paced to the common cost per unit of work, not its own.
TEST(ComputePacer, ACalibratedDeviceKeepsTheCommonCost) {
  ComputePacer p(2.0);
  p.BeginStep(0);
  p.Begin();
  Spin(200'000);
  p.End(1);
  ASSERT_EQ(p.CostPerWork().size(), 1u);
  EXPECT_GT(p.CostPerWork()[0], 0);
  p.Calibrate({0.02});  // 20 ms per unit: far above the spin's own cost
  p.BeginStep(1);
  const double wall0 = SteadySeconds();
  p.Begin();
  Spin(200'000);
  p.End(1);
  EXPECT_GE(SteadySeconds() - wall0, 2.0 * 0.02 * 0.99);
}

// The calibration figure is the least cost per unit of work in the recent steps: cold first
// steps (here three slow ones against two fast) do not set the device's speed, as a median would.
TEST(ComputePacer, CostPerWorkIsTheLeastRecentCost) {
  ComputePacer p(1.5);
  double fast_cpu = 1e9;
  for (int64_t step = 0; step < 5; ++step) {
    p.BeginStep(step);
    const double cpu0 = ThreadCpuSeconds();
    p.Begin();
    Spin(step < 3 ? 4'000'000 : 200'000);
    p.End(1);
    // Around Begin and End both: the pacer's own reading lies inside (its sleep takes no CPU),
    // so an instrumented build's slower End cannot put it above this one.
    const double cpu = ThreadCpuSeconds() - cpu0;
    if (step >= 3) fast_cpu = std::min(fast_cpu, cpu);
  }
  ASSERT_EQ(p.CostPerWork().size(), 1u);
  EXPECT_LE(p.CostPerWork()[0], fast_cpu * 1.01 + 1e-6);
  EXPECT_GT(p.CostPerWork()[0], 0);
}

TEST(CoTenant, TakesItsShareOnAverageInBurstsOfSteps) {
  const CoTenant c{0.2, 7};
  int active = 0;
  double sum = 0;
  for (int64_t step = 0; step < 2000; ++step) {
    const double share = CoTenantShare(c, step);
    EXPECT_TRUE(share == 0 || share == 0.4) << share;
    active += share > 0;
    sum += share;
  }
  EXPECT_NEAR(active / 2000.0, 0.5, 0.05);
  EXPECT_NEAR(sum / 2000.0, 0.2, 0.02);
  EXPECT_EQ(CoTenantShare({0.6, 7}, 3) == 0 ? 0.0 : 0.9, CoTenantShare({0.6, 7}, 3));
  EXPECT_EQ(CoTenantShare({}, 3), 0);
}

// In a step where the co-tenant is active, a segment takes at least its CPU time / (1 - share)
// even without an emulated slowdown.
TEST(ComputePacer, ACoTenantStretchesTheStepsItIsActiveIn) {
  const CoTenant c{0.3, 11};
  int64_t step = 0;
  while (CoTenantShare(c, step) == 0) ++step;
  ComputePacer p(1.0, c);
  EXPECT_TRUE(p.active());
  p.BeginStep(step);
  EXPECT_DOUBLE_EQ(p.co_tenant_share(), 0.6);
  const double wall0 = SteadySeconds();
  const double cpu0 = ThreadCpuSeconds();
  p.Begin();
  Spin(2'000'000);
  const double cpu = ThreadCpuSeconds() - cpu0;
  p.End();
  const double wall = SteadySeconds() - wall0;
  EXPECT_GE(wall, cpu / (1 - 0.6) * 0.95);
}

}  // namespace
}  // namespace stepscope::train
