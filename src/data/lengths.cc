#include "data/lengths.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "data/prng.h"

namespace stepscope::data {
namespace {

// Keeps these draws apart from the batch's augmentation seed and the sampler's shuffles.
constexpr uint64_t kLengthsKey = 0x6c656e67746873ULL;

// The length at quantile u in [0, 1) of the log-uniform lengths over [shortest, context + 1),
// floored, with shortest = max(1, ceil(context / 32)).
int LengthAt(int context, double u) {
  const int shortest = std::max(1, (context + 31) / 32);
  const double ratio = static_cast<double>(context + 1) / shortest;
  return std::clamp(static_cast<int>(std::floor(shortest * std::pow(ratio, u))), shortest, context);
}

double Uniform(Xoshiro256* rng) { return static_cast<double>(rng->Next() >> 11) * 0x1.0p-53; }

}  // namespace

std::vector<int> ExampleLengths(const LengthOptions& options, const BatchPlace& place) {
  if (place.batch <= 0) return {};
  if (!options.variable || place.context <= 1) {
    return std::vector<int>(static_cast<size_t>(place.batch), std::max(place.context, 1));
  }
  const uint64_t at =
      MixSeed(static_cast<uint64_t>(place.epoch), static_cast<uint64_t>(place.index));
  // Balanced: the step's bucket, drawn without the rank. As a grouping sampler deals an epoch's
  // batches of every bucket in shuffled order, each run of kLengthBuckets consecutive steps
  // takes every bucket once, in an order shuffled per run: a short run sees every bucket
  // about equally often, where independent draws could leave its mean work far from the job's.
  int bucket = -1;
  if (options.balanced) {
    const int64_t block = place.index / kLengthBuckets;
    Xoshiro256 order(
        MixSeed(MixSeed(place.seed, kLengthsKey, 0),
                MixSeed(static_cast<uint64_t>(place.epoch), static_cast<uint64_t>(block))));
    std::array<int, kLengthBuckets> buckets;
    std::iota(buckets.begin(), buckets.end(), 0);
    for (int i = kLengthBuckets - 1; i > 0; --i) {
      std::swap(buckets[static_cast<size_t>(i)],
                buckets[static_cast<size_t>(order.Below(static_cast<uint64_t>(i) + 1))]);
    }
    bucket = buckets[static_cast<size_t>(place.index - block * kLengthBuckets)];
  }
  Xoshiro256 rng(
      MixSeed(MixSeed(place.seed, kLengthsKey, static_cast<uint64_t>(place.rank) + 1), at));
  std::vector<int> lengths(static_cast<size_t>(place.batch));
  for (int& length : lengths) {
    const double u = Uniform(&rng);
    length = LengthAt(place.context, bucket < 0 ? u : (bucket + u) / kLengthBuckets);
  }
  return lengths;
}

void PadToLongest(std::span<const int> lengths, Batch* batch) {
  if (batch->size <= 0 || batch->tokens.empty()) return;
  const size_t b = static_cast<size_t>(batch->size);
  if (lengths.size() != b) return;
  const size_t t = batch->tokens.size() / b;
  auto clamp = [t](int length) {
    return std::clamp<size_t>(static_cast<size_t>(std::max(length, 1)), 1, t);
  };
  size_t keep = 1;
  for (int length : lengths) keep = std::max(keep, clamp(length));
  for (size_t row = 0; row < b; ++row) {
    if (keep != t) {
      std::copy_n(batch->tokens.begin() + row * t, keep, batch->tokens.begin() + row * keep);
      std::copy_n(batch->targets.begin() + row * t, keep, batch->targets.begin() + row * keep);
    }
    std::fill(batch->targets.begin() + row * keep + clamp(lengths[row]),
              batch->targets.begin() + (row + 1) * keep, kPaddedTarget);
  }
  batch->tokens.resize(b * keep);
  batch->targets.resize(b * keep);
}

}  // namespace stepscope::data
