// The per-rank sharded sampler: which example indices make up batch j of epoch e on rank r.
//
// Each epoch shuffles [0, size) with a Fisher-Yates shuffle driven by xoshiro256** seeded
// from (seed, epoch), so the order depends only on those two numbers (not on the platform,
// the rank or the world size). The epoch's permutation P is then dealt out in global batches
// of world * batch elements, interleaved by rank:
//
//   rank r, batch j  =  P[(j * world + r) * batch, (j * world + r + 1) * batch)
//
// so at step j the ranks 0..world-1 together hold exactly P[j * world * batch, (j+1) * world *
// batch): the global batch j of a single replica run at batch world * batch. Two replicas at
// micro-batch b therefore see the same examples per step as one replica at 2b, which is what
// makes scaling runs comparable sample for sample.
//
// drop_last (default): every rank gets floor(size / (world * batch)) batches per epoch and the
// tail of the permutation is unused this epoch. Without drop_last there are
// ceil(size / (world * batch)) batches and the final global batch is completed by wrapping
// around to the start of the permutation, so all batches stay full and all ranks stay in step.
#pragma once

#include <cstdint>
#include <vector>

namespace stepscope::data {

// The permutation of [0, size) used in `epoch` for `seed`.
std::vector<int64_t> EpochPermutation(int64_t size, uint64_t seed, int64_t epoch);

class ShardedSampler {
 public:
  // Requires size > 0, batch > 0, 0 <= rank < world; the loader validates these.
  ShardedSampler(int64_t size, int batch, int rank, int world, uint64_t seed, bool drop_last);

  int64_t batches_per_epoch() const { return batches_per_epoch_; }

  // Writes the `batch` example indices of this rank's batch `index` in `epoch` to `out`
  // (resized). Recomputes the permutation when the epoch changes, so calls should move
  // forward through epochs (any order within an epoch is cheap).
  void BatchIndices(int64_t epoch, int64_t index, std::vector<int64_t>* out);

 private:
  int64_t size_;
  int batch_;
  int rank_;
  int world_;
  uint64_t seed_;
  int64_t batches_per_epoch_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> permutation_;
};

}  // namespace stepscope::data
