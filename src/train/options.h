// TrainOptions: everything `stepscope train` can be told, as typed fields with their defaults.
// Parsed once at the command line edge (apps/stepscope) and passed down explicitly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/allreduce.h"
#include "core/status.h"
#include "data/source.h"
#include "nn/model.h"
#include "nn/optimizer.h"

namespace stepscope::train {

// Which all-reduce the reducer uses. kAuto: shared memory when every rank is on one host
// (measured fastest here, bench/allreduce.sh), the pipelined ring otherwise.
enum class AllreduceChoice { kAuto, kMpi, kRing, kShm };

struct ReducerOptions {
  double bucket_mb = 25;  // --bucket-mb: byte cap of a gradient bucket (MiB)
  bool overlap = true;    // --no-overlap clears: reduce only after backward
  bool reduce = true;     // --no-reduce clears: ablation, replicas train alone
  comm::WireDtype dtype = comm::WireDtype::kFp32;      // --reduce-dtype
  AllreduceChoice algorithm = AllreduceChoice::kAuto;  // --allreduce
  // --measure-wire-error: at the steps whose gradient norms are sampled, an fp32 copy of each
  // bucket is reduced too, and the reduced-precision result's error against it is measured.
  bool measure_wire_error = false;
};

// Emulation (DESIGN.md §6): real compute and communication, paced to slower hardware.
struct EmulationOptions {
  double device_speed = 0;  // --emulate-device-speed F: compute wall = CPU time / F; 0: off
  double link_gbps = 0;     // --emulate-link GBPS[,LATENCY_US]: 0: off
  double link_latency_us = 0;
  // --emulate-device-file FILE: the sweep's emulated devices (train/device_file.h); a run of a
  // compute shape already there paces to it, else records its own. Empty: each run its own.
  // Ignored without an emulated device (a sweep gives it to every run, unpaced ones too).
  std::string device_file;
  bool active() const { return device_speed > 0 || link_gbps > 0; }
};

// One slow rank: its compute takes `factor` times as long.
struct StragglerInjection {
  int rank = 0;
  double factor = 1.0;
  bool operator==(const StragglerInjection&) const = default;
};

// Fault injection, the ground truth the diagnosis must find.
struct InjectionOptions {
  // --inject-straggler RANK:FACTOR[,RANK:FACTOR...]: one or several slow ranks.
  std::vector<StragglerInjection> stragglers;
  // --inject-noise RANK:SHARE: a noisy co-tenant beside that rank. In bursts of whole steps it
  // takes a share of the rank's core (active half the steps at 2 x SHARE, capped at 0.9), so that
  // on average SHARE of the rank's compute time is lost to it and the loss varies step to step.
  // Built into the pacer: honoured and labelled like the emulation.
  int noise_rank = -1;
  double noise_share = 0;
  double input_delay_ms = 0;  // --inject-input-delay MS (per batch, in the loader)
  int hang_rank = -1;         // --inject-hang RANK:STEP: that rank stops making progress
  int64_t hang_step = 0;
  int crash_rank = -1;  // --inject-crash RANK:STEP: that rank dies (SIGKILL)
  int64_t crash_step = 0;
};

enum class DatasetKind { kFashionMnist, kText };

struct TrainOptions {
  nn::ModelConfig model;
  nn::OptimizerConfig optimizer;
  int batch = 32;        // --batch: per-replica micro-batch
  int accum = 1;         // --accum K: micro-batches per step (reduce on the last)
  int64_t steps = 0;     // --steps: stop after this many steps (0: run --epochs)
  double epochs = 1;     // --epochs (fractions allowed)
  int warmup_steps = 5;  // --warmup-steps: excluded from steady-state statistics
  uint64_t seed = 1;     // --seed
  std::string data_dir = "/usr/share/datasets/fashion-mnist";  // --data
  std::string text = "/usr/share/games/fortunes";              // --text
  int loader_workers = 1;                                      // --loader-workers
  int prefetch = 4;                                            // --prefetch
  bool augment = false;          // --augment (images: random crop + flip)
  bool variable_length = false;  // --variable-length (gpt): each example its own sequence
                                 // length, batches padded to their longest (data/lengths.h)
  bool balance_lengths = false;  // --balance-lengths: length-bucketed batches, every rank's
                                 // batch of a step of similar length; the lever
  bool synthetic_input = false;  // --synthetic-input (ablation)
  bool evaluate = true;          // --no-eval clears
  int64_t eval_limit = 0;        // --eval-limit: held-out examples to evaluate (0: all)
  // --target-loss L: stop once the smoothed training loss reaches L (trainer.h, kTargetSmoothing).
  std::optional<double> target_loss;
  // --target-accuracy A (mlp, cnn): stop once the held-out accuracy, evaluated every
  // eval_every steps on eval_limit examples, reaches A (a fraction, e.g. 0.85).
  std::optional<double> target_accuracy;
  int64_t eval_every = 0;  // --eval-every K: held-out evaluations during training (0: with
                           // --target-accuracy every 50 steps, else only at the end)
  int64_t EvalEvery() const { return eval_every > 0 ? eval_every : target_accuracy ? 50 : 0; }
  int grad_norm_every = 4;       // --grad-norm-every: steps between gradient-norm samples
                                 // (noise scale; each costs a pass over the gradients)
  int checksum_every = 50;       // --checksum-every: parameter agreement check period
  int latency_probes = 16;       // --latency-probes: small all-reduces timed after the steps
                                 // (train/latency_probe.h; 0: none)
  double stall_timeout_s = 120;  // --stall-timeout: a rank silent this long ends the job
  bool progress = true;          // --quiet clears
  std::string out;               // --out DIR (empty: no files)
  std::string save_params;       // --save-params FILE: rank 0 writes the final parameters
                                 // as raw little-endian float32 (a checkpoint)
  ReducerOptions reducer;
  EmulationOptions emulation;
  InjectionOptions injection;

  DatasetKind dataset() const {
    return model.kind == nn::ModelKind::kGpt ? DatasetKind::kText : DatasetKind::kFashionMnist;
  }
};

// Checks options that need no data or MPI (ranges, combinations). `world` is the replica count.
Status Validate(const TrainOptions& options, int world);

std::string ToString(nn::ModelKind kind);
Result<nn::ModelKind> ParseModelKind(const std::string& name);
Result<AllreduceChoice> ParseAllreduceChoice(const std::string& name);
std::string ToString(AllreduceChoice choice);

}  // namespace stepscope::train
