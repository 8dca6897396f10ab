#include "decide/script_collectives.h"

#include <gtest/gtest.h>

namespace stepscope::decide {
namespace {

analysis::RankDecomposition Rank(int rank, Seconds overhead, Seconds script_comm) {
  analysis::RankDecomposition r;
  r.rank = rank;
  r.mean.overhead = overhead;
  r.mean.script_comm = script_comm;
  return r;
}

analysis::Decomposition Job(std::vector<analysis::RankDecomposition> ranks) {
  analysis::Decomposition d;
  d.job.step = 0.100;
  d.ranks = std::move(ranks);
  return d;
}

TEST(ScriptCollectivesEvidence, TheRankWaitedForThereIsNamedByItsOwnWork) {
  // Rank 0 logs for 12 ms after each step; rank 1 waits 10 ms for it in the script's barrier.
  const std::optional<std::string> e = ScriptCollectivesEvidence(
      Job({Rank(0, 0.0125, 0.0005), Rank(1, 0.0110, 0.0100)}),
      {{"dist.barrier", 1}, {"dist.all_reduce", 2.5}, {"dist.all_gather", 2.0 / 59}}, 0.02);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->find("rank 1 is blocked 10.00 ms per step (10% of the step) in the job's own "
                    "collectives"),
            std::string::npos)
      << *e;
  EXPECT_NE(e->find("it waits there for rank 0, which spends 12.00 ms per step of its own"),
            std::string::npos)
      << *e;
  // The most frequent first; one made at an epoch's end by how many steps apart.
  EXPECT_NE(e->find("(dist.all_reduce 2.5 a step, dist.barrier 1 a step, dist.all_gather 1 every "
                    "29.5 steps)"),
            std::string::npos)
      << *e;
}

TEST(ScriptCollectivesEvidence, CollectivesThatCostEveryRankAlikeAreSaidToCostTheirOwnTime) {
  const std::optional<std::string> e =
      ScriptCollectivesEvidence(Job({Rank(0, 0.006, 0.005), Rank(1, 0.0065, 0.0055)}), {}, 0.02);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->find("rank 1 is blocked 5.50 ms"), std::string::npos) << *e;
  EXPECT_NE(e->find("made every K steps instead of every step"), std::string::npos) << *e;
  EXPECT_EQ(e->find("waits there for rank"), std::string::npos) << *e;
  EXPECT_NE(e->find("(a barrier, a loss all-reduced to log it"), std::string::npos) << *e;
}

TEST(ScriptCollectivesEvidence, NothingWhereTheyAreSmallOrNotRecorded) {
  EXPECT_FALSE(ScriptCollectivesEvidence(Job({Rank(0, 0.01, 0.0019), Rank(1, 0.01, 0)}), {}, 0.02));
  EXPECT_FALSE(ScriptCollectivesEvidence(Job({Rank(0, 0.01, 0), Rank(1, 0.01, 0)}), {}, 0.02));
  EXPECT_FALSE(ScriptCollectivesEvidence(Job({}), {}, 0.02));
}

}  // namespace
}  // namespace stepscope::decide
