#include "data/lengths.h"

#include <algorithm>

#include "data/prng.h"

namespace stepscope::data {

int BatchLength(const LengthOptions& options, int context, uint64_t seed, int64_t epoch,
                int64_t index, int rank) {
  if (!options.variable || context <= 1) return context;
  // The rank takes part in the draw unless batches are balanced; the constant keeps these
  // draws apart from the batch's augmentation seed.
  const uint64_t who = options.balanced ? 0 : static_cast<uint64_t>(rank) + 1;
  const uint64_t draw = MixSeed(MixSeed(seed, 0x6c656e67746873ULL, who),
                                static_cast<uint64_t>(epoch), static_cast<uint64_t>(index));
  const int shortest = (context + 3) / 4;
  const uint64_t choices = static_cast<uint64_t>(context - shortest + 1);
  return shortest + static_cast<int>(draw % choices);
}

void TruncateSequences(int length, Batch* batch) {
  if (batch->size <= 0 || batch->tokens.empty()) return;
  const size_t b = static_cast<size_t>(batch->size);
  const size_t t = batch->tokens.size() / b;
  const size_t keep = std::clamp<size_t>(static_cast<size_t>(std::max(length, 1)), 1, t);
  if (keep == t) return;
  for (size_t row = 0; row < b; ++row) {
    std::copy_n(batch->tokens.begin() + row * t, keep, batch->tokens.begin() + row * keep);
    std::copy_n(batch->targets.begin() + row * t, keep, batch->targets.begin() + row * keep);
  }
  batch->tokens.resize(b * keep);
  batch->targets.resize(b * keep);
}

}  // namespace stepscope::data
