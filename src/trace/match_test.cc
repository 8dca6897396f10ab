#include "trace/match.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace stepscope::trace {
namespace {

ImportedTrace Rank(int rank, ClockKind clock, std::vector<std::pair<double, double>> colls) {
  ImportedTrace t;
  t.rank = rank;
  t.clock = clock;
  ImportedStep s;
  s.step = 0;
  s.start = 0;
  s.end = 10;
  s.compute = 1 + rank;
  for (auto [b, e] : colls) s.collectives.push_back({"allreduce", "0", 8, -1, b, e});
  t.steps.push_back(s);
  return t;
}

TEST(Match, AlignedClocksUseArrival) {
  // Rank 2 arrives last at both collectives (3.0 and 6.0); skew 2.0 and 1.5.
  std::vector<ImportedTrace> t = {Rank(0, ClockKind::kEpoch, {{1, 4}, {4.5, 7}}),
                                  Rank(1, ClockKind::kEpoch, {{2, 4}, {5, 7}}),
                                  Rank(2, ClockKind::kEpoch, {{3, 4}, {6, 7}})};
  auto m = MatchCollectives(t);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->method, MatchMethod::kAlignedArrival);
  ASSERT_EQ(m->collectives.size(), 2u);
  EXPECT_EQ(m->collectives[0].last_rank, 2);
  EXPECT_DOUBLE_EQ(m->collectives[0].skew, 2.0);
  EXPECT_DOUBLE_EQ(m->collectives[1].skew, 1.5);
  EXPECT_EQ(m->times_last, (std::vector<int>{0, 0, 2}));
}

TEST(Match, UnalignedClocksUseShortestDuration) {
  // Clocks from each rank's own zero: rank 0's collectives are shortest, so it came last.
  std::vector<ImportedTrace> t = {Rank(0, ClockKind::kUnaligned, {{100, 101}}),
                                  Rank(1, ClockKind::kUnaligned, {{3, 9}})};
  auto m = MatchCollectives(t);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->method, MatchMethod::kShortestDuration);
  EXPECT_STREQ(MatchMethodName(m->method), "unaligned");
  EXPECT_EQ(m->collectives[0].last_rank, 0);
  EXPECT_DOUBLE_EQ(m->collectives[0].skew, 0);
}

TEST(Match, DuplicateRanksAreAnError) {
  std::vector<ImportedTrace> t = {Rank(1, ClockKind::kEpoch, {}), Rank(1, ClockKind::kEpoch, {})};
  EXPECT_FALSE(MatchCollectives(t).ok());
}

#ifdef STEPSCOPE_TRACE_DATA_DIR
TEST(Match, LegacyTwoRankTraces) {
  std::string dir = std::string(STEPSCOPE_TRACE_DATA_DIR) + "/pytorch-legacy-cpu-gloo/";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " not present";
  std::vector<ImportedTrace> traces;
  for (const char* f : {"ddp_mlp_rank0.pt.trace.json.gz", "ddp_mlp_rank1.pt.trace.json.gz"}) {
    auto t = ImportTrace(dir + f);
    ASSERT_TRUE(t.ok()) << t.status().message();
    traces.push_back(std::move(*t));
  }
  EXPECT_EQ(traces[0].rank, 0);
  EXPECT_EQ(traces[1].rank, 1);
  auto m = MatchCollectives(traces);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_STREQ(MatchMethodName(m->method), "unaligned");
  EXPECT_EQ(m->collectives.size(), 6u);  // 3 steps x 2 gloo all-reduces, on both ranks
  for (const auto& c : m->collectives) EXPECT_EQ(c.ranks.size(), 2u);
  std::printf("legacy 2-rank: method %s, times last: rank0 %d rank1 %d, busy %.3f / %.3f ms\n",
              MatchMethodName(m->method), m->times_last[0], m->times_last[1], 1e3 * m->busy[0],
              1e3 * m->busy[1]);
}
#endif

}  // namespace
}  // namespace stepscope::trace
