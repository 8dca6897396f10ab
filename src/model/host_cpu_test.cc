#include "model/host_cpu.h"

#include <gtest/gtest.h>

namespace stepscope::model {
namespace {

HostCpuPoint HostCpuAt(int n, Seconds cpu, int samples = 4) {
  return {"baseline-n" + std::to_string(n), n, n, 2, cpu, samples};
}

TEST(HostCpu, TheLargestBaselinesDemandBandedByTheOthers) {
  // 2 cores; the one-replica run has no collective and takes less CPU than the others.
  const std::optional<HostCpu> h = FitHostCpu(
      {HostCpuAt(1, 0.004), HostCpuAt(2, 0.0062), HostCpuAt(4, 0.0066), HostCpuAt(8, 0.0065)},
      std::nullopt, std::nullopt);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->cores_per_host, 2);
  EXPECT_EQ(h->max_ranks_per_host, 8);
  EXPECT_DOUBLE_EQ(h->per_step.estimate.value, 0.0065);
  EXPECT_DOUBLE_EQ(h->per_step.estimate.low, 0.0062);  // N >= 2 only
  EXPECT_DOUBLE_EQ(h->per_step.estimate.high, 0.0066);
  EXPECT_TRUE(h->per_sample.assumed);

  // A check of a run with 16 ranks on the host: 16 x 6.5 ms over 2 cores.
  Scenario s;
  s.replicas = 16;
  s.ranks_per_host = 16;
  EXPECT_NEAR(HostCpuFloor(*h, s, 4, Side::kValue), 0.052, 1e-12);
  EXPECT_NEAR(HostCpuFloor(*h, s, 4, Side::kHigh), 16 * 0.0066 / 2, 1e-12);
  // Devices beyond the measured host come on hosts like the largest run's: 8 ranks each.
  s.ranks_per_host.reset();
  s.replicas = 4096;
  EXPECT_NEAR(HostCpuFloor(*h, s, 4, Side::kValue), 0.026, 1e-12);
  // One device per host: the rank has both cores.
  s.devices_per_host = 1;
  EXPECT_NEAR(HostCpuFloor(*h, s, 4, Side::kValue), 0.00325, 1e-12);
}

TEST(HostCpu, TheDoubleBatchRunGivesTheGrowthPerSample) {
  const HostCpuPoint paired = HostCpuAt(4, 0.006, 4);
  const HostCpuPoint doubled = {"double-batch-n4", 4, 4, 2, 0.010, 8};
  const std::optional<HostCpu> h = FitHostCpu({HostCpuAt(2, 0.006), paired}, paired, doubled);
  ASSERT_TRUE(h.has_value());
  EXPECT_FALSE(h->per_sample.assumed);
  EXPECT_NEAR(h->per_sample.estimate.value, 0.001, 1e-12);
  Scenario s;
  s.replicas = 4;
  s.ranks_per_host = 4;
  // 16 samples per rank per step: 6 ms + 12 x 1 ms, four ranks on two cores.
  EXPECT_NEAR(HostCpuFloor(*h, s, 16, Side::kValue), 4 * 0.018 / 2, 1e-12);
}

TEST(HostCpu, NothingToFitWithoutCpuOrCores) {
  EXPECT_FALSE(FitHostCpu({}, std::nullopt, std::nullopt));
  HostCpuPoint no_cores = HostCpuAt(2, 0.006);
  no_cores.cores_per_host = 0;
  EXPECT_FALSE(FitHostCpu({HostCpuAt(1, 0.004), no_cores}, std::nullopt, std::nullopt));
  HostCpuPoint other = HostCpuAt(4, 0.006);
  other.cores_per_host = 8;
  EXPECT_FALSE(FitHostCpu({HostCpuAt(2, 0.006), other}, std::nullopt, std::nullopt));
  EXPECT_FALSE(FitHostCpu({HostCpuAt(2, -1)}, std::nullopt, std::nullopt));  // unknown
}

}  // namespace
}  // namespace stepscope::model
