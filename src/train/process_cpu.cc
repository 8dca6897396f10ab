#include "train/process_cpu.h"

#include <ctime>

namespace stepscope::train {

std::optional<Seconds> ProcessCpuSeconds() {
  timespec t{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return std::nullopt;
  return static_cast<Seconds>(t.tv_sec) + static_cast<Seconds>(t.tv_nsec) * 1e-9;
}

void StepCpu::Mark() {
  mark_ = ProcessCpuSeconds();
  if (!mark_) known_ = false;
}

void StepCpu::Add() {
  const std::optional<Seconds> now = ProcessCpuSeconds();
  if (!now || !mark_) {
    known_ = false;
  } else {
    sum_ += *now - *mark_;
    ++stretches_;
  }
  mark_ = now;
}

std::optional<Seconds> StepCpu::PerStretch() const {
  if (!known_ || stretches_ == 0) return std::nullopt;
  return sum_ / static_cast<Seconds>(stretches_);
}

}  // namespace stepscope::train
