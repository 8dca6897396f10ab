// Variable-length batches: the sequence length each rank's text batch gets at a step, and
// length-bucketed (balanced) batches, where every rank's batch of a step gets the same length.
// A batch-level view of variable-length inputs: after padding to the longest sequence in the
// batch, what varies from rank to rank and step to step is the batch's length.
#pragma once

#include <cstdint>

#include "core/batch.h"

namespace stepscope::data {

struct LengthOptions {
  bool variable = false;  // --variable-length: each batch its own length
  bool balanced = false;  // --balance-lengths: one length per step for every rank
};

// The length of batch `index` of `epoch` on `rank` for a context of `context` tokens: uniform
// in [ceil(context / 4), context], drawn from (seed, epoch, index) and, unless balanced, the
// rank. `context` when lengths are not variable.
int BatchLength(const LengthOptions& options, int context, uint64_t seed, int64_t epoch,
                int64_t index, int rank);

// Cuts every sequence of a text batch, tokens and targets (B, T), to its first `length`
// positions (1 <= length <= T); images and an empty batch are left alone.
void TruncateSequences(int length, Batch* batch);

}  // namespace stepscope::data
