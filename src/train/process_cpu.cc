#include "train/process_cpu.h"

#include <chrono>

namespace stepscope::train {

namespace {

Seconds WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

void StepCpu::Mark() {
  mark_ = ProcessCpuSeconds();
  wall_mark_ = WallSeconds();
  if (!mark_) known_ = false;
}

void StepCpu::Add(std::optional<Seconds> in_reductions) {
  const std::optional<Seconds> now = ProcessCpuSeconds();
  const Seconds wall = WallSeconds();
  if (!now || !mark_) {
    known_ = false;
  } else {
    sum_ += *now - *mark_;
    wall_sum_ += wall - wall_mark_;
    ++stretches_;
  }
  wall_mark_ = wall;
  if (in_reductions && in_reductions_) {
    *in_reductions_ += *in_reductions;
  } else {
    in_reductions_.reset();
  }
  mark_ = now;
}

std::optional<CpuPerStep> StepCpu::PerStretch() const {
  if (!known_ || stretches_ == 0) return std::nullopt;
  const double n = static_cast<double>(stretches_);
  CpuPerStep out{sum_ / n, std::nullopt, wall_sum_ / n};
  if (in_reductions_) out.in_reductions = *in_reductions_ / n;
  return out;
}

}  // namespace stepscope::train
