// The fitted step-time model (what `fit` produces and `simulate` reads), the question asked of
// it (a scenario) and its answer (a prediction). Field meanings and methods: docs/model.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/units.h"
#include "model/collective_fit.h"
#include "model/host_layout.h"

namespace stepscope::model {

// A constant of the model: its estimate, unit, how it was obtained, and whether the data
// identified it or it is assumed.
struct Constant {
  std::string name;
  Estimate estimate;
  std::string unit;
  std::string how;
  bool assumed = false;
};

// One point of the gradient readiness profile: by `backward_share` of backward, `bytes_share`
// of the gradient bytes are ready (both in [0, 1], increasing).
struct ReadinessPoint {
  double backward_share = 0;
  double bytes_share = 0;
};

// Ranks sharing a host's cores (host_crowding.h): the compute ratio and the overhead per step
// as lines a + b c in the crowding c = max(0, ranks per host / cores per host - 1).
struct HostCrowding {
  int cores_per_host = 0;
  int max_ranks_per_host = 0;  // the most ranks a fitted run put on one host
  Constant compute_ratio_a, compute_ratio_b, overhead_a, overhead_b;
  // Where a crowded baseline kept its host's cores at least kQueueLoad busy (host_crowding.h):
  // the compute ratio as a + b q, q = rho / (1 - rho) of the scenario's load rho, in place of
  // the line in the crowding; `cpu_per_rank_step`, each rank's process CPU per step (every
  // thread) in the most loaded baseline, gives a scenario's rho (R x it / (C x its step)).
  // `queue_load`: that baseline's rho, whose waits the ranks' fitted jitter already holds.
  std::optional<Constant> queue_a, queue_b;
  Seconds cpu_per_rank_step = 0;
  double queue_load = 0;
  // Of overhead_a and overhead_b: the crowded baselines' residual (what the other parts did not
  // reproduce of their steps, fit.cc), as a line of its own in the crowding; unset where no
  // residual was added. A link what-if scales it with the link's time (link_scaling.h).
  std::optional<Constant> residual_a, residual_b;
};

// The host's cores as a ceiling on the step (host_cpu.h): R ranks on a host of C cores, each
// taking d CPU-seconds per step (every thread of its process), cannot step faster than R d / C.
struct HostCpu {
  int cores_per_host = 0;
  int max_ranks_per_host = 0;  // the most ranks a fitted run put on one host
  int reference_samples = 0;   // micro-batch times accumulation where per_step was measured
  Constant per_step;           // d at the reference micro-batch and accumulation
  Constant per_sample;         // d's growth per sample of a step's micro-batches (b K)
  // Where the all-reduce is the host's own arithmetic (the shared-memory path): each rank's CPU
  // seconds per wire byte per unit of the ring's bandwidth share, from the baselines that had a
  // core per rank. Ranks that outnumber the cores share them inside a reduction too, so at R
  // ranks on C cores a reduction takes at least R a share(N) bytes / C. Unset for other
  // all-reduces (whose CPU while they wait on a wire is polling, not work) and without a
  // recorded CPU time or an uncrowded baseline at two or more replicas.
  std::optional<Constant> reduction_per_byte;
};

// The configuration a model was fitted at, and the knobs a scenario may change.
struct Config {
  int replicas = 1;
  int batch = 1;                  // micro-batch per replica
  int accum = 1;                  // micro-batches per step
  std::string dtype = "fp32";     // wire precision: fp32, bf16, fp16
  std::string algorithm = "shm";  // the all-reduce that ran: shm, ring, mpi
  // The script's own communication hook that reduced (a --torch job's, by name); empty: the
  // reducer's own. Its wire precision is the hook's, which no what-if changes.
  std::string comm_hook;
  // The hook's collectives counted the bucket's bytes, not what it sent (PowerSGD...): a link
  // what-if prices the bucket's bytes, at most what such a hook sends.
  bool comm_hook_bytes_are_bucket = false;
  double bucket_mb = 25;
  // The reducer's own limit on the first bucket it launches, whatever bucket_mb is: PyTorch
  // DDP's is 1 MiB (its last layers' gradients go out early); 0 for none (stepscope's trainer).
  double first_bucket_mb = 0;
  bool overlap = true;
  // Loader workers per replica; 0: batches loaded in the training process itself, one at a time
  // between the steps' compute (a PyTorch DataLoader with num_workers=0).
  int loader_workers = 1;
};

// The first-bucket limit of the reducer behind `algorithm` as run.json names it: PyTorch's
// process-group backends (gloo, nccl, ucc) reduce through DDP's reducer (1 MiB); stepscope's
// own algorithms (shm, ring, mpi) have none (0).
double FirstBucketMb(const std::string& algorithm);

// What length-bucketed batches (a grouping sampler, train --balance-lengths) change in a
// variable-length job, as its sampler draws them (data/length_balancing.h).
struct LengthBuckets {
  bool applied = false;   // the runs were bucketed already
  double work_ratio = 1;  // a rank's positions computed bucketed over as drawn
  // Sorted ratios of a bucketed rank's positions to its step's mean: ranks of a step share a
  // bucket, so this, not each rank's step-to-step variation, is what a bucketed step waits on.
  std::vector<double> spread;
  // From the records' tokens (token_cost.h), when they carry them: the share of forward and
  // backward that scales with the positions (1: all of it), and what the positions do not
  // explain (sorted ratios, the host's noise), which bucketing keeps.
  double token_share = 1;
  std::vector<double> noise{1.0};
  // The positions per rank and step the fitted compute stands for (the baselines' typical rank,
  // pooled), at which token_share holds; 0 when the records carry no tokens.
  double positions = 0;
};

// The positions each rank computed in each steady step of one run (records' tokens): [step]
// [rank], steps in order.
using DrawnPositions = std::vector<std::vector<double>>;

// The link the runs were measured on, against the all-reduce cost fitted on them.
struct MeasuredLink {
  double nominal_gbps = 0;    // as given (--measured-link)
  double delivered_gbps = 0;  // 1 / the fitted seconds per byte, in GB/s
  // false: the fit delivers more than the nominal rate (link_scaling.h kFasterThanTheLink), so
  // the link did not set the reductions' time.
  bool link_binds = true;
};

struct StepModel {
  Config reference;  // the baselines' configuration (replicas: the largest fitted)
  std::vector<int> fitted_replicas;

  // Compute per micro-batch on a typical rank: c0 + c1 b for forward and backward; the optimizer
  // once per step.
  Constant forward_c0, forward_c1, backward_c0, backward_c1, optimizer;
  // Compute at each fitted N relative to the pooled constants; a scenario at a fitted N uses its
  // ratio, any other N the pooled constants (ratio 1).
  std::map<int, double> compute_ratio;
  // Step-to-step variation of each rank's compute around its own mean (ratios, mean
  // 1), pooled over ranks and runs: a synchronous step waits for the maximum over N.
  std::vector<double> compute_jitter;
  // Ranks persistently slower than the others: their compute / the typical rank's.
  std::map<int, double> stragglers;
  // Variable-length text (run.json lengths): what length-bucketed batches change, by the job's
  // own sampler. Unset for fixed-length runs, traces and specs.
  std::optional<LengthBuckets> length_buckets;
  // The positions every variable-length run drew, by run name (with length_buckets' positions
  // set): a run predicted for the lengths it drew (Scenario::as_drawn).
  std::map<std::string, DrawnPositions> drawn;

  // All-reduce cost per wire precision, and the fp32 gradient bytes each step reduces.
  std::map<std::string, AlphaBeta> collectives;
  // Runs other than baselines that entered the fit (all-reduce cost, overlap rate).
  std::vector<std::string> cost_runs;
  Bytes gradient_bytes = 0;
  std::vector<ReadinessPoint> readiness;  // from (0, 0) to (1, 1)
  bool readiness_assumed = false;         // true: linear (too few buckets measured)
  std::string readiness_how;              // where the profile came from
  // The measured bucket layout at reference.bucket_mb: each bucket's share of the step's
  // gradient bytes, in launch order (a bucket holds whole layers, so it can be well over the
  // bucket size); empty when not measured (a spec, one replica only).
  std::vector<double> bucket_shares;
  // The gradient's slices (the reducer's granularity: a layer, a block, a parameter) as shares
  // of its bytes, in the order backward makes them ready (run.json model.ready_slices_bytes);
  // with them, another bucket size is grouped as the reducer groups it. Empty when not recorded
  // (traces, a spec).
  std::vector<double> slice_shares;
  // How fast a reduction progresses beside backward (replay.h), fitted to the runs that
  // overlapped several buckets; 1 (assumed) without one.
  Constant overlap_rate{"overlap_rate", Estimate::Exact(1), "share of full speed",
                        "assumed 1: no run overlapped several buckets without waiting for input",
                        true};

  // Input: a loader worker's service time per batch, when the measured wait identifies it (a
  // loader in the training process: its whole wait per step); otherwise the measured mean wait,
  // held constant. Each measured N keeps its own service (the loader's workers share the
  // host's cores with the ranks), with its band over the steps; other N take the constant, the
  // mean of those, its band their range.
  std::optional<Constant> loader_service;
  std::map<int, Estimate> loader_service_at;
  // How much of the service per batch grows with the micro-batch (0: none, 1: in proportion),
  // from the double-batch run; unset: held at the baselines' service whatever the micro-batch.
  std::optional<Constant> loader_batch_share;
  Constant input_wait;
  Constant overhead;  // the measured residual per step
  // Set when baselines ran more ranks than cores on a host: compute and overhead then follow
  // the crowding at every N (overhead above replaces `overhead`).
  std::optional<HostCrowding> crowding;
  // Set when the baselines recorded their process CPU time: the step is at least the time the
  // host's cores need for its ranks' CPU work.
  std::optional<HostCpu> host_cpu;

  // Memory per replica (bytes): what does not scale with the micro-batch, and what does.
  Bytes memory_fixed = 0;
  Bytes memory_per_sample = 0;
  std::string memory_how;  // how both were obtained, in words

  // Set by a spec (spec.h): the devices laid out across hosts, and the device memory that
  // holds a replica. A scenario may override both.
  std::optional<HostLayout> hosts;
  std::optional<double> device_memory_gb;

  // Set by a link what-if relative to the measured link (link_scaling.h): that link's nominal
  // rate, what the fitted all-reduce cost delivers, and whether the link set it.
  std::optional<MeasuredLink> measured_link;

  std::vector<std::string> notes;  // what the data could not identify, in words
};

// A what-if: the reference configuration with some knobs changed, at `replicas`.
struct Scenario {
  int replicas = 1;
  std::optional<AlphaBeta> link;  // replaces the fitted all-reduce cost
  // Across hosts (host_layout.h): devices per host, and the intra- and inter-host links. With
  // devices per host set, an intra-host link not given is the model's (a spec's, or the cost
  // fitted on the measured host), an inter-host link not given the model's or `link`.
  std::optional<int> devices_per_host;
  std::optional<AlphaBeta> intra_link, inter_link;
  // The most ranks sharing one host's cores, where known (a measured run being checked): the
  // host crowding it ran at (host_crowding.h).
  std::optional<int> ranks_per_host;
  double compute_scale = 1;  // devices this many times faster
  std::optional<std::string> dtype;
  std::optional<double> bucket_mb;
  std::optional<bool> overlap;
  std::optional<int> batch, accum, loader_workers;
  bool without_stragglers = false;
  // Length-bucketed batches: each rank computes the bucketed work, and the slowest of N ranks
  // is drawn from the bucketed spread. Without the model's length_buckets (a trace, a spec) only
  // the rotating imbalance goes: the step waits on no spread, and padding is not known.
  bool balance_lengths = false;
  // A run of the model's `drawn`: each rank's forward and backward from the positions it drew
  // in each step of that run (around them the host's noise), not from the sampler's
  // expectation; for checking a run, or a lever's gain, apart from the lengths one run of a few
  // steps happened to draw. Empty: expected.
  std::string as_drawn;
  std::optional<double> device_memory_gb;
};

// A step's predicted parts (seconds per step), on the rank the step waits for.
struct StepParts {
  Seconds input_wait = 0, compute = 0, straggler_wait = 0, exposed_comm = 0, overhead = 0;
  Seconds step() const { return input_wait + compute + straggler_wait + exposed_comm + overhead; }
};

struct Prediction {
  int replicas = 0;
  int batch = 0, accum = 0;  // as simulated (after any memory fallback)
  Estimate step_s, samples_per_s, efficiency;
  StepParts parts;                   // at the point value
  StepParts parts_fast, parts_slow;  // every constant at the fast, then the slow end
  bool fits_memory = true;
  std::string memory_note;  // set when the asked micro-batch did not fit
  std::string wire_note;    // set when the wire's pricing assumes something (simulate.cc)
  std::string bucket_note;  // set when a smaller bucket size split the measured buckets
};

}  // namespace stepscope::model
