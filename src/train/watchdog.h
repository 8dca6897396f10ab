// Watchdog: a rank that dies or stalls must end the job with a message naming it, never leave
// the others hanging. Each rank publishes its phase on the node's heartbeat board; when this
// rank has waited on a collective (or on the loader) longer than the stall timeout, the
// watchdog names the ranks that stopped making progress and aborts the whole job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/heartbeat.h"

namespace stepscope::train {

// What the watchdog needs from the job: the aligned clock, where to publish this rank's phase
// and read the local ranks' heartbeats (the node's board; nothing and empty without one), and
// the way to end the job. A Communicator and its board give all of them; tests give their own.
struct WatchdogHooks {
  std::function<Seconds()> now;
  std::function<void(int64_t step, comm::HeartbeatPhase)> publish;
  std::function<std::vector<comm::HeartbeatEntry>()> heartbeats;
  std::function<void()> beat;  // this process still runs: called by the watchdog's thread
  std::function<void(const std::string&)> abort;  // does not return in a real job

  static WatchdogHooks For(const comm::Communicator& comm, comm::HeartbeatBoard* board);
};

// This rank's own wait, as the watchdog sees it at one check.
struct WaitState {
  int64_t step = -1;
  comm::HeartbeatPhase phase = comm::HeartbeatPhase::kStarting;
  Seconds waited = 0;  // since the last phase change
};

// The message that ends the job, or nullopt while the wait is not a stall: only waits for input
// or in a collective count, and only once they reach `timeout`. `heartbeats` (the local ranks at
// `now`) name the ranks behind the furthest step or not waiting in the collective, and those in
// the collective whose liveness beat is older than half the timeout (stopped inside it).
std::optional<std::string> StallMessage(const WaitState& wait, Seconds timeout, Seconds now,
                                        const std::vector<comm::HeartbeatEntry>& heartbeats);

class Watchdog {
 public:
  Watchdog(WatchdogHooks hooks, Seconds timeout);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Called by the main thread at each phase change.
  void Publish(int64_t step, comm::HeartbeatPhase phase);

 private:
  void Loop();
  void Check();
  void RestartWait(Seconds now);

  WatchdogHooks hooks_;
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
