#include "model/host_cpu.h"

#include <gtest/gtest.h>

namespace stepscope::model {
namespace {

HostCpuPoint HostCpuAt(int n, Seconds cpu, int samples = 4) {
  return {"baseline-n" + std::to_string(n), n, n, 2, cpu, samples, std::nullopt, 0, false};
}

// A baseline whose shared-memory all-reduce of `wire` bytes a step took `reducing` CPU seconds
// on the rank that waited least.
HostCpuPoint ReducingAt(int n, Seconds reducing, Bytes wire = 1000000) {
  HostCpuPoint p = HostCpuAt(n, 0.006);
  p.reduction_cpu_least_rank = reducing;
  p.wire_bytes_per_step = wire;
  p.host_reduces = true;
  return p;
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
  HostCpuPoint doubled = HostCpuAt(4, 0.010, 8);
  doubled.name = "double-batch-n4";
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

TEST(HostCpu, ARankPerCoreGivesTheReductionsCpuPerByte) {
  // 2 cores: N=2 has a core per rank (share 1), N=4 does not and is left out; one replica has
  // no collective. 3 ms for 1 MB at share 1: 3 ns per byte.
  std::optional<HostCpu> h = FitHostCpu(
      {ReducingAt(1, 0), ReducingAt(2, 0.003), ReducingAt(4, 0.009)}, std::nullopt, std::nullopt);
  ASSERT_TRUE(h.has_value());
  ASSERT_TRUE(h->reduction_per_byte.has_value());
  EXPECT_NEAR(h->reduction_per_byte->estimate.value, 3e-9, 1e-20);
  EXPECT_NE(h->reduction_per_byte->how.find("baseline-n2"), std::string::npos);

  // 16 ranks on the 2 cores reduce 1 MB: 16 x 3 ns x 1e6 x 1.875 / 2.
  Scenario s;
  s.replicas = 16;
  s.ranks_per_host = 16;
  EXPECT_NEAR(ReductionCpuFloor(*h, s, 1000000, Side::kValue), 16 * 3e-3 * 1.875 / 2, 1e-12);
  EXPECT_NEAR(ReductionCpuFloor(*h, s, 500000, Side::kValue), 16 * 1.5e-3 * 1.875 / 2, 1e-12);
  // A rank per core: the reduction's own cost, which the fitted all-reduce already holds.
  s.ranks_per_host = 2;
  EXPECT_EQ(ReductionCpuFloor(*h, s, 1000000, Side::kValue), 0);

  // With a core per rank at N = 1 only, or a wire's all-reduce, there is nothing to fit.
  h = FitHostCpu({ReducingAt(1, 0), ReducingAt(4, 0.009)}, std::nullopt, std::nullopt);
  ASSERT_TRUE(h.has_value());
  EXPECT_FALSE(h->reduction_per_byte.has_value());
  HostCpuPoint ring = ReducingAt(2, 0.003);
  ring.host_reduces = false;  // its CPU is mostly polling the wire
  h = FitHostCpu({ReducingAt(1, 0), ring}, std::nullopt, std::nullopt);
  ASSERT_TRUE(h.has_value());
  EXPECT_FALSE(h->reduction_per_byte.has_value());
  s.ranks_per_host = 16;
  EXPECT_EQ(ReductionCpuFloor(*h, s, 1000000, Side::kValue), 0);

  // Several baselines with a core per rank (4 cores): the largest gives the value, the others
  // the band.
  std::vector<HostCpuPoint> four_cores = {ReducingAt(2, 0.003), ReducingAt(4, 0.006)};
  for (HostCpuPoint& p : four_cores) p.cores_per_host = 4;
  h = FitHostCpu(four_cores, std::nullopt, std::nullopt);
  ASSERT_TRUE(h.has_value() && h->reduction_per_byte.has_value());
  EXPECT_NEAR(h->reduction_per_byte->estimate.value, 4e-9, 1e-20);  // 6 ms / 1.5 MB
  EXPECT_NEAR(h->reduction_per_byte->estimate.low, 3e-9, 1e-20);
  EXPECT_NEAR(h->reduction_per_byte->estimate.high, 4e-9, 1e-20);
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
