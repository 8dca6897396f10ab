// Fuzz target: the spec reader must return a model or a Status for any input, never crash or
// hang; a model it returns must simulate (or refuse with a Status) at one host and across many.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/simulate.h"
#include "model/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto model = stepscope::model::ModelFromSpec(input, "fuzz.json");
  if (!model.ok()) return 0;
  for (int replicas : {1, 8, 4096}) {
    stepscope::model::Scenario scenario;
    scenario.replicas = replicas;
    auto predicted = stepscope::model::Predict(*model, scenario);
    (void)predicted;
  }
  return 0;
}
