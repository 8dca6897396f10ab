#include "analysis/attribution.h"

#include <gtest/gtest.h>

#include "analysis/synthetic_testing.h"

namespace stepscope::analysis {
namespace {

double Sum(const Attribution& a) {
  double s = 0;
  for (const WaterfallLine& l : a.lines) s += l.devices;
  return s;
}

TEST(Attribution, SumsExactlyToLostDevices) {
  const int ns[] = {2, 3, 4, 8, 16};
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SyntheticRunSpec one;
    one.seed = seed;
    one.jitter = 0.1;
    one.buckets = 3;
    one.input_wait = 0.001 * seed;
    one.overhead = 0.0003 * seed;
    const Decomposition ref = DecomposeSpec(one);
    for (int n : ns) {
      SyntheticRunSpec spec = one;
      spec.replicas = n;
      spec.seed = seed * 100 + n;
      spec.bucket_time = 0.001 * (n % 5 + 1);
      if (n == 4) spec.rank_compute_factor[1] = 1.2;
      const Decomposition dn = DecomposeSpec(spec);
      Result<Attribution> a = Attribute(ref, dn);
      ASSERT_TRUE(a.ok()) << a.status().message();
      const double speedup = dn.samples_per_s / ref.samples_per_s;
      EXPECT_NEAR(a->lost_devices, n - speedup, 1e-12);
      EXPECT_NEAR(Sum(*a), a->lost_devices, 1e-9) << "seed " << seed << " n " << n;
      // Equal samples per rank: the ideal formula holds and there is no residual.
      EXPECT_NEAR(a->lost_devices, n * (dn.job.step - ref.job.step) / dn.job.step, 1e-9);
      EXPECT_EQ(a->lines.size(), 5u);
    }
  }
}

TEST(Attribution, ResidualWhenSamplesPerStepDiffer) {
  SyntheticRunSpec one;
  const Decomposition ref = DecomposeSpec(one);
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.samples_per_rank = 48;  // not the reference's 32
  const Decomposition dn = DecomposeSpec(spec);
  Result<Attribution> a = Attribute(ref, dn);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->lines.size(), 6u);
  EXPECT_EQ(a->lines.back().component, Component::kResidual);
  EXPECT_NEAR(Sum(*a), 4 - dn.samples_per_s / ref.samples_per_s, 1e-9);
}

TEST(Attribution, TransferShowsUpAsItsOwnLine) {
  SyntheticRunSpec one;
  one.compute = 0.010;
  one.overhead = 0;
  SyntheticRunSpec four = one;
  four.replicas = 4;
  four.bucket_time = 0.010;  // one bucket, fully exposed: TN = 2 T1
  Result<Attribution> a = Attribute(DecomposeSpec(one), DecomposeSpec(four));
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(a->lost_devices, 2.0, 1e-9);
  EXPECT_EQ(a->lines[3].component, Component::kTransfer);
  EXPECT_NEAR(a->lines[3].devices, 2.0, 1e-9);
}

TEST(Attribution, EstimatedReferenceDropsCommunication) {
  SyntheticRunSpec four;
  four.replicas = 4;
  four.bucket_time = 0.005;
  const Decomposition dn = DecomposeSpec(four);
  const Decomposition ref = EstimateSingleReplica(dn);
  EXPECT_EQ(ref.replicas, 1);
  EXPECT_NEAR(ref.job.step, dn.job.step - 0.005, 1e-9);
  EXPECT_NEAR(ref.samples_per_step, 32, 1e-12);
}

// A lone process waits for no peer in the job's own collectives, but does the work that one
// rank did alone while the others waited there.
TEST(Attribution, EstimatedReferenceDropsTheWaitsInTheJobsOwnCollectives) {
  Decomposition dn;
  dn.replicas = 2;
  dn.samples_per_step = 64;
  const auto rank = [](int id, double overhead, double script_comm) {
    RankDecomposition r;
    r.rank = id;
    r.mean.compute = 0.020;
    r.mean.exposed_comm = 0.002;
    r.mean.overhead = overhead;
    r.mean.script_comm = script_comm;
    r.mean.step = r.mean.compute + r.mean.exposed_comm + overhead;
    return r;
  };
  // Rank 0 logs for 10 ms; rank 1 waits 10 ms for it at the script's barrier.
  dn.ranks = {rank(0, 0.0105, 0.0002), rank(1, 0.0110, 0.0100)};
  Decomposition ref = EstimateSingleReplica(dn);
  EXPECT_NEAR(ref.job.overhead, 0.0103, 1e-12);  // rank 0's own work, not rank 1's wait
  EXPECT_NEAR(ref.job.step, 0.0303, 1e-12);
  EXPECT_EQ(ref.job.script_comm, 0);
  // Every rank waits alike (a loss all-reduced each step): the wait goes.
  dn.ranks = {rank(0, 0.004, 0.0012), rank(1, 0.0041, 0.0013)};
  ref = EstimateSingleReplica(dn);
  EXPECT_NEAR(ref.job.overhead, 0.0028, 1e-12);
  EXPECT_NEAR(ref.job.step, 0.0228, 1e-12);
}

}  // namespace
}  // namespace stepscope::analysis
