#include "model/host_layout.h"

#include <gtest/gtest.h>

#include "model/simulate.h"

namespace stepscope::model {
namespace {

// Intra-host: 100 GB/s, 2 us; inter-host: 10 GB/s, 20 us; 8 devices per host; 80 MB.
const AlphaBeta kIntra = LinkAlphaBeta(100, 2e-6);
const AlphaBeta kInter = LinkAlphaBeta(10, 20e-6);
constexpr Bytes kBytes = 80'000'000;

TEST(CrossHostAllreduce, HierarchicalHandComputed) {
  // 32 devices = 4 hosts of 8. Inside: 2*7 latency steps, 2*7/8 of 80 MB at 100 GB/s.
  const double intra = 14 * 2e-6 + 14.0 / 8 * 80e6 / 100e9;  // 0.001428 s
  // Between hosts: each host's 10 MB shard on a ring of 4: 2*3 steps, 2*3/4 of 10 MB at 10 GB/s.
  const double inter = 6 * 20e-6 + 6.0 / 4 * 10e6 / 10e9;  // 0.00162 s
  EXPECT_NEAR(
      CrossHostAllreduceSeconds(kIntra, kInter, CrossHostAlgorithm::kHierarchical, 8, 32, kBytes),
      intra + inter, 1e-12);
  EXPECT_NEAR(intra + inter, 0.003048, 1e-9);
}

TEST(CrossHostAllreduce, FlatRingAcrossHostsPaysTheSlowerLinkAtEveryStep) {
  // 32 devices on one ring: 62 steps of 20 us, 62/32 of 80 MB at 10 GB/s.
  const double ring = 62 * 20e-6 + 62.0 / 32 * 80e6 / 10e9;  // 0.0167 s
  EXPECT_NEAR(CrossHostAllreduceSeconds(kIntra, kInter, CrossHostAlgorithm::kRing, 8, 32, kBytes),
              ring, 1e-12);
  // The hierarchical all-reduce moves only a shard between hosts: over 5 times cheaper here.
  EXPECT_GT(ring, 5 * CrossHostAllreduceSeconds(kIntra, kInter, CrossHostAlgorithm::kHierarchical,
                                                8, 32, kBytes));
}

TEST(CrossHostAllreduce, OneHostUsesOnlyTheIntraHostLink) {
  for (CrossHostAlgorithm a : {CrossHostAlgorithm::kHierarchical, CrossHostAlgorithm::kRing}) {
    EXPECT_NEAR(CrossHostAllreduceSeconds(kIntra, kInter, a, 8, 4, kBytes),
                6 * 2e-6 + 6.0 / 4 * 80e6 / 100e9, 1e-12);
    EXPECT_EQ(CrossHostAllreduceSeconds(kIntra, kInter, a, 8, 1, kBytes), 0.0);
  }
}

TEST(CrossHostAllreduce, OneDevicePerHostIsARingOfHosts) {
  EXPECT_NEAR(
      CrossHostAllreduceSeconds(kIntra, kInter, CrossHostAlgorithm::kHierarchical, 1, 16, kBytes),
      AllreduceSeconds(kInter, 16, kBytes), 1e-12);
}

TEST(CrossHostAllreduce, APartlyFilledLastHostCountsAsAHost) {
  // 20 devices at 8 per host: 3 hosts, shards of 10 MB.
  const double expected = 14 * 2e-6 + 14.0 / 8 * 80e6 / 100e9 + 4 * 20e-6 + 4.0 / 3 * 10e6 / 10e9;
  EXPECT_NEAR(
      CrossHostAllreduceSeconds(kIntra, kInter, CrossHostAlgorithm::kHierarchical, 8, 20, kBytes),
      expected, 1e-12);
}

TEST(CrossHostAllreduce, AlgorithmNames) {
  Result<CrossHostAlgorithm> ring = ParseCrossHostAlgorithm("ring");
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring.value(), CrossHostAlgorithm::kRing);
  Result<CrossHostAlgorithm> hierarchical = ParseCrossHostAlgorithm("hierarchical");
  ASSERT_TRUE(hierarchical.ok());
  EXPECT_EQ(Name(hierarchical.value()), "hierarchical");
  Result<CrossHostAlgorithm> bad = ParseCrossHostAlgorithm("tree");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'tree'"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::model
