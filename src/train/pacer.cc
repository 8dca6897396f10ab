#include "train/pacer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/clock.h"
#include "core/statistics.h"

namespace stepscope::train {

Seconds ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void SleepSeconds(Seconds seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

void ComputePacer::Begin() {
  if (!active()) return;
  wall_begin_ = SteadySeconds();
  cpu_begin_ = ThreadCpuSeconds();
}

void ComputePacer::End() {
  if (!active()) return;
  const Seconds cpu = ThreadCpuSeconds() - cpu_begin_;
  if (history_.size() <= segment_) history_.resize(segment_ + 1);
  std::vector<Seconds>& recent = history_[segment_++];
  if (recent.size() == kHistory) recent.erase(recent.begin());
  recent.push_back(cpu);
  const Seconds target = slowdown_ * Median(recent);
  const Seconds wall = SteadySeconds() - wall_begin_;
  ++segments_;
  // Tolerate scheduler noise of 5 % plus 100 us before calling a segment unhonoured.
  if (wall > target * 1.05 + 100e-6) ++unhonoured_;
  if (target > wall) {
    SleepSeconds(target - wall);
    slept_ += target - wall;
  }
}

}  // namespace stepscope::train
