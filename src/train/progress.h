// Progress: the live line rank 0 shows (step, loss, samples/s, ETA). On a terminal it rewrites
// one line; otherwise it prints a plain line every `plain_interval_s` seconds.
#pragma once

#include <cstdint>
#include <cstdio>

#include "core/units.h"

namespace stepscope::train {

class Progress {
 public:
  Progress(bool enabled, int64_t total_steps, FILE* out = stderr);
  void Update(int64_t step, double loss, double samples_per_s, Seconds now);
  void Finish();

 private:
  bool enabled_;
  bool tty_;
  int64_t total_;
  FILE* out_;
  Seconds start_ = -1;
  Seconds last_print_ = -1e300;
  static constexpr Seconds kTtyInterval = 0.2;
  static constexpr Seconds kPlainInterval = 5.0;
};

}  // namespace stepscope::train
