#include "comm/communicator.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepscope::comm {
namespace {

TEST(Communicator, TopologyOfOneHost) {
  auto comm = Communicator::Init(nullptr, nullptr);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  const Communicator& c = **comm;
  int world_rank = -1, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  EXPECT_EQ(c.rank(), world_rank);
  EXPECT_EQ(c.size(), world_size);
  EXPECT_FALSE(c.hostname().empty());
  // mpirun-local.sh starts every rank on this host.
  EXPECT_EQ(c.num_hosts(), 1);
  EXPECT_EQ(c.local_size(), c.size());
  EXPECT_EQ(c.local_rank(), c.rank());
  EXPECT_NE(c.node(), MPI_COMM_NULL);
}

TEST(Communicator, ClockOffsetsMeasuredWithFiniteError) {
  auto comm = Communicator::Init(nullptr, nullptr);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  const Communicator& c = **comm;
  EXPECT_TRUE(std::isfinite(c.clock_offset()));
  EXPECT_TRUE(std::isfinite(c.clock_error()));
  EXPECT_GE(c.clock_error(), 0.0);
  if (c.rank() == 0) {
    EXPECT_EQ(c.clock_offset(), 0.0);
    EXPECT_EQ(c.clock_error(), 0.0);
  } else {
    EXPECT_GT(c.clock_error(), 0.0);  // a round trip takes some time
  }
  Seconds previous = c.Now();
  for (int i = 0; i < 1000; ++i) {
    const Seconds now = c.Now();
    EXPECT_GE(now, previous);
    previous = now;
  }
}

// Causality on the aligned clock: a message is received after it was sent, up to the
// alignment errors of the two ranks.
TEST(Communicator, AlignedClockRespectsCausality) {
  auto comm = Communicator::Init(nullptr, nullptr);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  const Communicator& c = **comm;
  if (c.size() == 1) return;
  if (c.rank() == 0) {
    for (int peer = 1; peer < c.size(); ++peer) {
      const double sent = c.Now();
      MPI_Send(&sent, 1, MPI_DOUBLE, peer, 11, MPI_COMM_WORLD);
      double peer_sent = 0;
      MPI_Recv(&peer_sent, 1, MPI_DOUBLE, peer, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const double received = c.Now();
      double peer_error = 0;
      MPI_Recv(&peer_error, 1, MPI_DOUBLE, peer, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      EXPECT_GE(received, peer_sent - peer_error) << "from rank " << peer;
    }
  } else {
    double sent = 0;
    MPI_Recv(&sent, 1, MPI_DOUBLE, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const double received = c.Now();
    EXPECT_GE(received, sent - c.clock_error());
    const double now = c.Now(), error = c.clock_error();
    MPI_Send(&now, 1, MPI_DOUBLE, 0, 12, MPI_COMM_WORLD);
    MPI_Send(&error, 1, MPI_DOUBLE, 0, 13, MPI_COMM_WORLD);
  }
}

}  // namespace
}  // namespace stepscope::comm
