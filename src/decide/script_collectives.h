// The job's own collectives outside the gradient's reduction (a PyTorch script's dist.barrier,
// a loss all-reduced to log it; StepRecord::script_comm): what the ranks' waits there say, for
// the verdict's evidence.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/decomposition.h"

namespace stepscope::decide {

// One of the job's own blocking collectives (a PyTorch script's `dist.barrier`) and its calls
// per step.
struct ScriptCollectiveCalls {
  std::string name;
  double per_step = 0;
};

// One sentence when some rank is blocked in the job's own collectives for at least `min_share`
// of the job's step, naming that rank, the collectives (`calls`, where known) and, where one
// rank spends that much more than it outside its loader, model and optimizer, the rank it waits
// for there; nullopt otherwise (nothing recorded, or too little to matter).
std::optional<std::string> ScriptCollectivesEvidence(
    const analysis::Decomposition& d, const std::vector<ScriptCollectiveCalls>& calls,
    double min_share);

}  // namespace stepscope::decide
