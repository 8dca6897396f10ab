// StepCpu: the CPU time this process used (every thread: training, loader workers,
// communication), summed over the steady steps, and how much of it went inside the gradient
// reductions, so that run.json can say how much of its host's cores a rank's work takes per
// step (docs/train-output.md `cpu`). The model's host CPU ceiling reads it
// (docs/model.md "Host CPU").
#pragma once

#include <cstdint>
#include <optional>

#include "core/cpu_time.h"
#include "core/units.h"

namespace stepscope::train {

struct CpuPerStep {
  Seconds cpu = 0;
  // Of `cpu`, spent inside the reductions (their arithmetic, and their spinning while they wait
  // for other ranks); unset when unknown.
  std::optional<Seconds> in_reductions;
  // The stretches' mean wall time: the rank's own steps, which its CPU time covers.
  Seconds wall = 0;
};

// The process's CPU time over chosen stretches of the run: Mark() where a stretch may begin,
// Add() where one ends (counting from the last mark, then marking). Steps tile the run, so
// marking at each step's end and adding at the next one's end counts the work between steps
// as the next step's, as its time is.
class StepCpu {
 public:
  void Mark();
  // `in_reductions`: the stretch's CPU spent inside reductions (unset: unknown).
  void Add(std::optional<Seconds> in_reductions);
  // The means per stretch; nullopt when nothing was added or a clock read failed.
  std::optional<CpuPerStep> PerStretch() const;

 private:
  std::optional<Seconds> mark_;
  Seconds wall_mark_ = 0;
  Seconds sum_ = 0, wall_sum_ = 0;
  std::optional<Seconds> in_reductions_ = 0.0;
  int64_t stretches_ = 0;
  bool known_ = true;
};

}  // namespace stepscope::train
