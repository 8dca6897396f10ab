// Reducer: averages gradients across replicas in buckets, on a communication thread, overlapping
// the rest of backward (the scheme of PyTorch DDP, written out).
//
// Buckets are contiguous slices of the flat gradient buffer, filled in reverse layer order as
// backward reports gradients final (GradReadyFn). A bucket is launched as soon as it holds at
// least `bucket_mb` MiB (or backward ends); with overlap off, all buckets launch after backward.
// The bucket layout follows from the model's layer sizes, so it is the same on every step.
// With one replica or --no-reduce there is nothing to wait for, so buckets are only recorded
// (arrival, gradient norm) on the main thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "comm/allreduce.h"
#include "core/step_record.h"
#include "train/options.h"

namespace stepscope::train {

// What the reducer measured in one step.
struct ReduceStats {
  std::vector<CollectiveRecord> collectives;  // one per bucket, in launch order
  Seconds comm_busy = 0;                      // time with a reduction in flight
  // CPU the reducing thread spent inside the step's reductions (their arithmetic, and their
  // spinning while they wait for other ranks), summed over the buckets; unset when a clock read
  // failed.
  std::optional<Seconds> collective_cpu = 0.0;
  double local_grad_sq = -1;   // |g|^2 before reduction
  double global_grad_sq = -1;  // |G|^2 after reduction (-1 without reduction)
  // With ReducerOptions::measure_wire_error at a norm-sampled step of a reduced-precision wire:
  // |G_wire - G_fp32|^2 and |G_fp32|^2 summed over the buckets (-1 when not measured).
  double wire_error_sq = -1;
  double wire_exact_sq = -1;
};

class Reducer {
 public:
  using ClockFn = std::function<Seconds()>;

  // `allreducer` may be null when options.reduce is false. `grads` is the model's flat gradient
  // buffer; `clock` returns aligned seconds.
  Reducer(std::span<float> grads, const ReducerOptions& options, const EmulationOptions& emulation,
          comm::Allreducer* allreducer, int world, ClockFn clock);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Starts a step (the micro-batch whose gradients will be reduced). With `measure_norms`, the
  // step's |g|^2 before and |G|^2 after reduction are measured (a pass over the gradients each).
  // A step that is not `counted` (a warm-up step) is paced alike but left out of
  // unhonoured_links(): its first reductions have no quickest time yet but their own, which
  // holds the ranks' wait to arrive.
  void BeginStep(bool measure_norms, bool counted = true);
  // Backward's GradReadyFn for the reducing micro-batch: grads [offset, offset+count) are final.
  void OnGradReady(size_t offset, size_t count);
  // After backward: launches what is left, blocks until every bucket is reduced, and returns
  // the time spent blocked (the exposed communication). Fails if a reduction failed.
  Result<Seconds> FinishStep();
  // What the last finished step measured.
  ReduceStats TakeStats();

  // Emulated link: per bucket, the quickest real reduction this rank has seen, from which it
  // paces (the emulated transfer replaces that much of the real one). A rank that always
  // arrives early never sees the pure transfer (its real time includes its wait), so it would
  // sleep less and end its collectives earlier than the others, every step; the trainer makes
  // the ranks agree on the quickest over all of them between steps (SetQuickestReductions), so
  // that every rank paces from the same value and the collectives end together.
  std::vector<Seconds> QuickestReductions();
  void SetQuickestReductions(std::vector<Seconds> quickest);
  // Emulated-link pacing that could not be honoured (real reduction slower than the model), in
  // the counted steps.
  int64_t unhonoured_links() const { return unhonoured_links_; }
  int buckets_per_step() const { return buckets_per_step_; }

 private:
  struct Job {
    int index;
    size_t begin, end;  // element range in grads
    Seconds ready;
  };
  // A bucket is complete: starts it now (overlap) or after backward (deferred_).
  void Launch(size_t begin, size_t end);
  // Records the bucket's arrival and runs it inline or hands it to the communication thread.
  void Start(size_t begin, size_t end);
  // Counts a bucket as done (keeping its first error) and wakes FinishStep.
  void Finished(const Status& status);
  void CommLoop();
  Status RunJob(const Job& job);

  std::span<float> grads_;
  ReducerOptions options_;
  EmulationOptions emulation_;
  comm::Allreducer* allreducer_;
  int world_;
  ClockFn clock_;
  size_t cap_elements_;
  bool measure_norms_ = true;
  bool counted_ = true;  // set by BeginStep, read only while the step runs
  // The fp32 copy of the gradients reduced beside the wire's (measure_wire_error only).
  std::vector<float> exact_;
  bool measure_wire_error_ = false;
  // One replica or no reduction: buckets are recorded on the main thread (no hand-off).
  bool inline_;

  // Main-thread bucket state.
  size_t pending_begin_ = 0;  // [pending_begin_, pending_end_) is ready but not yet launched
  size_t pending_end_ = 0;
  int launched_ = 0;
  int buckets_per_step_ = 0;
  std::vector<std::pair<size_t, size_t>> deferred_;  // overlap off: launched after backward

  // Shared with the communication thread, guarded by mu_.
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Job> queue_;
  int completed_ = 0;
  bool stop_ = false;
  Status error_;
  ReduceStats stats_;
  std::vector<Seconds> fastest_by_bucket_;  // per bucket: quickest real reduction seen
  int64_t unhonoured_links_ = 0;

  std::thread thread_;
};

}  // namespace stepscope::train
