#include "train/pacer.h"

#include <gtest/gtest.h>

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

// Wall time of a paced segment is at least slowdown x its CPU time (a lower bound: sleeping
// can only make it longer, so this holds on a loaded machine too).
TEST(ComputePacer, WallAtLeastSlowdownTimesCpu) {
  ComputePacer p(3.0);
  const double wall0 = SteadySeconds();
  const double cpu0 = ThreadCpuSeconds();
  p.Begin();
  Spin(3'000'000);
  p.End();
  const double cpu = ThreadCpuSeconds() - cpu0;
  const double wall = SteadySeconds() - wall0;
  EXPECT_GE(wall, 3.0 * cpu * 0.99);
  EXPECT_EQ(p.segments(), 1);
  // It slept for the difference, unless a busy host had already stretched the segment that far.
  EXPECT_LE(p.slept(), wall);
  EXPECT_TRUE(p.slept() > 0 || p.unhonoured() == 1 || wall >= 3.0 * cpu);
}

}  // namespace
}  // namespace stepscope::train
