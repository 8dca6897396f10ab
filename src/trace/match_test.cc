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

// Two process groups whose collectives run concurrently and start in a different order on each
// rank: rank 0 launches A then B, rank 1 B then A. Pairing by order alone would pair rank 0's A
// with rank 1's B; per group, A's arrivals are 1 (rank 0) and 3 (rank 1), B's are 2 and 1.
ImportedTrace TwoGroups(int rank, std::vector<ImportedCollective> colls) {
  ImportedTrace t;
  t.rank = rank;
  t.clock = ClockKind::kEpoch;
  ImportedStep s;
  s.step = 0;
  s.start = 0;
  s.end = 10;
  s.collectives = std::move(colls);
  t.steps.push_back(s);
  return t;
}

TEST(Match, InterleavedGroupsMatchWithinTheirGroup) {
  std::vector<ImportedTrace> t = {
      TwoGroups(0, {{"gloo:all_reduce", "A", 8, -1, 1, 5}, {"gloo:all_reduce", "B", 8, -1, 2, 4}}),
      TwoGroups(1, {{"gloo:all_reduce", "B", 8, -1, 1, 4}, {"gloo:all_reduce", "A", 8, -1, 3, 5}})};
  auto m = MatchCollectives(t);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->collectives.size(), 2u);
  for (const MatchedCollective& c : m->collectives) {
    if (c.group == "A") {
      EXPECT_EQ(c.last_rank, 1);
      EXPECT_DOUBLE_EQ(c.skew, 2.0);
    } else {
      EXPECT_EQ(c.group, "B");
      EXPECT_EQ(c.last_rank, 0);
      EXPECT_DOUBLE_EQ(c.skew, 1.0);
    }
  }
  EXPECT_EQ(m->groups_by_order, 2);
  EXPECT_FALSE(m->by_sequence);
  // The records the analysis pairs by (step, index) carry one index per matched collective.
  std::vector<StepRecord> records;
  for (const ImportedTrace& tr : t) {
    auto r = tr.ToStepRecords();
    records.insert(records.end(), r.begin(), r.end());
  }
  NumberMatchedCollectives(*m, &records);
  ASSERT_EQ(records.size(), 2u);
  // Rank 0's first collective (A, ready 1) and rank 1's second (A, ready 3) share an index.
  EXPECT_EQ(records[0].collectives[0].index, records[1].collectives[1].index);
  EXPECT_EQ(records[0].collectives[1].index, records[1].collectives[0].index);
  EXPECT_NE(records[0].collectives[0].index, records[0].collectives[1].index);
}

TEST(Match, SequenceNumbersSurviveACollectiveMissingOnOneRank) {
  // Rank 1's profile starts after group A's collective 7: by order, its 8 would pair with rank
  // 0's 7; by sequence number, 8 pairs with 8 (arrivals 6 and 7), even across a step boundary
  // that differs between the ranks. Group B has no numbers and pairs by order.
  ImportedTrace r0 =
      TwoGroups(0, {{"allreduce", "A", 8, 7, 1, 5}, {"allreduce", "B", 8, -1, 2, 3}});
  ImportedStep s1;
  s1.step = 1;
  s1.start = 5.5;
  s1.end = 10;
  s1.collectives = {{"allreduce", "A", 8, 8, 6, 9}};
  r0.steps.push_back(s1);
  ImportedTrace r1 =
      TwoGroups(1, {{"allreduce", "B", 8, -1, 2.5, 3}, {"allreduce", "A", 8, 8, 7, 9}});
  auto m = MatchCollectives({r0, r1});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->groups_by_sequence, 1);
  EXPECT_EQ(m->groups_by_order, 1);
  ASSERT_EQ(m->collectives.size(), 2u);  // A 8 and B 0; A 7 is on rank 0 only
  for (const MatchedCollective& c : m->collectives) {
    if (c.group == "A") {
      EXPECT_TRUE(c.by_sequence);
      EXPECT_EQ(c.index, 8);
      EXPECT_EQ(c.ranks, (std::vector<int>{0, 1}));
      EXPECT_EQ(c.arrival, (std::vector<double>{6, 7}));
      EXPECT_EQ(c.steps, (std::vector<int64_t>{1, 0}));
    } else {
      EXPECT_FALSE(c.by_sequence);
      EXPECT_EQ(c.arrival, (std::vector<double>{2, 2.5}));
    }
  }
}

TEST(Match, LegacyTwoRankTraces) {
  std::string dir = std::string(STEPSCOPE_TRACE_DATA_DIR) + "/pytorch-legacy-cpu-gloo/";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
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

}  // namespace
}  // namespace stepscope::trace
