// Train: the replica loop. Every replica loads its shard, runs forward and backward, hands
// gradients to the reducer bucket by bucket, waits for the reductions, updates, and records
// where the step's time went.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "data/length_balancing.h"
#include "decide/noise_scale.h"
#include "nn/model.h"
#include "train/latency_probe.h"
#include "train/options.h"
#include "train/process_cpu.h"

namespace stepscope::train {

struct EvalSummary {
  bool done = false;
  int64_t count = 0;          // examples (images) or predicted bytes (text)
  double loss = 0;            // mean loss (natural log)
  double accuracy = -1;       // images
  double bits_per_byte = -1;  // text
};

// --target-loss: the job's training loss (the mean over ranks) is smoothed by an exponential
// moving average with this weight on each new step, and compared with the target from step
// kTargetFirstStep on (earlier, the average has seen too few steps).
inline constexpr double kTargetSmoothing = 0.1;
inline constexpr int64_t kTargetFirstStep = 10;

struct RunSummary {
  int replicas = 1;
  int64_t steps = 0;
  int64_t steady_steps = 0;
  double samples_per_s = 0;    // steady state, whole job
  Seconds step_time_mean = 0;  // steady state, slowest rank per step
  double final_loss = 0;       // mean over ranks of the last steps' training loss
  // With --target-loss or --target-accuracy: the steps it took (unset when not reached) and the
  // smoothed loss when the run stopped.
  std::optional<int64_t> steps_to_target;
  double smoothed_loss = 0;
  EvalSummary eval;  // the last held-out evaluation
  int64_t evaluations = 0;
  Seconds evaluation_s = 0;  // held-out evaluations, during training and at the end
  Seconds startup_s = 0;     // from entering Train (data, model, buffers) to the first step
  double noise_scale = -1;   // B_noise estimate (-1: unknown)
  // B_noise averaged over the run's training progress (decide/noise_scale.h).
  decide::NoiseScale noise_over_training;
  double mean_local_grad_sq = -1;
  double mean_global_grad_sq = -1;
  // --measure-wire-error: the reduced-precision gradient's relative error against the same
  // gradients reduced in fp32, |G_wire - G_fp32| / |G_fp32| pooled over the sampled steps, and
  // the largest of one step (-1: not measured).
  double wire_relative_error = -1;
  double wire_relative_error_max = -1;
  int64_t wire_error_steps = 0;
  nn::ModelStats model;
  // The gradient slices in the order backward made them ready (the model's ready reports, each
  // fp32 bytes): the granularity a reducer builds its buckets from (model/simulate.cc).
  std::vector<int64_t> ready_slice_bytes;
  // Each slice's median share of a steady step's reducing backward elapsed when it was ready
  // (train/slice_readiness.h); empty when no steady step reported its slices.
  std::vector<double> ready_slice_backward_share;
  // Variable-length text: this rank's steady batches tallied as drawn and bucketed
  // (data/length_balancing.h); empty otherwise.
  data::LengthTally lengths;
  std::string model_description;
  std::string dataset_description;
  std::string allreduce;  // algorithm used
  int buckets_per_step = 0;
  // The small all-reduces timed after the steps (--latency-probes); unset at one replica,
  // without reduction or with no probes.
  std::optional<LatencyProbe> latency_probe;
  Seconds wall_time = 0;
  // Emulation bookkeeping: segments that could not be paced as asked.
  int64_t paced_segments = 0;
  int64_t unhonoured_segments = 0;
  int64_t unhonoured_links = 0;
  // This rank's process CPU seconds per steady step (every thread), and how much of it went
  // inside the gradient reductions; unset when unknown.
  std::optional<CpuPerStep> cpu;
  // The emulated device's cost per unit of work per compute segment, and where it came from:
  // "own" (this run's warm-up), "shared" (the device file, calibrated by `calibrated_by`) or
  // "none" (not emulated, or the ranks' segments differed).
  std::string device_calibration = "none";
  std::string device_calibrated_by;
  std::vector<Seconds> device_cost_per_work;
};

// Runs training on this rank. Collective: every rank of `comm` calls it with the same options.
Result<RunSummary> Train(const TrainOptions& options, const comm::Communicator& comm);

}  // namespace stepscope::train
