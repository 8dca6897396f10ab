// ProcessCpu: the CPU time this process has used (every thread: training, loader workers,
// communication), summed over the steady steps, so that run.json can say how much of its host's
// cores a rank takes per step (docs/train-output.md `cpu`). The model's host CPU ceiling reads
// it (docs/model.md "Host CPU").
#pragma once

#include <optional>

#include "core/units.h"

namespace stepscope::train {

// User plus system CPU seconds of the whole process so far (CLOCK_PROCESS_CPUTIME_ID); nullopt
// when the clock cannot be read.
std::optional<Seconds> ProcessCpuSeconds();

// The process's CPU time over chosen stretches of the run: Mark() where a stretch may begin,
// Add() where one ends (counting from the last mark, then marking). Steps tile the run, so
// marking at each step's end and adding at the next one's end counts the work between steps
// as the next step's, as its time is.
class StepCpu {
 public:
  void Mark();
  void Add();
  // The CPU seconds added per stretch; nullopt when nothing was added or a read failed.
  std::optional<Seconds> PerStretch() const;

 private:
  std::optional<Seconds> mark_;
  Seconds sum_ = 0;
  int64_t stretches_ = 0;
  bool known_ = true;
};

}  // namespace stepscope::train
