// The reduced-precision lever checked, not assumed: two replicas train the same steps from the
// same seed with an fp32 and a reduced (bf16/fp16) wire, and a third with fp32 and another seed
// measures how far two healthy runs drift apart anyway. The lever is kept when the reduced
// wire's final loss lies within that run-to-run spread of the fp32 run's (docs/decide.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/step_record.h"

namespace stepscope::decide {

struct WireCheck {
  std::string dtype;  // the reduced wire precision checked ("bf16", "fp16")
  int replicas = 0;
  int64_t steps = 0;              // steps of each run
  int64_t tail_steps = 0;         // the last steps whose mean loss is each run's final loss
  double loss_fp32 = 0;           // final loss, fp32 wire
  double loss_reduced = 0;        // final loss, reduced wire, same seed
  double loss_fp32_reseeded = 0;  // final loss, fp32 wire, another seed
  double difference = 0;          // |loss_reduced - loss_fp32|
  double spread = 0;              // |loss_fp32_reseeded - loss_fp32|: the yardstick
  bool kept = false;              // difference <= spread
  // The reduced gradient's relative error against the same gradients reduced in fp32, measured
  // inside the reduced-wire run (train --measure-wire-error): pooled over its sampled steps
  // (|G_wire - G_fp32| / |G_fp32|) and the largest of one step; unset when not measured.
  std::optional<double> relative_error;
  double relative_error_max = 0;
  int64_t error_steps = 0;
  std::string sentence;  // in words, for the verdict's evidence
};

// The gradient's relative error as the reduced-wire run measured it.
struct WireError {
  double relative = 0;
  double relative_max = 0;
  int64_t steps = 0;
};

// Final loss of a run: the mean over ranks and over its last `tail` steps (at least one).
// Errors name what is missing (no steps, a step whose loss no rank or not every rank recorded,
// a non-finite loss).
Result<double> FinalLoss(const std::vector<StepRecord>& records, int64_t tail);

// Compares the three runs. `tail_share` of the steps (at least 5) make each final loss. An
// error where the reseeded run ends at exactly the fp32 run's loss: the seed reached nothing.
Result<WireCheck> CompareWire(const std::vector<StepRecord>& fp32,
                              const std::vector<StepRecord>& reduced,
                              const std::vector<StepRecord>& fp32_reseeded,
                              const std::string& dtype,
                              std::optional<WireError> error = std::nullopt,
                              double tail_share = 0.2);

}  // namespace stepscope::decide
