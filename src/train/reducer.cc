#include "train/reducer.h"

#include <algorithm>

#include "core/cpu_dispatch.h"
#include "core/cpu_time.h"
#include "train/pacer.h"

namespace stepscope::train {
namespace {

STEPSCOPE_DISPATCH double SumSquares(const float* x, size_t n) {
  // Eight independent float lanes vectorise without reassociation flags; each block's lanes are
  // folded into a double so long buffers keep their accuracy.
  constexpr size_t kLanes = 8, kBlock = 4096;
  double total = 0;
  for (size_t i = 0; i < n; i += kBlock) {
    const float* b = x + i;
    const size_t m = std::min(kBlock, n - i);
    float lane[kLanes] = {};
    size_t j = 0;
    for (; j + kLanes <= m; j += kLanes) {
      for (size_t k = 0; k < kLanes; ++k) lane[k] += b[j + k] * b[j + k];
    }
    for (; j < m; ++j) lane[0] += b[j] * b[j];
    for (size_t k = 0; k < kLanes; ++k) total += lane[k];
  }
  return total;
}

}  // namespace

Reducer::Reducer(std::span<float> grads, const ReducerOptions& options,
                 const EmulationOptions& emulation, comm::Allreducer* allreducer, int world,
                 ClockFn clock)
    : grads_(grads),
      options_(options),
      emulation_(emulation),
      allreducer_(allreducer),
      world_(world),
      clock_(std::move(clock)),
      cap_elements_(std::max<size_t>(1, static_cast<size_t>(options.bucket_mb * kMiB / 4))),
      inline_(world == 1 || !options.reduce) {
  measure_wire_error_ = options.measure_wire_error && options.reduce && world > 1 &&
                        options.dtype != comm::WireDtype::kFp32;
  if (measure_wire_error_) exact_.resize(grads.size());
  if (!inline_) thread_ = std::thread([this] { CommLoop(); });
}

Reducer::~Reducer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<Seconds> Reducer::QuickestReductions() {
  std::lock_guard<std::mutex> lock(mu_);
  return fastest_by_bucket_;
}

void Reducer::SetQuickestReductions(std::vector<Seconds> quickest) {
  std::lock_guard<std::mutex> lock(mu_);
  fastest_by_bucket_ = std::move(quickest);
}

void Reducer::BeginStep(bool measure_norms, bool counted) {
  measure_norms_ = measure_norms;
  counted_ = counted;
  pending_begin_ = pending_end_ = grads_.size();
  launched_ = 0;
  deferred_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  completed_ = 0;
  stats_ = ReduceStats{};
  stats_.local_grad_sq = measure_norms ? 0 : -1;
  stats_.global_grad_sq = measure_norms && options_.reduce ? 0 : -1;
  stats_.wire_error_sq = stats_.wire_exact_sq = measure_norms && measure_wire_error_ ? 0 : -1;
}

void Reducer::OnGradReady(size_t offset, size_t count) {
  if (count == 0) return;
  if (offset + count != pending_begin_) {
    // Not adjacent to what is pending (a model reporting out of order): close the bucket.
    if (pending_end_ > pending_begin_) Launch(pending_begin_, pending_end_);
    pending_end_ = offset + count;
  }
  pending_begin_ = offset;
  if (pending_end_ - pending_begin_ >= cap_elements_) {
    Launch(pending_begin_, pending_end_);
    pending_end_ = pending_begin_;
  }
}

void Reducer::Launch(size_t begin, size_t end) {
  if (options_.overlap) {
    Start(begin, end);
  } else {
    deferred_.emplace_back(begin, end);
  }
}

void Reducer::Start(size_t begin, size_t end) {
  Job job{launched_++, begin, end, clock_()};
  if (inline_) {
    // Nothing to wait for: record the bucket on this thread, no hand-off.
    Finished(RunJob(job));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(job);
  }
  work_cv_.notify_one();
}

Result<Seconds> Reducer::FinishStep() {
  if (pending_end_ > pending_begin_) Launch(pending_begin_, pending_end_);
  pending_end_ = pending_begin_;
  for (auto [b, e] : deferred_) Start(b, e);  // overlap off: every bucket starts now, in order
  deferred_.clear();
  buckets_per_step_ = launched_;
  const Seconds wait_begin = clock_();
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return completed_ == launched_ || !error_.ok(); });
  if (!error_.ok()) return error_;
  return clock_() - wait_begin;
}

ReduceStats Reducer::TakeStats() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(stats_);
}

void Reducer::CommLoop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = queue_.front();
      queue_.pop_front();
    }
    Finished(RunJob(job));
  }
}

void Reducer::Finished(const Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status.ok() && error_.ok()) error_ = status;
    ++completed_;
  }
  done_cv_.notify_all();
}

Status Reducer::RunJob(const Job& job) {
  std::span<float> slice = grads_.subspan(job.begin, job.end - job.begin);
  CollectiveRecord record;
  record.index = job.index;
  record.ready = job.ready;
  record.bytes = comm::WireBytes(options_.dtype, slice.size());
  record.start = clock_();
  const bool norms = measure_norms_;  // set by BeginStep, read only while the step runs
  const bool counted = counted_;
  const double local_sq = norms ? SumSquares(slice.data(), slice.size()) : 0;
  double global_sq = -1;
  const bool wire_error = norms && measure_wire_error_;
  std::span<float> exact;
  if (wire_error) {
    exact = std::span<float>(exact_).subspan(job.begin, slice.size());
    std::copy(slice.begin(), slice.end(), exact.begin());
  }
  // The thread's CPU inside the reductions (their arithmetic and their waiting for other ranks):
  // one read before and one after the bucket's collectives.
  const std::optional<Seconds> cpu_begin = ThreadCpuSeconds();
  if (options_.reduce) {
    const Seconds real_begin = clock_();
    if (world_ > 1) {  // the mean over one replica is the gradient itself
      STEPSCOPE_RETURN_IF_ERROR(
          allreducer_->Allreduce(slice, options_.dtype, comm::ReduceOp::kMean)
              .WithContext("all-reduce of bucket " + std::to_string(job.index)));
    }
    const Seconds real = clock_() - real_begin;
    if (emulation_.link_gbps > 0) {
      // The real reduction's fastest time approximates its pure transfer cost; anything above it
      // is waiting for other ranks, which stays. Replace the transfer by the emulated link's.
      Seconds fastest;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (fastest_by_bucket_.size() <= static_cast<size_t>(job.index)) {
          fastest_by_bucket_.resize(job.index + 1, real);
        }
        fastest = fastest_by_bucket_[job.index] = std::min(fastest_by_bucket_[job.index], real);
      }
      const Seconds modelled = comm::RingAllreduceSeconds(
          record.bytes, world_, emulation_.link_gbps, emulation_.link_latency_us * 1e-6);
      if (counted && fastest > modelled * 1.05 + 100e-6) ++unhonoured_links_;
      SleepSeconds(modelled - fastest);
    }
    if (norms) global_sq = SumSquares(slice.data(), slice.size());
  }
  record.end = clock_();
  double error_sq = 0, exact_sq = 0;
  if (wire_error) {
    // The same bucket reduced in fp32 (a collective every rank makes at the same steps); the
    // time it takes is not the bucket's (the record ended before it).
    STEPSCOPE_RETURN_IF_ERROR(
        allreducer_->Allreduce(exact, comm::WireDtype::kFp32, comm::ReduceOp::kMean)
            .WithContext("fp32 all-reduce of bucket " + std::to_string(job.index) +
                         " (the wire error's yardstick)"));
    for (size_t i = 0; i < exact.size(); ++i) {
      const double e = static_cast<double>(slice[i]) - exact[i];
      error_sq += e * e;
    }
    exact_sq = SumSquares(exact.data(), exact.size());
  }
  const std::optional<Seconds> cpu_end = ThreadCpuSeconds();
  record.busbw_gbps = options_.reduce ? comm::AllreduceBusBandwidthGBps(
                                            record.bytes, record.end - record.start, world_)
                                      : 0;
  std::lock_guard<std::mutex> lock(mu_);
  stats_.collectives.push_back(record);
  stats_.comm_busy += record.end - record.start;
  if (stats_.collective_cpu && cpu_begin && cpu_end) {
    *stats_.collective_cpu += *cpu_end - *cpu_begin;
  } else {
    stats_.collective_cpu.reset();
  }
  if (norms) stats_.local_grad_sq += local_sq;
  if (global_sq >= 0) stats_.global_grad_sq += global_sq;
  if (wire_error) {
    stats_.wire_error_sq += error_sq;
    stats_.wire_exact_sq += exact_sq;
  }
  return Status::Ok();
}

}  // namespace stepscope::train
