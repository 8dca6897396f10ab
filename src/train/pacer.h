// ComputePacer: makes a replica's compute take `slowdown` times its thread CPU time in wall time.
// Used to emulate a slower device (slowdown = 1/F) and to inject a straggler (slowdown = FACTOR).
// Real compute still happens; pacing only adds sleep.
#pragma once

#include <cstdint>

#include "core/units.h"

namespace stepscope::train {

class ComputePacer {
 public:
  explicit ComputePacer(double slowdown) : slowdown_(slowdown) {}

  bool active() const { return slowdown_ > 1.0 + 1e-9; }
  // Starts a compute segment on the calling thread.
  void Begin();
  // Ends it: sleeps until wall time since Begin() equals slowdown x CPU time used since Begin().
  // A segment whose wall time already exceeded that target (the host is too busy to emulate the
  // requested speed) counts as not honoured.
  void End();

  int64_t segments() const { return segments_; }
  int64_t unhonoured() const { return unhonoured_; }
  Seconds slept() const { return slept_; }

 private:
  double slowdown_;
  Seconds wall_begin_ = 0;
  Seconds cpu_begin_ = 0;
  int64_t segments_ = 0;
  int64_t unhonoured_ = 0;
  Seconds slept_ = 0;
};

// CPU time consumed by the calling thread.
Seconds ThreadCpuSeconds();
// Sleeps (never spins) for `seconds` if positive.
void SleepSeconds(Seconds seconds);

}  // namespace stepscope::train
