// Datasets, the per-rank sharded sampler and the prefetching loader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/status.h"
#include "data/lengths.h"

namespace stepscope::data {

// A dataset of fixed-shape examples that can fill a Batch from example indices.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual std::string Describe() const = 0;
  // Fills `out` with the examples `indices` (decoding; augmentation when `augment`).
  // `rng_seed` makes augmentation reproducible per batch. Must be safe to call from several
  // threads at once (the loader's workers); resizes `out`'s vectors, reusing their capacity.
  virtual void Fill(const std::vector<int64_t>& indices, bool augment, uint64_t rng_seed,
                    Batch* out) const = 0;
};

struct Split {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> test;
};
// Fashion-MNIST from gzip'd IDX files in `dir` (train-images-idx3-ubyte.gz, ...; the Debian
// package dataset-fashion-mnist installs them in /usr/share/datasets/fashion-mnist).
// Images normalised to (x/255 - 0.2860)/0.3530, shape (1, 28, 28); targets are labels 0..9;
// augmentation = random crop with 2-pixel zero padding and horizontal flip (p = 0.5).
// Errors (missing file, bad magic, wrong sizes, truncation, image/label count mismatch) name
// the file and the header field. Details in data/fashion_mnist.h and data/idx_file.h.
Result<Split> LoadFashionMnist(const std::string& dir);

// Byte-level text for a context of `context` bytes. `path` is a file (read verbatim) or a
// directory of files (the fortunes corpus, /usr/share/games/fortunes: entries separated by
// lines holding only '%', which are removed; *.dat/*.u8 skipped; names sorted). The last
// `heldout_fraction` (in [0, 1)) of the bytes is the test split, empty when it is 0. Example i
// is the window of context + 1 bytes at i * context: tokens its first `context` bytes, targets
// the next bytes. Errors name the path and the minimum size. Details in data/text_corpus.h.
Result<Split> LoadText(const std::string& path, int context, double heldout_fraction = 0.1);

struct LoaderOptions {
  int batch = 32;    // per-replica micro-batch
  int workers = 1;   // decode/augment threads
  int prefetch = 4;  // bounded queue depth, in batches
  // How many batches past those returned the workers may claim from the start (Loader::
  // SetLookahead); 0 (or more than `prefetch`): `prefetch`.
  int lookahead = 0;
  uint64_t seed = 1;  // shuffling and augmentation
  int rank = 0;       // this replica's shard
  int world = 1;      // number of shards
  bool augment = false;
  bool synthetic = false;     // serve one prepared batch over and over (ablation)
  double input_delay_ms = 0;  // fault injection: extra delay per batch in the workers
  bool drop_last = true;
  // Text: each example cut to its own sequence length, the batch padded to its longest
  // (data/lengths.h); the N x b = 1 x Nb equivalence below then holds for the examples, not for
  // their lengths.
  LengthOptions lengths;
};

// Checks `options` against the dataset: batch > 0, world >= 1, 0 <= rank < world,
// batch * world <= dataset size, workers >= 1, prefetch >= 1, input_delay_ms >= 0. The error
// names the command-line option, e.g. "--batch 0: must be positive".
Status ValidateLoaderOptions(const Dataset& dataset, const LoaderOptions& options);

// Per-rank disjoint shards of a permutation reshuffled each epoch from `seed`; batches are
// decoded by `workers` threads into a bounded queue. Workers sleep when the queue is full.
//
// Order and sharding: see data/sampler.h. Rank r's batch j of epoch e holds the elements
// [(j * world + r) * batch, +batch) of epoch e's permutation, so at step j the ranks together
// hold exactly what one replica at batch world * batch would get: N replicas at micro-batch b
// train on the same examples per step as one replica at N * b. Augmentation is drawn per
// example from (seed, epoch, j, example index), so that equivalence holds with augmentation on.
// Every rank gets the same batches_per_epoch(), and epochs roll over automatically
// (Batch::epoch, Batch::index).
//
// Pipeline: each worker claims the next batch number, decodes (and augments) it, sleeps
// input_delay_ms when fault injection asks for it, then places it in a reorder buffer of
// `prefetch` slots keyed by batch number; Next() hands batches out strictly in order. A worker
// whose batch is `prefetch` or more ahead of the consumer blocks on a condition variable until
// the consumer catches up (no spinning). So at most `prefetch` finished batches wait and each
// worker holds one more; since the delay is spent inside the workers, W workers overlap W
// delays, and more workers or a deeper prefetch hide a slow input pipeline just as they would
// a slow decoder. The result does not depend on `workers`: the same options give the same
// batches with 1 or 8 workers.
//
// synthetic: one batch (batch 0 of epoch 0 for this rank) is decoded once at creation and
// every Next() returns it at once (a recycled batch again, else a copy), with no workers and no
// input delay: the input pipeline's cost removed, for the ablation.
//
// The loader keeps a reference to `dataset`, which must outlive it. Next() and Recycle() must
// be called from one consumer thread. Destruction stops and joins the workers, also when they
// are blocked on a full queue or sleeping in an injected delay.
class Loader {
 public:
  static Result<std::unique_ptr<Loader>> Create(const Dataset& dataset,
                                                const LoaderOptions& options);
  virtual ~Loader() = default;
  // Blocks until the next batch is ready. Batches come in order (epoch, index).
  virtual Batch Next() = 0;
  virtual int64_t batches_per_epoch() const = 0;
  // Optionally hands a consumed batch back, unchanged, so that its buffers are reused.
  virtual void Recycle(Batch batch) {}
  // How many batches past those returned the workers may claim from now on (1 to `prefetch`;
  // LoaderOptions::lookahead is the start). The trainer holds it at one step's batches through the
  // warm-up: warm-up steps slower than the loader (the first collective, the emulation's
  // calibration) would otherwise leave a stock that an input-bound run draws down through its
  // measured steps, which then show less input wait than the steady state (docs/train-output.md
  // "samples_per_s").
  virtual void SetLookahead(int batches) {}
};

}  // namespace stepscope::data
