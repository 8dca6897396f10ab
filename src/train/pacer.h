// ComputePacer: makes a replica's compute take `slowdown` times its thread CPU time in wall time.
// Used to emulate a slower device (slowdown = 1/F) and to inject a straggler (slowdown = FACTOR).
// Real compute still happens; pacing only adds sleep.
//
// A step's compute runs as the same sequence of segments every step (forward, backward between
// gradient buckets, optimizer). The target of segment k is slowdown x the median CPU time of
// segment k over its last kHistory steps: an emulated device computes at a steady speed, so the
// host's cache and scheduler jitter, which pacing would otherwise multiply by the slowdown, is
// not passed on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/units.h"

namespace stepscope::train {

class ComputePacer {
 public:
  explicit ComputePacer(double slowdown) : slowdown_(slowdown) {}

  bool active() const { return slowdown_ > 1.0 + 1e-9; }
  // Starts a step: segments are numbered from 0 again.
  void BeginStep() { segment_ = 0; }
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
  static constexpr size_t kHistory = 9;
  double slowdown_;
  size_t segment_ = 0;
  std::vector<std::vector<Seconds>> history_;  // per segment index: recent CPU times
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
