// The prefetching loader and the synthetic source behind Loader::Create (see source.h).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "core/clock.h"
#include "data/prng.h"
#include "data/sampler.h"
#include "data/source.h"

namespace stepscope::data {
namespace {

// The augmentation seed of batch `index` of `epoch`: shared by all ranks at that step, so the
// per-example draws do not depend on the world size (see source.h).
uint64_t BatchSeed(uint64_t seed, int64_t epoch, int64_t index) {
  return MixSeed(seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index));
}

// A text batch's examples cut to the lengths they get at (epoch, index) on this rank, the batch
// padded to its longest.
void CutToLength(const LoaderOptions& o, int64_t epoch, int64_t index, Batch* batch) {
  if (!o.lengths.variable || batch->size <= 0 || batch->tokens.empty()) return;
  const BatchPlace place{
      .seed = o.seed,
      .epoch = epoch,
      .index = index,
      .rank = o.rank,
      .batch = batch->size,
      .context = static_cast<int>(batch->tokens.size() / static_cast<size_t>(batch->size))};
  PadToLongest(ExampleLengths(o.lengths, place), batch);
}

class PrefetchLoader : public Loader {
 public:
  PrefetchLoader(const Dataset& dataset, const LoaderOptions& options)
      : dataset_(dataset),
        options_(options),
        sampler_(dataset.size(), options.batch, options.rank, options.world, options.seed,
                 options.drop_last),
        lookahead_(options.lookahead > 0 ? std::min(options.lookahead, options.prefetch)
                                         : options.prefetch),
        slots_(options.prefetch),
        filled_(options.prefetch, 0) {
    workers_.reserve(options.workers);
    for (int w = 0; w < options.workers; ++w) workers_.emplace_back([this] { WorkerLoop(); });
  }

  ~PrefetchLoader() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    space_cv_.notify_all();
    stop_cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  Batch Next() override {
    std::unique_lock<std::mutex> lock(mu_);
    const size_t slot = Slot(next_return_);
    ready_cv_.wait(lock, [&] { return filled_[slot] != 0; });
    Batch batch = std::move(slots_[slot]);
    filled_[slot] = 0;
    ++next_return_;
    lock.unlock();
    space_cv_.notify_all();
    return batch;
  }

  int64_t batches_per_epoch() const override { return sampler_.batches_per_epoch(); }

  void SetLookahead(int batches) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      lookahead_ = std::clamp(batches, 1, options_.prefetch);
    }
    space_cv_.notify_all();
  }

  void Recycle(Batch batch) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (pool_.size() < static_cast<size_t>(options_.prefetch + options_.workers)) {
      pool_.push_back(std::move(batch));
    }
  }

 private:
  size_t Slot(int64_t seq) const { return static_cast<size_t>(seq % options_.prefetch); }

  void WorkerLoop() {
    std::vector<int64_t> indices;
    const int64_t per_epoch = sampler_.batches_per_epoch();
    const auto delay = std::chrono::duration<double, std::milli>(options_.input_delay_ms);
    for (;;) {
      int64_t seq = 0;
      Batch batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        space_cv_.wait(lock, [&] { return stop_ || next_claim_ < next_return_ + lookahead_; });
        if (stop_) return;
        seq = next_claim_++;
        // Claims are handed out in order under the lock, so the sampler moves forward through
        // epochs and recomputes each permutation once.
        sampler_.BatchIndices(seq / per_epoch, seq % per_epoch, &indices);
        if (!pool_.empty()) {
          batch = std::move(pool_.back());
          pool_.pop_back();
        }
      }
      const int64_t epoch = seq / per_epoch;
      const int64_t index = seq % per_epoch;
      batch.load_begin = SteadySeconds();
      dataset_.Fill(indices, options_.augment, BatchSeed(options_.seed, epoch, index), &batch);
      CutToLength(options_, epoch, index, &batch);
      batch.epoch = epoch;
      batch.index = index;

      std::unique_lock<std::mutex> lock(mu_);
      if (options_.input_delay_ms > 0) {
        // Fault injection: this batch takes input_delay_ms longer to produce. Interruptible.
        if (stop_cv_.wait_for(lock, delay, [&] { return stop_; })) return;
      }
      batch.load_end = SteadySeconds();
      space_cv_.wait(lock, [&] { return stop_ || seq < next_return_ + options_.prefetch; });
      if (stop_) return;
      const size_t slot = Slot(seq);
      slots_[slot] = std::move(batch);
      filled_[slot] = 1;
      const bool wanted = seq == next_return_;
      lock.unlock();
      if (wanted) ready_cv_.notify_one();
    }
  }

  const Dataset& dataset_;
  const LoaderOptions options_;

  std::mutex mu_;
  std::condition_variable ready_cv_;  // consumer waits for the next batch in order
  std::condition_variable space_cv_;  // workers wait for their slot in the reorder buffer
  std::condition_variable stop_cv_;   // injected delays wait on this, to stop promptly
  ShardedSampler sampler_;            // guarded by mu_
  int64_t next_claim_ = 0;            // next batch number a worker will decode
  int lookahead_;                     // claims stay below next_return_ + lookahead_ (SetLookahead)
  int64_t next_return_ = 0;           // next batch number Next() returns
  std::vector<Batch> slots_;          // reorder buffer: batch number s lives in s % prefetch
  std::vector<char> filled_;
  std::vector<Batch> pool_;  // recycled batches whose buffers workers reuse
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last member: started after everything above exists
};

class SyntheticLoader : public Loader {
 public:
  SyntheticLoader(const Dataset& dataset, const LoaderOptions& options) {
    ShardedSampler sampler(dataset.size(), options.batch, options.rank, options.world, options.seed,
                           options.drop_last);
    per_epoch_ = sampler.batches_per_epoch();
    std::vector<int64_t> indices;
    sampler.BatchIndices(0, 0, &indices);
    dataset.Fill(indices, options.augment, BatchSeed(options.seed, 0, 0), &prepared_);
    CutToLength(options, 0, 0, &prepared_);
  }

  Batch Next() override {
    // A recycled batch still holds the prepared contents (Recycle takes batches back unchanged),
    // so it is served again without a copy; only batches beyond those in flight are copies.
    Batch batch = recycled_.empty() ? prepared_ : std::move(recycled_.back());
    if (!recycled_.empty()) recycled_.pop_back();
    batch.epoch = served_ / per_epoch_;
    batch.index = served_ % per_epoch_;
    ++served_;
    return batch;
  }

  void Recycle(Batch batch) override { recycled_.push_back(std::move(batch)); }

  int64_t batches_per_epoch() const override { return per_epoch_; }

 private:
  Batch prepared_;
  std::vector<Batch> recycled_;
  int64_t per_epoch_ = 1;
  int64_t served_ = 0;
};

}  // namespace

Status ValidateLoaderOptions(const Dataset& dataset, const LoaderOptions& o) {
  auto bad = [](const std::string& option, const std::string& value, const std::string& why) {
    return Status::Error("--" + option + " " + value + ": " + why);
  };
  if (o.batch <= 0) return bad("batch", std::to_string(o.batch), "must be positive");
  if (o.world < 1) return bad("world", std::to_string(o.world), "must be at least 1");
  if (o.rank < 0 || o.rank >= o.world) {
    return bad("rank", std::to_string(o.rank),
               "must be in [0, " + std::to_string(o.world) + ") for a world of " +
                   std::to_string(o.world));
  }
  if (o.workers < 1) return bad("loader-workers", std::to_string(o.workers), "must be at least 1");
  if (o.prefetch < 1) return bad("prefetch", std::to_string(o.prefetch), "must be at least 1");
  if (!(o.input_delay_ms >= 0)) {
    return bad("inject-input-delay", std::to_string(o.input_delay_ms), "must be >= 0");
  }
  const int64_t global = static_cast<int64_t>(o.batch) * o.world;
  if (global > dataset.size()) {
    return bad("batch", std::to_string(o.batch),
               "times " + std::to_string(o.world) + " replicas = " + std::to_string(global) +
                   " examples per step exceeds the dataset (" + dataset.Describe() + ", " +
                   std::to_string(dataset.size()) + " examples); lower --batch or the " +
                   "replica count, or use a larger dataset");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Loader>> Loader::Create(const Dataset& dataset,
                                               const LoaderOptions& options) {
  STEPSCOPE_RETURN_IF_ERROR(ValidateLoaderOptions(dataset, options));
  std::unique_ptr<Loader> loader;
  if (options.synthetic) {
    loader = std::make_unique<SyntheticLoader>(dataset, options);
  } else {
    loader = std::make_unique<PrefetchLoader>(dataset, options);
  }
  return loader;
}

}  // namespace stepscope::data
