#include "train/process_cpu.h"

#include "core/clock.h"

namespace stepscope::train {

void StepCpu::Mark() {
  mark_ = ProcessCpuSeconds();
  wall_mark_ = SteadySeconds();
  if (!mark_) known_ = false;
}

void StepCpu::Add(std::optional<Seconds> in_reductions) {
  const std::optional<Seconds> now = ProcessCpuSeconds();
  const Seconds wall = SteadySeconds();
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
