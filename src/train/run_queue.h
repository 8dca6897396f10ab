// RunQueueClock: how long the calling thread has been runnable but waiting for a CPU core (the
// kernel's run-queue delay, the second field of /proc/thread-self/schedstat), so that a step's
// compute can be split into time on a core and time waiting for one. A rank whose compute is
// long because its core is shared (more threads than cores, a co-tenant) is then told apart
// from a rank that computes slower.
#pragma once

#include <optional>
#include <string_view>

#include "core/units.h"

namespace stepscope::train {

// The run-queue delay in a schedstat line ("<on-cpu ns> <run-queue ns> <timeslices>"), in
// seconds; nullopt when the line does not have that form.
std::optional<Seconds> ParseRunQueueDelay(std::string_view schedstat);

class RunQueueClock {
 public:
  RunQueueClock() = default;  // a clock that reads nothing (cpu_wait left unknown)
  // Opens the calling thread's schedstat; Read() of a clock that could not open it (a kernel
  // without schedstat, no /proc) gives nullopt, and the records then leave cpu_wait unknown.
  static RunQueueClock ForThisThread();
  ~RunQueueClock();
  RunQueueClock(const RunQueueClock&) = delete;
  RunQueueClock& operator=(const RunQueueClock&) = delete;

  // The thread's run-queue delay since it started: one pread, no allocation. Call it from the
  // thread that made the clock.
  std::optional<Seconds> Read() const;

 private:
  explicit RunQueueClock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The run-queue delay summed over a step's compute spans (Begin and End around each, on the
// thread of the clock): unknown as soon as one read is.
class CpuWait {
 public:
  void Begin(const RunQueueClock& clock) { begin_ = clock.Read(); }
  void End(const RunQueueClock& clock);
  // The sum, clamped to [0, compute] (the kernel accounts in its own ticks); nullopt when
  // unknown or when no span was measured.
  std::optional<Seconds> Total(Seconds compute) const;

 private:
  std::optional<Seconds> begin_;
  Seconds sum_ = 0;
  bool known_ = true;
  bool measured_ = false;
};

}  // namespace stepscope::train
