// Reading a finished run back: every rank's step records from DIR/rank-R.steps.jsonl, and how
// well the emulation was honoured from DIR/run.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/step_record.h"

namespace stepscope::sweep {

// The run's rank-R.steps.jsonl files as (rank, path), by rank; empty when there are none. Errors:
// an unlistable directory, a rank number out of range (naming the file).
Result<std::vector<std::pair<int, std::string>>> RankRecordFiles(const std::string& run_dir);

// All ranks' records of the run in `run_dir`, rank by rank. Errors name the file; a directory
// without any rank-R.steps.jsonl is an error too.
Result<std::vector<StepRecord>> ReadRunRecords(const std::string& run_dir);

// run.json `emulation`: the segments the pacer stretched and those it could not stretch enough
// (the host was slower than the emulated device), and the link reductions likewise.
struct RunPacing {
  int64_t paced_segments = 0;
  int64_t unhonoured_segments = 0;
  int64_t unhonoured_links = 0;
  int64_t link_reductions = 0;  // buckets_per_step * steps with an emulated link, else 0
};

// nullopt when the run was not emulated (or run.json predates these fields); an error when
// run.json is missing or unreadable.
Result<std::optional<RunPacing>> ReadRunPacing(const std::string& run_dir);
// The same from run.json's text; `path` names the file in errors.
Result<std::optional<RunPacing>> RunPacingFromText(const std::string& text,
                                                   const std::string& path);

// run.json: the configuration and model sizes the step-time model needs. Errors name the file
// and the field.
struct RunSummary {
  int replicas = 0;
  int batch = 0, accum = 1, loader_workers = 1;
  // config.dataloader_num_workers 0 (a PyTorch DataLoader without workers): the training
  // process loads each batch itself, in series with the step (loader_workers still says 1).
  bool loader_in_process = false;
  // The loader workers beside each rank, as the step-time model and the levers count them: 0
  // for a loader in the training process.
  int workers_beside_ranks() const { return loader_in_process ? 0 : loader_workers; }
  bool reduce = true, overlap = true, synthetic_input = false;
  double bucket_mb = 25;
  std::string reduce_dtype = "fp32";
  std::string allreduce;  // the algorithm that ran (shm, ring, mpi)
  // config.reducer.comm_hook: the communication hook of the script's own that reduced the
  // gradients (a --torch job's, by name: fp16_compress_hook, powerSGD_hook...); empty when the
  // reducer's own reduction ran. Its precision is the hook's: stepscope does not change it.
  std::string comm_hook;
  // config.reducer.comm_hook_bytes "bucket": the hook's collectives count the bucket's bytes,
  // not what it sends (a hook that compresses in its own way, PowerSGD); "wire" or absent: what
  // it sends.
  bool comm_hook_bytes_are_bucket = false;
  // The reductions were paced to an emulated link (run.json emulation.link_gbps > 0): their
  // durations are the pacer's, and their CPU time its waiting.
  bool emulated_link = false;
  int64_t gradient_bytes = 0, parameters = 0, activation_bytes_per_sample = 0;
  std::string optimizer;  // sgd, adamw
  // model.ready_slices_bytes: the gradient's slices in the order backward made them ready (the
  // granularity of the reducer's buckets); empty when not recorded (traces, older runs).
  std::vector<int64_t> ready_slice_bytes;
  // model.ready_slices_backward_share: each slice's median share of backward elapsed when it was
  // ready, one per slice; empty when not recorded.
  std::vector<double> ready_slice_backward_share;
  // memory (docs/train-output.md): the model's buffers per replica (weights, gradients, optimizer
  // state, one micro-batch's activations) and the peak resident memory of the highest rank;
  // unset in run.json files written before memory was recorded.
  std::optional<int64_t> model_memory_bytes, peak_memory_bytes;
  // The most ranks on one host (run.json hosts) and the cores of a host (cores_per_host); 0 in
  // run.json files written without them.
  int ranks_per_host = 0, cores_per_host = 0;
  // Process CPU seconds per steady step, the mean over ranks (run.json cpu.per_step_s); unset in
  // run.json files written without it.
  std::optional<double> cpu_per_step;
  // Of it, what was spent outside the gradient reductions (cpu.outside_reductions_per_step_s);
  // unset when not recorded.
  std::optional<double> cpu_outside_reductions_per_step;
  // The busiest host's ranks' CPU per step over its cores times the job's step (cpu.
  // busiest_host_share): near 1, the host's cores set the pace. Unset when not recorded.
  std::optional<double> busiest_host_share;
  // The least of the ranks' CPU seconds per steady step inside the gradient reductions
  // (cpu.per_rank_in_reductions_per_step_s): the rank that waited least for the others, nearest
  // to the reductions' own arithmetic. Unset when not recorded.
  std::optional<double> cpu_in_reductions_least_rank;
  // latency_probe (docs/train-output.md): the payload per rank of the small all-reduces train
  // timed after the steps, and each one's duration; 0 and empty when not recorded (one replica,
  // no reduction, traces, older runs).
  int64_t latency_probe_bytes = 0;
  std::vector<double> latency_probe_seconds;
  double samples_per_s = 0;
  // train --target-loss or --target-accuracy: the samples (all ranks) it took to reach the target;
  // unset when the run had no target or did not reach it (and in run.json files written before
  // targets).
  std::optional<double> samples_to_target;
  // Wall time of train, and its parts outside the steps: start-up (data, model, buffers, up to
  // the first step) and held-out evaluation; 0 in run.json files written before them.
  double wall_time_s = 0, startup_s = 0, evaluation_s = 0;
  // A multi-replica run's noise scale averaged over its training (gradient_noise.
  // b_noise_over_training); unset when it has none.
  std::optional<double> b_noise_over_training;
  // train --measure-wire-error: the reduced gradient's relative error against fp32 (wire_error.
  // relative, wire_error.relative_max, wire_error.steps); unset when not measured.
  std::optional<double> wire_relative_error;
  double wire_relative_error_max = 0;
  int64_t wire_error_steps = 0;
  // run.json lengths (variable-length text, docs/train-output.md): whether the batches were
  // length-bucketed, and what bucketing changes by the job's own sampler: a rank's computed
  // positions bucketed over as drawn, and the sorted ratios of a bucketed rank's positions to
  // its step's mean. Unset for fixed-length runs and run.json files written before it.
  struct Lengths {
    bool balanced = false;
    double bucketed_work_ratio = 1;
    std::vector<double> bucketed_spread;
  };
  std::optional<Lengths> lengths;
};
Result<RunSummary> ReadRunSummary(const std::string& run_dir);
// run.json's notes: what the run itself says of how it was measured (the PyTorch helper's: a
// precision it could not apply, batches it could not count, a backward it did not see), for the
// progress lines. Empty when run.json has none or cannot be read: the analysis reads run.json
// strictly, and names what is wrong there.
std::vector<std::string> ReadRunNotes(const std::string& run_dir);
// run.json's script_collectives (the PyTorch helper's: the script's own blocking collectives by
// name and their calls in the steady steps) as calls per steady step, by name. Empty
// where run.json has none or cannot be read (words for the evidence, not a measurement).
std::vector<std::pair<std::string, double>> ReadScriptCollectives(const std::string& run_dir);
// The same from run.json's text; `path` names the file in errors.
Result<RunSummary> RunSummaryFromText(const std::string& text, const std::string& path);

}  // namespace stepscope::sweep
