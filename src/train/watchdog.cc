#include "train/watchdog.h"

#include <fmt/format.h>

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

std::string WholeSeconds(Seconds s) { return std::to_string(static_cast<int>(s)); }

}  // namespace

WatchdogHooks WatchdogHooks::For(const comm::Communicator& comm, comm::HeartbeatBoard* board) {
  WatchdogHooks hooks;
  hooks.now = [&comm] { return comm.Now(); };
  hooks.publish = [board](int64_t step, comm::HeartbeatPhase phase) {
    if (board) board->Publish(step, phase);
  };
  hooks.heartbeats = [board] {
    return board ? board->Snapshot() : std::vector<comm::HeartbeatEntry>{};
  };
  hooks.beat = [board] {
    if (board) board->Beat();
  };
  hooks.abort = [&comm](const std::string& message) { comm.Abort(message); };
  return hooks;
}

std::optional<std::string> StallMessage(const WaitState& wait, Seconds timeout, Seconds now,
                                        const std::vector<comm::HeartbeatEntry>& heartbeats) {
  const bool waiting =
      wait.phase == comm::HeartbeatPhase::kAllreduce || wait.phase == comm::HeartbeatPhase::kInput;
  if (!waiting || wait.waited < timeout) return std::nullopt;
  const std::string step = std::to_string(wait.step);
  if (wait.phase == comm::HeartbeatPhase::kInput) {
    return "waited " + WholeSeconds(wait.waited) + " s for a batch at step " + step +
           ": the input pipeline is stuck (check --data/--text and the loader options)";
  }
  std::string message =
      "waited " + WholeSeconds(wait.waited) + " s in an all-reduce at step " + step + "; ";
  // Ranks that are behind the furthest step, or at it but not waiting in the collective.
  int64_t furthest = -1;
  for (const auto& e : heartbeats) {
    if (e.phase != comm::HeartbeatPhase::kDone) furthest = std::max(furthest, e.step);
  }
  // A rank waiting in the collective publishes nothing, but its watchdog's thread beats; one
  // whose beat is stale was stopped (or starved) inside the collective.
  const Seconds beat_silence = timeout / 2;
  std::string names;
  for (const auto& e : heartbeats) {
    if (e.phase == comm::HeartbeatPhase::kDone) continue;
    const bool waiting_here = e.step == furthest && e.phase == comm::HeartbeatPhase::kAllreduce;
    const bool beating = e.alive <= 0 || now - e.alive <= beat_silence;
    if (waiting_here && beating) continue;
    const Seconds silent = waiting_here ? now - e.alive : now - e.time;
    names += (names.empty() ? "" : "; ") + std::string("rank ") + std::to_string(e.world_rank) +
             " stopped at step " + std::to_string(e.step) + " (" + PhaseName(e.phase) +
             ", silent for " + WholeSeconds(silent) + " s)";
  }
  message +=
      names.empty() ? "a rank on another host did not arrive (no local rank is behind)" : names;
  message += fmt::format(". Ending the job (--stall-timeout {:g} s)", timeout);
  return message;
}

Watchdog::Watchdog(WatchdogHooks hooks, Seconds timeout)
    : hooks_(std::move(hooks)), timeout_(timeout) {
  since_ = hooks_.now();
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
  since_.store(hooks_.now(), std::memory_order_relaxed);
  hooks_.publish(step, phase);
}

void Watchdog::Loop() {
  // Sleeps between checks (never spins); wakes at once on destruction.
  const auto period = std::chrono::duration<double>(std::min(1.0, timeout_ / 4));
  std::unique_lock<std::mutex> lock(mu_);
  // A gap of several periods between checks (on the host's steady clock) means this process
  // itself was stopped (SIGSTOP, a suspended host): the time it spent stopped is no evidence
  // against the other ranks, so its wait starts again rather than ending the job the moment it
  // runs again.
  const auto suspended = std::chrono::duration<double>(std::max(4 * period.count(), timeout_ / 2));
  if (hooks_.beat) hooks_.beat();
  auto last = std::chrono::steady_clock::now();
  while (!cv_.wait_for(lock, period, [&] { return stop_; })) {
    if (hooks_.beat) hooks_.beat();
    const auto now = std::chrono::steady_clock::now();
    if (now - last > suspended) RestartWait(hooks_.now());
    last = now;
    Check();
  }
}

void Watchdog::RestartWait(Seconds now) {
  // Only moves the start forward: a phase change published meanwhile stays as it is.
  Seconds since = since_.load(std::memory_order_relaxed);
  while (since < now && !since_.compare_exchange_weak(since, now, std::memory_order_relaxed)) {
  }
}

void Watchdog::Check() {
  WaitState wait;
  wait.step = step_.load(std::memory_order_relaxed);
  wait.phase = static_cast<comm::HeartbeatPhase>(phase_.load(std::memory_order_relaxed));
  const Seconds now = hooks_.now();
  wait.waited = now - since_.load(std::memory_order_relaxed);
  // The board is read only once this rank's own wait has become a stall.
  if (!StallMessage(wait, timeout_, now, {})) return;
  if (auto message = StallMessage(wait, timeout_, now, hooks_.heartbeats())) hooks_.abort(*message);
}

}  // namespace stepscope::train
