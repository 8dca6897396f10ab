// HeartbeatBoard: a node-shared board where each rank publishes where it is (step, phase,
// aligned time) with plain memory stores, so a rank stuck in a collective can read which
// ranks stopped making progress and name them.
//
// Only ranks on this host are visible (the board is an MPI-3 shared-memory window on the node
// communicator); ranks on other hosts never appear in a Snapshot.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/status.h"
#include "core/units.h"

namespace stepscope::comm {

// What a rank is doing. Codes are stable: they may be written to logs.
enum class HeartbeatPhase : int32_t {
  kStarting = 0,
  kInput = 1,      // waiting for or loading a batch
  kCompute = 2,    // forward / backward / optimizer
  kAllreduce = 3,  // inside a collective
  kIdle = 4,
  kDone = 5,
};

struct HeartbeatEntry {
  int world_rank = -1;
  int local_rank = -1;
  int64_t step = -1;  // -1 until the rank first publishes
  HeartbeatPhase phase = HeartbeatPhase::kStarting;
  Seconds time = 0;  // Communicator::Now() at publish
  // Communicator::Now() at the rank's last liveness beat (its watchdog's thread beats while the
  // training thread waits); 0 when the rank never beat. A rank waiting in a collective publishes
  // nothing, so only this tells a waiting rank from one that was stopped inside the collective.
  Seconds alive = 0;
};

class HeartbeatBoard {
 public:
  // Collective over comm.node(). Destroy on every local rank (MPI_Win_free is collective)
  // before the Communicator.
  static Result<std::unique_ptr<HeartbeatBoard>> Create(const Communicator& comm);
  ~HeartbeatBoard();

  // Publishes this rank's state: a few plain stores, no MPI call, safe from any one thread.
  void Publish(int64_t step, HeartbeatPhase phase);
  // Records that this rank's process still runs (one store, no MPI call, from any one thread
  // other than Publish's or the same).
  void Beat();
  // Every local rank's last published entry, in local rank order.
  std::vector<HeartbeatEntry> Snapshot() const;

 private:
  struct Slot;  // one cache line per rank, written only by its owner
  HeartbeatBoard() = default;
  const Communicator* comm_ = nullptr;
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<Slot*> slots_;
  Slot* mine_ = nullptr;
};

// World ranks of `entries` that lag: those behind the most advanced step seen, or that have
// not published for longer than `silence` before `now`. Use it when a collective has been
// stuck for a long time to say which ranks did not arrive.
std::vector<int> LaggingRanks(const std::vector<HeartbeatEntry>& entries, Seconds now,
                              Seconds silence);

}  // namespace stepscope::comm
