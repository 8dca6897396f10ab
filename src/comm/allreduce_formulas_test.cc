#include <gtest/gtest.h>

#include "comm/allreduce.h"

namespace stepscope::comm {
namespace {

TEST(AllreduceNames, ParseAndPrintRoundTrip) {
  for (auto a : {AllreduceAlgorithm::kMpi, AllreduceAlgorithm::kRing, AllreduceAlgorithm::kShm}) {
    auto parsed = ParseAllreduceAlgorithm(ToString(a));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, a);
  }
  for (auto d : {WireDtype::kFp32, WireDtype::kBf16, WireDtype::kFp16}) {
    auto parsed = ParseWireDtype(ToString(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
  }
  auto bad = ParseAllreduceAlgorithm("tree");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("tree"), std::string::npos);
  EXPECT_FALSE(ParseWireDtype("int8").ok());
}

TEST(AllreduceFormulas, WireBytes) {
  EXPECT_EQ(WireBytes(WireDtype::kFp32, 10), 40);
  EXPECT_EQ(WireBytes(WireDtype::kBf16, 10), 20);
  EXPECT_EQ(WireBytes(WireDtype::kFp16, 0), 0);
}

TEST(AllreduceFormulas, BusBandwidthFollowsNcclTests) {
  // 1 GB in 1 s: algbw 1 GB/s; busbw = 2(N-1)/N.
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidthGBps(1'000'000'000, 1.0, 2), 1.0);
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidthGBps(1'000'000'000, 1.0, 4), 1.5);
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidthGBps(1'000'000'000, 0.5, 8), 3.5);
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidthGBps(1'000'000'000, 1.0, 1), 0.0);
}

TEST(AllreduceFormulas, RingTimeModel) {
  // N = 4, 1 GB at 10 GB/s, 1 ms per hop: 6 * 1e-3 + 1.5 * 0.1 = 0.156 s.
  EXPECT_DOUBLE_EQ(RingAllreduceSeconds(1'000'000'000, 4, 10.0, 1e-3), 0.156);
  EXPECT_DOUBLE_EQ(RingAllreduceSeconds(1'000'000'000, 1, 10.0, 1e-3), 0.0);
  // The bandwidth term saturates at 2x bytes/bandwidth as N grows.
  EXPECT_NEAR(RingAllreduceSeconds(1'000'000'000, 1000, 10.0, 0.0), 0.2, 1e-3);
}

}  // namespace
}  // namespace stepscope::comm
