// A synthetic run set for tests and demonstrations of the diagnosis: the baseline run of a
// SyntheticRunSpec (analysis/synthetic_run.h) with its three ablations. Not a measurement.
#pragma once

#include "analysis/synthetic_run.h"
#include "decide/build_diagnosis.h"

namespace stepscope::decide {

// The baseline run of `spec` with its three ablations (AblationSpecsOf): no reduction,
// synthetic input (no input wait) and the doubled micro-batch (twice the compute, input wait
// and samples).
RunSet SynthesizeRunSet(const analysis::SyntheticRunSpec& spec);

}  // namespace stepscope::decide
