// One finished run as the model sees it: its configuration, its sizes, what train recorded of its
// host and CPU, and every rank's step records, as read from a diagnose or analyze directory.
// fit.h fits the model on them; check.h checks the model against them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/step_record.h"
#include "model/step_model.h"

namespace stepscope::model {

enum class RunRole {
  kBaseline,     // the reference configuration at some N: fits everything
  kDoubleBatch,  // the reference at twice the micro-batch: compute's slope in b
  kOther,        // any other run: not fitted, checked against the model instead
};

// One finished run: its configuration, model sizes and every rank's records.
struct RunObservation {
  std::string name;
  RunRole role = RunRole::kOther;
  Config config;
  bool reduce = true;
  bool synthetic_input = false;
  Bytes gradient_bytes = 0;  // fp32 gradient bytes per replica
  // The gradient's slices in the order backward made them ready (run.json
  // model.ready_slices_bytes); empty when not recorded.
  std::vector<Bytes> ready_slice_bytes;
  // Each slice's median share of backward elapsed when it was ready (run.json
  // model.ready_slices_backward_share), one per slice; empty when not recorded.
  std::vector<double> ready_slice_share;
  int64_t parameters = 0;
  Bytes activation_bytes_per_sample = 0;
  int optimizer_state_floats = 2;  // per parameter: AdamW 2, SGD with momentum 1
  // Peak resident memory of the run's highest rank, as train recorded it (run.json memory);
  // unset for runs recorded before it.
  std::optional<Bytes> peak_memory_bytes;
  // The most ranks the run put on one host, and that host's cores (run.json hosts and
  // cores_per_host); 0 when unknown (traces, run.json files written before them).
  int ranks_per_host = 0, cores_per_host = 0;
  // Process CPU seconds per steady step spent outside the gradient reductions, the mean over
  // ranks (run.json cpu.outside_reductions_per_step_s); unset when not recorded (traces, older
  // runs).
  std::optional<Seconds> cpu_outside_reductions_per_step;
  // The least of the ranks' process CPU seconds per steady step inside the gradient reductions
  // (run.json cpu.per_rank_in_reductions_per_step_s); unset when not recorded.
  std::optional<Seconds> cpu_in_reductions_least_rank;
  // The busiest host's ranks' process CPU per step over its cores and the step (run.json
  // cpu.busiest_host_share); unset when not recorded.
  std::optional<double> cpu_busiest_host_share;
  bool emulated_link = false;  // the reductions were paced to an emulated link
  // The small all-reduces train timed after the steps (run.json latency_probe): their payload
  // per rank at wire precision and each one's duration; 0 and empty when not recorded.
  Bytes latency_probe_bytes = 0;
  std::vector<Seconds> latency_probe_seconds;
  // Variable-length text: what length-bucketed batches change (run.json lengths); unset for
  // fixed-length runs.
  std::optional<LengthBuckets> length_buckets;
  double samples_per_s = 0;  // as the run measured it
  std::vector<StepRecord> records;
};

// The scenario that reproduces a run's own configuration with the model (for checks).
Scenario ScenarioOf(const RunObservation& run);

}  // namespace stepscope::model
