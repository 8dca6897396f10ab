// A step-time model from a user's description instead of measurements (`stepscope predict
// --spec FILE.json`): capacity planning before anything is bought. The format, field by field,
// with an example: docs/model.md, "A spec".
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "model/step_model.h"

namespace stepscope::model {

// The model a spec describes: compute proportional to the micro-batch, split into forward and
// backward by the backward share; the all-reduce on the given links across hosts; memory from
// the parameters and activations. `file` names the spec in errors, which also name the field and
// say what a correct value looks like (an unknown field, a missing or negative one, a wrong
// type, text that is not JSON).
Result<StepModel> ModelFromSpec(std::string_view text, const std::string& file);

}  // namespace stepscope::model
