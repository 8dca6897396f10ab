#include "train/pacer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "core/clock.h"
#include "core/statistics.h"
#include "data/prng.h"

namespace stepscope::train {

Seconds ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void SleepSeconds(Seconds seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

double CoTenantShare(const CoTenant& co_tenant, int64_t step) {
  if (co_tenant.share <= 0) return 0;
  const uint64_t draw = data::MixSeed(co_tenant.seed, static_cast<uint64_t>(step));
  const bool active = (draw >> 11) * 0x1.0p-53 < 0.5;
  return active ? std::min(0.9, 2 * co_tenant.share) : 0.0;
}

std::vector<Seconds> ComputePacer::CostPerWork() const {
  std::vector<Seconds> cost;
  for (const std::vector<Seconds>& recent : history_) {
    cost.push_back(recent.empty() ? 0.0 : *std::min_element(recent.begin(), recent.end()));
  }
  return cost;
}

void ComputePacer::BeginStep(int64_t step, bool counted) {
  segment_ = 0;
  counted_ = counted;
  step_share_ = CoTenantShare(co_tenant_, step);
}

void ComputePacer::Begin() {
  if (!active()) return;
  wall_begin_ = SteadySeconds();
  cpu_begin_ = ThreadCpuSeconds();
}

void ComputePacer::End(double work) {
  if (!active()) return;
  work = std::max(work, 1e-9);
  const Seconds cpu = ThreadCpuSeconds() - cpu_begin_;
  if (history_.size() <= segment_) history_.resize(segment_ + 1);
  std::vector<Seconds>& recent = history_[segment_++];
  if (recent.size() == kHistory) recent.erase(recent.begin());
  recent.push_back(cpu / work);
  // Without a slowdown (a co-tenant alone) the segment keeps its own CPU time: there is no
  // host jitter to multiply.
  const size_t k = segment_ - 1;
  const bool fixed = k < calibrated_.size() && std::isfinite(calibrated_[k]) && calibrated_[k] > 0;
  const Seconds cost = fixed ? calibrated_[k] : Median(recent);
  const Seconds own = slowdown_ > 1.0 + 1e-9 ? slowdown_ * cost * work : cpu;
  const Seconds target = own / (1.0 - step_share_);
  const Seconds wall = SteadySeconds() - wall_begin_;
  if (counted_) {
    ++segments_;
    // Tolerate scheduler noise of 5 % plus 100 us before calling a segment unhonoured.
    if (wall > target * 1.05 + 100e-6) ++unhonoured_;
  }
  if (target > wall) {
    SleepSeconds(target - wall);
    slept_ += target - wall;
  }
}

}  // namespace stepscope::train
