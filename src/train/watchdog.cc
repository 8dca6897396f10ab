#include "train/watchdog.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace stepscope::train {
namespace {

const char* PhaseName(comm::HeartbeatPhase p) {
  switch (p) {
    case comm::HeartbeatPhase::kStarting:
      return "starting";
    case comm::HeartbeatPhase::kInput:
      return "waiting for input";
    case comm::HeartbeatPhase::kCompute:
      return "computing";
    case comm::HeartbeatPhase::kAllreduce:
      return "in an all-reduce";
    case comm::HeartbeatPhase::kIdle:
      return "idle";
    case comm::HeartbeatPhase::kDone:
      return "done";
  }
  return "?";
}

}  // namespace

Watchdog::Watchdog(const comm::Communicator& comm, comm::HeartbeatBoard* board, Seconds timeout)
    : comm_(comm), board_(board), timeout_(timeout) {
  since_ = comm_.Now();
  thread_ = std::thread([this] { Loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::Publish(int64_t step, comm::HeartbeatPhase phase) {
  step_.store(step, std::memory_order_relaxed);
  phase_.store(static_cast<int32_t>(phase), std::memory_order_relaxed);
  since_.store(comm_.Now(), std::memory_order_relaxed);
  if (board_) board_->Publish(step, phase);
}

void Watchdog::Loop() {
  // Sleeps between checks (never spins); wakes at once on destruction.
  const auto period = std::chrono::duration<double>(std::min(1.0, timeout_ / 4));
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period, [&] { return stop_; })) Check();
}

void Watchdog::Check() {
  const auto phase = static_cast<comm::HeartbeatPhase>(phase_.load(std::memory_order_relaxed));
  const bool waiting =
      phase == comm::HeartbeatPhase::kAllreduce || phase == comm::HeartbeatPhase::kInput;
  const Seconds now = comm_.Now();
  const Seconds waited = now - since_.load(std::memory_order_relaxed);
  if (!waiting || waited < timeout_) return;
  const int64_t step = step_.load(std::memory_order_relaxed);
  std::string message;
  if (phase == comm::HeartbeatPhase::kInput) {
    message = "waited " + std::to_string(static_cast<int>(waited)) + " s for a batch at step " +
              std::to_string(step) +
              ": the input pipeline is stuck (check --data/--text and the loader options)";
  } else {
    message = "waited " + std::to_string(static_cast<int>(waited)) +
              " s in an all-reduce at step " + std::to_string(step) + "; ";
    std::string names;
    if (board_) {
      const auto entries = board_->Snapshot();
      // Ranks that are behind the furthest step, or at it but not waiting in the collective.
      int64_t furthest = -1;
      for (const auto& e : entries) furthest = std::max(furthest, e.step);
      for (const auto& e : entries) {
        const bool waiting_here = e.step == furthest && e.phase == comm::HeartbeatPhase::kAllreduce;
        if (!waiting_here && e.phase != comm::HeartbeatPhase::kDone) {
          names += (names.empty() ? "" : "; ") + std::string("rank ") +
                   std::to_string(e.world_rank) + " stopped at step " + std::to_string(e.step) +
                   " (" + PhaseName(e.phase) + ", silent for " +
                   std::to_string(static_cast<int>(now - e.time)) + " s)";
        }
      }
    }
    message +=
        names.empty() ? "a rank on another host did not arrive (no local rank is behind)" : names;
    message += ". Ending the job (--stall-timeout " + std::to_string(timeout_) + " s)";
  }
  comm_.Abort(message);
}

}  // namespace stepscope::train
