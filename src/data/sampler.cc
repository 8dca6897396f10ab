#include "data/sampler.h"

#include <cstddef>
#include <numeric>
#include <utility>

#include "data/prng.h"

namespace stepscope::data {

std::vector<int64_t> EpochPermutation(int64_t size, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> p(static_cast<size_t>(size));
  std::iota(p.begin(), p.end(), int64_t{0});
  Xoshiro256 rng(MixSeed(seed, static_cast<uint64_t>(epoch), 0x5a3b1e5ULL));
  // Fisher-Yates: position i receives a uniform pick among positions [0, i].
  for (int64_t i = size - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(i) + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

ShardedSampler::ShardedSampler(int64_t size, int batch, int rank, int world, uint64_t seed,
                               bool drop_last)
    : size_(size), batch_(batch), rank_(rank), world_(world), seed_(seed) {
  const int64_t global = static_cast<int64_t>(batch) * world;
  batches_per_epoch_ = drop_last ? size / global : (size + global - 1) / global;
}

void ShardedSampler::BatchIndices(int64_t epoch, int64_t index, std::vector<int64_t>* out) {
  if (epoch != cached_epoch_) {
    permutation_ = EpochPermutation(size_, seed_, epoch);
    cached_epoch_ = epoch;
  }
  out->resize(static_cast<size_t>(batch_));
  const int64_t start = (index * world_ + rank_) * batch_;
  for (int i = 0; i < batch_; ++i) {
    (*out)[i] = permutation_[(start + i) % size_];  // wraps only without drop_last
  }
}

}  // namespace stepscope::data
