// The latency probe against an in-process all-reduce: the run's own reduction path, one small
// bucket per probe, the ranks brought together before each, and the durations taken as the
// ranks' least.
#include "train/latency_probe.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "train/fake_allreducer_testing.h"

namespace stepscope::train {
namespace {

// Counts the hooks' calls; the ranks' least is each value halved (as if another rank saw half).
struct CountingHooks {
  int together = 0, least = 0;
  Status fail_together;
  ProbeHooks hooks() {
    return {[this] {
              ++together;
              return fail_together;
            },
            [this](std::vector<double>* v) {
              ++least;
              for (double& x : *v) x /= 2;
              return Status::Ok();
            }};
  }
};

TEST(LatencyProbe, ReducesOneSmallBucketPerProbeAtWirePrecisionAfterTheRanksMeet) {
  FakeAllreducer fake(2);
  CountingHooks counting;
  ReducerOptions options;
  options.dtype = comm::WireDtype::kBf16;
  options.bucket_mb = 1e-4;  // the run's cap does not cut the probe's payload
  options.measure_wire_error = true;
  Result<LatencyProbe> probe =
      ProbeLatency(&fake, options, EmulationOptions{}, 2, SteadySeconds, counting.hooks(), 5);
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  EXPECT_EQ(fake.calls(), kLatencyProbeWarmup + 5);  // no fp32 yardstick beside the wire's
  EXPECT_EQ(fake.elements(), (kLatencyProbeWarmup + 5) * kLatencyProbeFloats);
  EXPECT_EQ(probe->bytes, 2 * kLatencyProbeFloats);  // bf16 on the wire
  ASSERT_EQ(probe->seconds.size(), 5u);
  EXPECT_EQ(counting.together, kLatencyProbeWarmup + 5);
  EXPECT_EQ(counting.least, 1);  // no link to agree on: only the durations
  for (Seconds s : probe->seconds) EXPECT_GE(s, 0);
}

TEST(LatencyProbe, AnEmulatedLinkPacesEachProbeAsTheStepsAreAndTheRanksAgreeOnItsQuickest) {
  FakeAllreducer fake(4);
  CountingHooks counting;
  EmulationOptions link;
  link.link_gbps = 1;
  link.link_latency_us = 500;  // 6 steps at 4 ranks: 3 ms a probe
  Result<LatencyProbe> probe =
      ProbeLatency(&fake, ReducerOptions{}, link, 4, SteadySeconds, counting.hooks(), 3);
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  EXPECT_EQ(counting.least, kLatencyProbeWarmup + 3 + 1);  // each probe's quickest, then the end
  const Seconds paced = comm::RingAllreduceSeconds(probe->bytes, 4, 1, 500e-6);
  // Each probe slept at least the link's time; the least over the ranks halved it.
  for (Seconds s : probe->seconds) EXPECT_GE(s, paced / 2 - 1e-9);
}

TEST(LatencyProbe, MoreRanksThanThePayloadsFloatsGetOneFloatEach) {
  FakeAllreducer fake(1000);
  CountingHooks counting;
  Result<LatencyProbe> probe = ProbeLatency(&fake, ReducerOptions{}, EmulationOptions{}, 1000,
                                            SteadySeconds, counting.hooks(), 1);
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  EXPECT_EQ(probe->bytes, 4 * 1000);
}

TEST(LatencyProbe, AFailedReductionOrMeetingIsNamedAsTheProbes) {
  FakeAllreducer fake(2);
  fake.fail_ = true;
  CountingHooks counting;
  Result<LatencyProbe> probe = ProbeLatency(&fake, ReducerOptions{}, EmulationOptions{}, 2,
                                            SteadySeconds, counting.hooks(), 3);
  ASSERT_FALSE(probe.ok());
  EXPECT_NE(probe.status().message().find("latency probe 1"), std::string::npos)
      << probe.status().message();
  EXPECT_NE(probe.status().message().find("link down"), std::string::npos);

  FakeAllreducer healthy(2);
  counting.fail_together = Status::Error("MPI_Barrier failed");
  probe = ProbeLatency(&healthy, ReducerOptions{}, EmulationOptions{}, 2, SteadySeconds,
                       counting.hooks(), 3);
  ASSERT_FALSE(probe.ok());
  EXPECT_NE(probe.status().message().find("latency probe 1: MPI_Barrier failed"), std::string::npos)
      << probe.status().message();
  EXPECT_EQ(healthy.calls(), 0);
}

}  // namespace
}  // namespace stepscope::train
