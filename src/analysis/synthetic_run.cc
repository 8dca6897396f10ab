#include "analysis/synthetic_run.h"

#include <algorithm>

namespace stepscope::analysis {
namespace {

// A small deterministic generator (SplitMix64) so that runs are reproducible.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  double Uniform() {  // in [0, 1)
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_;
};

}  // namespace

std::vector<StepRecord> SynthesizeRun(const SyntheticRunSpec& spec) {
  std::vector<StepRecord> out;
  SplitMix rng(spec.seed);
  const int n = std::max(1, spec.replicas);
  const bool reduce = spec.reduce && n > 1 && spec.buckets > 0;
  const int k_count = reduce ? spec.buckets : 0;
  const double b = static_cast<double>(spec.samples_per_rank);
  Seconds t0 = 100.0;
  for (int64_t s = 0; s < spec.warmup_steps + spec.steps; ++s) {
    std::vector<StepRecord> step(n);
    std::vector<std::vector<Seconds>> ready(n, std::vector<Seconds>(k_count));
    std::vector<Seconds> backward_end(n);
    for (int r = 0; r < n; ++r) {
      StepRecord& rec = step[r];
      rec.rank = r;
      rec.step = s;
      rec.warmup = s < spec.warmup_steps;
      rec.samples = spec.samples_per_rank;
      rec.start = t0;
      rec.input_wait = spec.input_wait;
      auto f = spec.rank_compute_factor.find(r);
      double compute = spec.compute * (f == spec.rank_compute_factor.end() ? 1.0 : f->second);
      compute *= 1 + spec.jitter * (2 * rng.Uniform() - 1);
      rec.forward = compute / 3;
      rec.backward = compute - rec.forward;
      rec.compute = compute;
      const Seconds bwd_start = t0 + rec.input_wait + rec.forward;
      for (int k = 0; k < k_count; ++k) {
        ready[r][k] = bwd_start + rec.backward * (k + 1) / k_count;
      }
      backward_end[r] = bwd_start + rec.backward;
      if (spec.grad_sq >= 0) {
        rec.local_grad_sq = spec.grad_sq + spec.trace_sigma / b;
        rec.global_grad_sq = spec.grad_sq + spec.trace_sigma / (b * n);
      }
    }
    // The reduction of bucket k starts when the last rank arrives and the previous one is done.
    Seconds comm_free = 0;
    std::vector<Seconds> bucket_start(k_count), bucket_end(k_count);
    for (int k = 0; k < k_count; ++k) {
      Seconds last = 0;
      for (int r = 0; r < n; ++r) last = std::max(last, ready[r][k]);
      bucket_start[k] = std::max(last, comm_free);
      bucket_end[k] = bucket_start[k] + spec.bucket_time;
      comm_free = bucket_end[k];
    }
    Seconds next_t0 = t0;
    for (int r = 0; r < n; ++r) {
      StepRecord& rec = step[r];
      Seconds comm_done = backward_end[r];
      for (int k = 0; k < k_count; ++k) {
        rec.collectives.push_back({k, 1 << 20, ready[r][k], bucket_start[k], bucket_end[k], 1.0});
        comm_done = std::max(comm_done, bucket_end[k]);
      }
      rec.exposed_comm = comm_done - backward_end[r];
      rec.comm_busy = k_count * spec.bucket_time;
      rec.end = comm_done + spec.overhead;
      next_t0 = std::max(next_t0, rec.end);
      out.push_back(std::move(rec));
    }
    t0 = next_t0;
  }
  return out;
}

SyntheticAblationSpecs AblationSpecsOf(const SyntheticRunSpec& spec) {
  SyntheticAblationSpecs specs{spec, spec, spec};
  specs.no_reduce.reduce = false;
  specs.synthetic_input.input_wait = 0;
  specs.double_batch.compute *= 2;
  specs.double_batch.input_wait *= 2;
  specs.double_batch.samples_per_rank *= 2;
  return specs;
}

}  // namespace stepscope::analysis
