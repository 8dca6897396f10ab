// StepRecord: what one rank did in one training step. The one vocabulary that `train` writes,
// the trace importers produce, and the analysis consumes. Field meanings: docs/metrics.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"

namespace stepscope {

// Version of the step-record line format. Each line written carries it as "version"; a line
// without one is version 1.
//   1: the fields below except backward_start.
//   2: adds backward_start.
//   3: adds cpu_wait.
//   4: adds tokens.
//   5: adds script_comm.
// Older versions still read (fields they lack keep their defaults); newer ones are refused.
inline constexpr int kStepRecordVersion = 5;

// One gradient reduction (a bucket, or one collective of an imported trace) within a step.
struct CollectiveRecord {
  int index = 0;          // bucket / collective number within the step, in launch order
  Bytes bytes = 0;        // payload bytes per rank at wire precision
  Seconds ready = 0;      // when this rank arrived at the collective (its bucket became ready)
  Seconds start = 0;      // when the reduction started on the communication thread
  Seconds end = 0;        // when the reduction finished on this rank
  double busbw_gbps = 0;  // bus bandwidth of this reduction (nccl-tests convention)
};

struct StepRecord {
  int rank = 0;
  int64_t step = 0;  // global step number, from 0
  int64_t epoch = 0;
  bool warmup = false;       // excluded from steady-state statistics
  int64_t samples = 0;       // examples this rank processed in the step (all micro-batches)
  int micro_batches = 1;     // gradient accumulation factor
  Seconds start = 0;         // step start, on the clock aligned across ranks
  Seconds end = 0;           // end of the optimizer update
  Seconds input_wait = 0;    // blocked waiting for a batch
  Seconds forward = 0;       // forward compute (0 when a source cannot separate it)
  Seconds backward = 0;      // backward compute, excluding time blocked on communication
  Seconds optimizer = 0;     // optimizer update
  Seconds compute = 0;       // forward + backward + optimizer (what a source can measure)
  Seconds exposed_comm = 0;  // main thread blocked on reductions after backward finished
  Seconds comm_busy = 0;     // time with at least one reduction in flight
  // Mean training loss of this rank's samples. nullopt: not recorded (a script's step whose
  // backward the PyTorch helper did not see, or whose loss was not finite).
  std::optional<double> loss;
  double local_grad_sq = -1;   // |g|^2 of this rank's gradient before reduction; <0: unknown
  double global_grad_sq = -1;  // |G|^2 of the reduced gradient; <0: unknown
  // When the backward pass whose gradients are reduced began (with gradient accumulation, the
  // last micro-batch's), on the same clock as start/end: every bucket's `ready` lies after it.
  // nullopt: unknown (a version-1 record, or a trace that shows no backward pass).
  std::optional<Seconds> backward_start;
  // Of `compute`, the time this rank's training thread was runnable but waiting for a CPU core
  // (the kernel's run-queue delay): a rank slowed by sharing its core with other threads, not a
  // slower rank. nullopt: unknown (older records, imported traces, a kernel without schedstat).
  std::optional<Seconds> cpu_wait;
  // Variable-length text: the positions this rank computed in the step (every micro-batch's
  // examples padded to its longest), the work its forward and backward scale with. nullopt:
  // fixed-size batches, older records, imported traces.
  std::optional<int64_t> tokens;
  // Of the overhead, the time this rank was blocked in the job's own collectives outside its
  // loader, model and optimizer (a script's dist.barrier, a loss all-reduced to log it), not the
  // gradient's reduction. nullopt: not watched (stepscope's trainer, which has none; imported
  // traces; a script on one process).
  std::optional<Seconds> script_comm;
  std::vector<CollectiveRecord> collectives;

  Seconds step_time() const { return end - start; }
  // Whatever the step spent outside input wait, compute and exposed communication.
  Seconds overhead() const { return step_time() - input_wait - compute - exposed_comm; }
  // Compute on a core: `compute` less the run-queue delay within it (all of it when unknown).
  Seconds compute_on_cpu() const { return compute - cpu_wait.value_or(0); }
};

// JSON Lines: one StepRecord per line (schema: docs/train-output.md), written at
// kStepRecordVersion.
std::string StepRecordToJson(const StepRecord& record);
// `where` names the source (file:line) for error messages.
Result<StepRecord> StepRecordFromJson(const std::string& line, const std::string& where);
Result<std::vector<StepRecord>> ReadStepRecords(const std::string& path);
Status WriteStepRecords(const std::string& path, const std::vector<StepRecord>& records);

}  // namespace stepscope
