#include "comm/heartbeat.h"

#include <algorithm>
#include <atomic>
#include <new>

#include "comm/mpi_status.h"

namespace stepscope::comm {

// Seqlock-protected entry: `sequence` is odd while the owner writes, so a reader that sees the
// same even sequence before and after its reads has a consistent copy. The window's base is only
// guaranteed the alignment of a double, so a slot is padded to a cache line's size rather than
// declared cache-line aligned; with the default contiguous layout each rank's slot then starts a
// line of its own whenever the base does.
struct HeartbeatBoard::Slot {
  uint64_t sequence;
  int64_t world_rank;
  int64_t step;
  int64_t phase;
  double time;
  double alive;  // written outside the seqlock: one aligned store, read on its own
  char padding[64 - 6 * 8];
};

Result<std::unique_ptr<HeartbeatBoard>> HeartbeatBoard::Create(const Communicator& comm) {
  static_assert(sizeof(Slot) == 64, "one slot per cache line");
  std::unique_ptr<HeartbeatBoard> board(new HeartbeatBoard());
  board->comm_ = &comm;
  STEPSCOPE_RETURN_IF_ERROR(MpiStatus(MPI_Comm_dup(comm.node(), &board->node_),
                                      "MPI_Comm_dup for the heartbeat board", comm.rank()));
  void* base = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(
      MpiStatus(MPI_Win_allocate_shared(sizeof(Slot), sizeof(Slot), MPI_INFO_NULL, board->node_,
                                        &base, &board->win_),
                "MPI_Win_allocate_shared for the heartbeat board", comm.rank()));
  board->mine_ = new (base)
      Slot{0, comm.rank(), -1, static_cast<int64_t>(HeartbeatPhase::kStarting), comm.Now(), 0, {}};
  board->slots_.resize(comm.local_size());
  for (int j = 0; j < comm.local_size(); ++j) {
    MPI_Aint size = 0;
    int disp = 0;
    void* ptr = nullptr;
    MPI_Win_shared_query(board->win_, j, &size, &disp, &ptr);
    board->slots_[j] = static_cast<Slot*>(ptr);
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, board->win_);
  MPI_Win_sync(board->win_);
  STEPSCOPE_RETURN_IF_ERROR(
      MpiStatus(MPI_Barrier(board->node_), "MPI_Barrier for the heartbeat board", comm.rank()));
  MPI_Win_sync(board->win_);
  return board;
}

HeartbeatBoard::~HeartbeatBoard() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  MPI_Comm_free(&node_);
}

void HeartbeatBoard::Publish(int64_t step, HeartbeatPhase phase) {
  std::atomic_ref<uint64_t> sequence(mine_->sequence);
  const uint64_t s = sequence.load(std::memory_order_relaxed);
  sequence.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::atomic_ref<int64_t>(mine_->step).store(step, std::memory_order_relaxed);
  std::atomic_ref<int64_t>(mine_->phase)
      .store(static_cast<int64_t>(phase), std::memory_order_relaxed);
  std::atomic_ref<double>(mine_->time).store(comm_->Now(), std::memory_order_relaxed);
  sequence.store(s + 2, std::memory_order_release);
}

void HeartbeatBoard::Beat() {
  std::atomic_ref<double>(mine_->alive).store(comm_->Now(), std::memory_order_release);
}

std::vector<HeartbeatEntry> HeartbeatBoard::Snapshot() const {
  std::vector<HeartbeatEntry> entries(slots_.size());
  for (size_t j = 0; j < slots_.size(); ++j) {
    Slot* slot = slots_[j];
    std::atomic_ref<uint64_t> sequence(slot->sequence);
    HeartbeatEntry e;
    e.local_rank = static_cast<int>(j);
    // A writer holds the odd sequence for a few stores only; a bounded retry then yields a
    // copy that is at worst one update old.
    for (int attempt = 0; attempt < 1000; ++attempt) {
      const uint64_t before = sequence.load(std::memory_order_acquire);
      e.world_rank = static_cast<int>(
          std::atomic_ref<int64_t>(slot->world_rank).load(std::memory_order_relaxed));
      e.step = std::atomic_ref<int64_t>(slot->step).load(std::memory_order_relaxed);
      e.phase = static_cast<HeartbeatPhase>(
          std::atomic_ref<int64_t>(slot->phase).load(std::memory_order_relaxed));
      e.time = std::atomic_ref<double>(slot->time).load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (before % 2 == 0 && sequence.load(std::memory_order_relaxed) == before) break;
    }
    e.alive = std::atomic_ref<double>(slot->alive).load(std::memory_order_acquire);
    entries[j] = e;
  }
  return entries;
}

std::vector<int> LaggingRanks(const std::vector<HeartbeatEntry>& entries, Seconds now,
                              Seconds silence) {
  int64_t newest = -1;
  for (const auto& e : entries) newest = std::max(newest, e.step);
  std::vector<int> lagging;
  for (const auto& e : entries) {
    if (e.step < newest || now - e.time > silence) lagging.push_back(e.world_rank);
  }
  std::sort(lagging.begin(), lagging.end());
  return lagging;
}

}  // namespace stepscope::comm
