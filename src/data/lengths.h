// Variable-length text (--variable-length): every example of a batch gets its own sequence
// length, and the batch is padded to its longest example. The positions past an example's
// length are computed like any other and carry no target (kPaddedTarget, core/batch.h), so what
// a rank's batch costs is its padded length, which differs from rank to rank and step to step.
//
// Lengths are drawn log-uniformly between context / 32 (at least 1) and the context: many short
// examples and a few long ones, as in natural text, so a batch's longest example (and with it
// the batch's cost) varies a lot while the mean length stays near a third of the context.
//
// Length-bucketed batches (--balance-lengths), as a sampler that groups examples by length
// does it: the range of lengths is cut into kLengthBuckets buckets of equal probability (equal
// spans of the logarithm), every step takes one bucket for all ranks (each run of 16 steps
// every bucket once, shuffled, as a sampler deals an epoch's batches), and every example of the
// step gets a length from that bucket. An example's length keeps the same distribution, every
// rank's batch of a step pads to nearly the same length, and less padding is computed. What a
// rank's batch costs does not depend on the number of ranks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/batch.h"

namespace stepscope::data {

struct LengthOptions {
  bool variable = false;  // --variable-length: each example its own length
  bool balanced = false;  // --balance-lengths: length-bucketed batches
};

// Buckets of lengths that --balance-lengths groups examples by.
inline constexpr int kLengthBuckets = 16;

// Where a batch sits in the job: batch `index` of `epoch` on `rank`, `batch` examples of up to
// `context` tokens, all drawn from `seed`.
struct BatchPlace {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t index = 0;
  int rank = 0;
  int batch = 0;
  int context = 0;
};

// The length of each of the batch's examples, in [1, context] (all `context` when lengths are
// not variable). Reproducible from `place` alone; each example its own draw; balanced, from the
// step's bucket.
std::vector<int> ExampleLengths(const LengthOptions& options, const BatchPlace& place);

// Cuts a text batch, tokens and targets (B, T), to its longest example (max of `lengths`, at
// most T) and sets each row's targets past its own length to kPaddedTarget. `lengths` has one
// entry per row; images and an empty batch are left alone.
void PadToLongest(std::span<const int> lengths, Batch* batch);

}  // namespace stepscope::data
