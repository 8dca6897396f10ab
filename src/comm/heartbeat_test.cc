#include "comm/heartbeat.h"

#include <gtest/gtest.h>

namespace stepscope::comm {
namespace {

TEST(HeartbeatBoard, EveryRankSeesAllLocalRanks) {
  auto comm = Communicator::Init(nullptr, nullptr);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  const Communicator& c = **comm;
  auto board = HeartbeatBoard::Create(c);
  ASSERT_TRUE(board.ok()) << board.status().message();
  const Seconds before = c.Now();
  (*board)->Publish(100 + c.rank(), HeartbeatPhase::kCompute);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto entries = (*board)->Snapshot();
  ASSERT_EQ(static_cast<int>(entries.size()), c.local_size());
  for (int j = 0; j < c.local_size(); ++j) {
    EXPECT_EQ(entries[j].local_rank, j);
    EXPECT_EQ(entries[j].world_rank, j);  // one host: local order is world order
    EXPECT_EQ(entries[j].step, 100 + entries[j].world_rank);
    EXPECT_EQ(entries[j].phase, HeartbeatPhase::kCompute);
    EXPECT_GE(entries[j].time, before - 1.0);  // clocks aligned to well within a second
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The last rank stays one step behind: everybody names it, and nobody else.
TEST(HeartbeatBoard, NamesTheRankThatStoppedProgressing) {
  auto comm = Communicator::Init(nullptr, nullptr);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  const Communicator& c = **comm;
  auto board = HeartbeatBoard::Create(c);
  ASSERT_TRUE(board.ok()) << board.status().message();
  const int last = c.size() - 1;
  (*board)->Publish(c.rank() == last ? 9 : 10, HeartbeatPhase::kAllreduce);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto lagging = LaggingRanks((*board)->Snapshot(), c.Now(), /*silence=*/3600);
  if (c.size() == 1) {
    EXPECT_TRUE(lagging.empty());
  } else {
    EXPECT_EQ(lagging, std::vector<int>{last});
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A beat is seen by every local rank, apart from the step and phase it leaves alone.
TEST(HeartbeatBoard, EveryRankSeesTheOthersBeat) {
  auto comm = Communicator::Init(nullptr, nullptr);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  const Communicator& c = **comm;
  auto board = HeartbeatBoard::Create(c);
  ASSERT_TRUE(board.ok()) << board.status().message();
  for (const auto& e : (*board)->Snapshot()) EXPECT_EQ(e.alive, 0) << e.world_rank;
  MPI_Barrier(MPI_COMM_WORLD);
  (*board)->Publish(3, HeartbeatPhase::kAllreduce);
  const Seconds before = c.Now();
  (*board)->Beat();
  MPI_Barrier(MPI_COMM_WORLD);
  for (const auto& e : (*board)->Snapshot()) {
    EXPECT_GT(e.alive, 0) << e.world_rank;
    EXPECT_EQ(e.step, 3) << e.world_rank;
    EXPECT_EQ(e.phase, HeartbeatPhase::kAllreduce) << e.world_rank;
  }
  EXPECT_GE((*board)->Snapshot()[c.local_rank()].alive, before);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(LaggingRanks, SilenceAndStepBothCount) {
  std::vector<HeartbeatEntry> entries(3);
  for (int j = 0; j < 3; ++j) {
    entries[j].world_rank = 10 + j;
    entries[j].step = 5;
    entries[j].time = 100.0;
  }
  entries[1].step = 4;
  entries[2].time = 50.0;
  EXPECT_EQ(LaggingRanks(entries, 101.0, 10.0), (std::vector<int>{11, 12}));
  EXPECT_EQ(LaggingRanks(entries, 101.0, 60.0), (std::vector<int>{11}));
}

}  // namespace
}  // namespace stepscope::comm
