#include "model/memory_fit.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace stepscope::model {

void FitMemory(const RunObservation& reference, const RunObservation* paired,
               const RunObservation* doubled, StepModel* m) {
  const Bytes buffers =
      static_cast<Bytes>(reference.parameters) * 4 * (2 + reference.optimizer_state_floats);
  const Bytes shapes = reference.activation_bytes_per_sample;
  const RunObservation* base = paired && paired->peak_memory_bytes ? paired : &reference;
  if (!base->peak_memory_bytes) {
    m->memory_fixed = buffers, m->memory_per_sample = shapes;
    m->memory_how =
        "the model's sizes (no peak memory recorded): weights, gradients and optimizer state, "
        "and the activations per sample from the layer shapes";
    return;
  }
  const int b = base->config.batch;
  const Bytes peak = *base->peak_memory_bytes;
  m->memory_per_sample = shapes;
  m->memory_how = "the peak resident memory of " + base->name + " at micro-batch " +
                  std::to_string(b) + "; per sample from the layer shapes";
  if (doubled && doubled->peak_memory_bytes && base == paired) {
    const double slope =
        static_cast<double>(*doubled->peak_memory_bytes - peak) / static_cast<double>(b);
    if (slope > 0) {
      m->memory_per_sample = static_cast<Bytes>(std::llround(slope));
      m->memory_how = "the peak resident memory of " + base->name + " and " + doubled->name +
                      " (micro-batch " + std::to_string(b) + " and " + std::to_string(2 * b) +
                      ") as fixed + per sample x micro-batch";
    } else {
      m->memory_how += " (the peak did not grow from " + base->name + " to " + doubled->name + ")";
    }
  }
  m->memory_fixed = std::max<Bytes>(buffers, peak - m->memory_per_sample * b);
}

}  // namespace stepscope::model
