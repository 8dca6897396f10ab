// What length-bucketed batches (--balance-lengths) would change in a variable-length job, read
// off the job's own sampler: for the batches the job drew, the same places drawn bucketed. The
// step-time model uses it to re-simulate the lever (model/simulate.cc): a bucketed rank computes
// less padding, and the ranks of a step pad to nearly the same length, so the slowest of N waits
// on a much narrower spread.
#pragma once

#include <cstdint>
#include <vector>

#include "data/lengths.h"

namespace stepscope::data {

// The positions a job's batches compute (each padded to its longest example), tallied for the
// places it drew, once as drawn without buckets and once bucketed, with the examples' own
// tokens. Tallies of several ranks add up.
struct LengthTally {
  double drawn_work = 0;     // positions computed as drawn, without buckets
  double drawn_tokens = 0;   // of them, the examples' own tokens (the rest is padding)
  double bucketed_work = 0;  // positions computed had the same places been bucketed

  // Tallies the batch at `place` both ways (nothing when lengths are not variable).
  void Add(const LengthOptions& options, const BatchPlace& place);
  void Add(const LengthTally& other);
  // Of the positions computed as drawn, the share that is padding (0 with nothing tallied).
  double PaddedShare() const;
  // Positions computed bucketed over as drawn (1 with nothing tallied).
  double WorkRatio() const;
};

// How much the ranks of a step differ in work, drawn as `options` draws (bucketed or not): each
// rank's computed positions over the mean of its step's ranks, pooled over `steps` steps of
// `ranks` ranks (enough for a step's mean to stand for its bucket's) of `batch` examples of up
// to `context` tokens from `seed`, as `quantiles` evenly spaced quantiles, sorted. The expected
// maximum of N draws from it is what a step waits for its slowest rank, relative to the mean
// rank, from the lengths alone. {1} when lengths are not variable.
std::vector<double> StepSpread(const LengthOptions& options, uint64_t seed, int batch, int context,
                               int steps = 256, int ranks = 32, int quantiles = 101);

}  // namespace stepscope::data
