// When each slice of the gradient becomes ready within backward, as a share of that backward:
// the profile the step-time model replays buckets of another size against (model/fit.cc).
// A run that reduces its gradient in one bucket per step shows only the end of backward in its
// collectives; the slices (the layers or blocks the model reports ready) show the rest.
#pragma once

#include <vector>

#include "core/units.h"

namespace stepscope::train {

class SliceReadiness {
 public:
  // Steps kept: enough for a stable median, bounded memory on long runs.
  static constexpr int kMaxSteps = 256;

  // A reducing backward begins at `begin`.
  void BeginBackward(Seconds begin);
  // One slice became ready at `at` (in the order backward reports them).
  void SliceReady(Seconds at);
  // The backward ended at `end`; `keep`: a steady step whose shares count.
  void EndBackward(Seconds end, bool keep);

  // Each slice's median share of backward elapsed when it was ready, non-decreasing, in [0, 1];
  // empty when no kept step reported the same slices as the first.
  std::vector<double> MedianShares() const;

 private:
  Seconds begin_ = 0;
  std::vector<Seconds> step_;                // this backward's ready times
  std::vector<std::vector<double>> shares_;  // per slice, one share per kept step
  int kept_ = 0;
};

}  // namespace stepscope::train
