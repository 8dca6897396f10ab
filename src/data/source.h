// Datasets, the per-rank sharded sampler and the prefetching loader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/status.h"

namespace stepscope::data {

// A dataset of fixed-shape examples that can fill a Batch from example indices.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual std::string Describe() const = 0;
  // Fills `out` with the examples `indices` (decoding; augmentation when `augment`).
  // `rng_seed` makes augmentation reproducible per batch.
  virtual void Fill(const std::vector<int64_t>& indices, bool augment, uint64_t rng_seed,
                    Batch* out) const = 0;
};

struct Split {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> test;
};
// Fashion-MNIST from gzip'd IDX files in `dir` (train-images-idx3-ubyte.gz, ...).
// Images normalised, shape (1, 28, 28); augmentation = random crop with 2-pixel padding
// and horizontal flip.
Result<Split> LoadFashionMnist(const std::string& dir);

// Byte-level text for a context of `context` bytes. `path` is a file or a directory of files
// (the fortunes corpus: entries separated by lines holding only '%'; *.dat/*.u8 skipped).
// The last `heldout_fraction` of the bytes is the test split.
Result<Split> LoadText(const std::string& path, int context, double heldout_fraction = 0.1);

struct LoaderOptions {
  int batch = 32;               // per-replica micro-batch
  int workers = 1;              // decode/augment threads
  int prefetch = 4;             // bounded queue depth, in batches
  uint64_t seed = 1;            // shuffling and augmentation
  int rank = 0;                 // this replica's shard
  int world = 1;                // number of shards
  bool augment = false;
  bool synthetic = false;       // serve one prepared batch over and over (ablation)
  double input_delay_ms = 0;    // fault injection: extra delay per batch in the workers
  bool drop_last = true;
};

// Per-rank disjoint shards of a permutation reshuffled each epoch from `seed`; batches are
// decoded by `workers` threads into a bounded queue. Workers sleep when the queue is full.
class Loader {
 public:
  static Result<std::unique_ptr<Loader>> Create(const Dataset& dataset, const LoaderOptions& options);
  virtual ~Loader() = default;
  // Blocks until the next batch is ready. Batches come in order (epoch, index).
  virtual Batch Next() = 0;
  virtual int64_t batches_per_epoch() const = 0;
};

}  // namespace stepscope::data
