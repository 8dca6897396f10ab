#include "comm/communicator.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "comm/mpi_status.h"
#include "core/clock.h"

namespace stepscope::comm {
namespace {

constexpr int kPingTag = 7001, kPongTag = 7002, kResultTag = 7003;
constexpr int kClockRounds = 10;

// Rank 0 ping-pongs every other rank kClockRounds times. For the round trip with the smallest
// RTT, rank r's clock read t_r lies within [t0, t1] of rank 0's, so offset = (t0 + t1)/2 - t_r
// errs by at most RTT/2. Rank 0 sends {offset, error} back to each rank.
Status AlignClocks(int rank, int size, Seconds* offset, Seconds* error) {
  *offset = 0;
  *error = 0;
  if (size == 1) return Status::Ok();
  MPI_Comm comm = MPI_COMM_WORLD;
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer) {
      double best_rtt = std::numeric_limits<double>::infinity(), best_offset = 0;
      for (int round = 0; round < kClockRounds; ++round) {
        double remote = 0;
        const double t0 = SteadySeconds();
        STEPSCOPE_RETURN_IF_ERROR(
            MpiStatus(MPI_Send(&t0, 1, MPI_DOUBLE, peer, kPingTag, comm), "clock ping", rank));
        STEPSCOPE_RETURN_IF_ERROR(
            MpiStatus(MPI_Recv(&remote, 1, MPI_DOUBLE, peer, kPongTag, comm, MPI_STATUS_IGNORE),
                      "clock pong from rank " + std::to_string(peer), rank));
        const double t1 = SteadySeconds();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          best_offset = 0.5 * (t0 + t1) - remote;
        }
      }
      const double result[2] = {best_offset, 0.5 * best_rtt};
      STEPSCOPE_RETURN_IF_ERROR(
          MpiStatus(MPI_Send(result, 2, MPI_DOUBLE, peer, kResultTag, comm), "clock result", rank));
    }
    return Status::Ok();
  }
  for (int round = 0; round < kClockRounds; ++round) {
    double ping = 0;
    STEPSCOPE_RETURN_IF_ERROR(MpiStatus(
        MPI_Recv(&ping, 1, MPI_DOUBLE, 0, kPingTag, comm, MPI_STATUS_IGNORE), "clock ping", rank));
    const double now = SteadySeconds();
    STEPSCOPE_RETURN_IF_ERROR(
        MpiStatus(MPI_Send(&now, 1, MPI_DOUBLE, 0, kPongTag, comm), "clock pong", rank));
  }
  double result[2] = {0, 0};
  STEPSCOPE_RETURN_IF_ERROR(
      MpiStatus(MPI_Recv(result, 2, MPI_DOUBLE, 0, kResultTag, comm, MPI_STATUS_IGNORE),
                "clock result", rank));
  *offset = result[0];
  *error = result[1];
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Communicator>> Communicator::Init(int* argc, char*** argv) {
  std::unique_ptr<Communicator> comm(new Communicator());
  int initialized = 0, provided = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      return Status::Error("MPI_Init_thread failed (is OpenMPI installed and mpirun working?)");
    }
    comm->owns_mpi_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &comm->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &comm->size_);
  if (provided < MPI_THREAD_SERIALIZED) {
    return Status::Error("rank " + std::to_string(comm->rank_) + ": MPI provides thread level " +
                         std::to_string(provided) + ", stepscope needs MPI_THREAD_SERIALIZED (" +
                         std::to_string(MPI_THREAD_SERIALIZED) +
                         "); use an MPI library built with thread support");
  }
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  comm->hostname_.assign(name, length);

  STEPSCOPE_RETURN_IF_ERROR(
      MpiStatus(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, comm->rank_,
                                    MPI_INFO_NULL, &comm->node_comm_),
                "MPI_Comm_split_type(SHARED)", comm->rank_));
  MPI_Comm_rank(comm->node_comm_, &comm->local_rank_);
  MPI_Comm_size(comm->node_comm_, &comm->local_size_);
  int leader = comm->local_rank_ == 0 ? 1 : 0;
  STEPSCOPE_RETURN_IF_ERROR(
      MpiStatus(MPI_Allreduce(&leader, &comm->num_hosts_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                "counting hosts (MPI_Allreduce)", comm->rank_));
  STEPSCOPE_RETURN_IF_ERROR(
      AlignClocks(comm->rank_, comm->size_, &comm->clock_offset_, &comm->clock_error_)
          .WithContext("aligning clocks"));
  return comm;
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
  if (owns_mpi_) MPI_Finalize();
}

Seconds Communicator::Now() const { return SteadySeconds() + clock_offset_; }

void Communicator::Abort(const std::string& message, int code) const {
  std::fprintf(stderr, "stepscope: rank %d (host %s): %s\n", rank_, hostname_.c_str(),
               message.c_str());
  std::fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // only reached when MPI is not running
}

}  // namespace stepscope::comm
