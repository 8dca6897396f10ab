// Communicator: MPI bootstrap, rank and size, host topology, and a clock aligned across ranks.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "core/status.h"
#include "core/units.h"

namespace stepscope::comm {

class Communicator {
 public:
  // Initialises MPI with at least MPI_THREAD_SERIALIZED (without mpirun: a world of one),
  // learns the topology and measures each rank's clock offset to rank 0. Collective. If MPI
  // is already initialised (e.g. by a test main), it is used as is and left initialised.
  static Result<std::unique_ptr<Communicator>> Init(int* argc, char*** argv);
  ~Communicator();  // MPI_Finalize

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // rank among ranks on this host
  int local_size() const { return local_size_; }
  int num_hosts() const { return num_hosts_; }
  const std::string& hostname() const { return hostname_; }
  MPI_Comm world() const { return MPI_COMM_WORLD; }
  MPI_Comm node() const { return node_comm_; }  // ranks sharing memory with this one

  // Seconds on a clock aligned to rank 0's (steady clock + measured offset).
  Seconds Now() const;
  Seconds clock_offset() const { return clock_offset_; }
  // Upper bound on the alignment error (half the best round trip when measured).
  Seconds clock_error() const { return clock_error_; }

  // Ends the whole job with `message` naming this rank; never returns.
  [[noreturn]] void Abort(const std::string& message, int code = 1) const;

 private:
  Communicator() = default;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, num_hosts_ = 1;
  std::string hostname_;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  Seconds clock_offset_ = 0, clock_error_ = 0;
  bool owns_mpi_ = false;  // Init called MPI_Init_thread, so the destructor finalizes
};

}  // namespace stepscope::comm
