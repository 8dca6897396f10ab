// Memory per replica, fitted from the peak resident memory train recorded (docs/model.md
// "memory"): what a what-if or lever at another micro-batch needs, against a device's memory.
#pragma once

#include "model/run_observation.h"
#include "model/step_model.h"

namespace stepscope::model {

// Memory per replica as fixed + per_sample x micro-batch. From the peak resident memory train
// recorded: the slope between the baseline and the double-batch run at the same N, and the
// rest of the baseline's peak as the fixed part; without the double-batch run's peak, the
// activations per sample from the layer shapes. Without any recorded peak: the model's buffers
// (weights, gradients, optimizer state; 4 bytes each per parameter) and those activations.
// `paired` and `doubled`: the baseline and the run at twice its micro-batch at the same N, when
// both were measured (else null). Sets m->memory_fixed, memory_per_sample and memory_how.
void FitMemory(const RunObservation& reference, const RunObservation* paired,
               const RunObservation* doubled, StepModel* m);

}  // namespace stepscope::model
