// Watchdog: a rank that dies or stalls must end the job with a message naming it, never leave
// the others hanging. Each rank publishes its phase on the node's heartbeat board; when this
// rank has waited on a collective (or on the loader) longer than the stall timeout, the
// watchdog names the ranks that stopped making progress and aborts the whole job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "comm/communicator.h"
#include "comm/heartbeat.h"

namespace stepscope::train {

class Watchdog {
 public:
  // `board` may be null (then only this rank's own waits are watched).
  Watchdog(const comm::Communicator& comm, comm::HeartbeatBoard* board, Seconds timeout);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Called by the main thread at each phase change.
  void Publish(int64_t step, comm::HeartbeatPhase phase);

 private:
  void Loop();
  void Check();

  const comm::Communicator& comm_;
  comm::HeartbeatBoard* board_;
  Seconds timeout_;
  std::atomic<int64_t> step_{-1};
  std::atomic<int32_t> phase_{0};
  std::atomic<double> since_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace stepscope::train
