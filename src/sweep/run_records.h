// Reading a finished run back: every rank's step records from DIR/rank-R.steps.jsonl.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/step_record.h"

namespace stepscope::sweep {

// All ranks' records of the run in `run_dir`, rank by rank. Errors name the file; a directory
// without any rank-R.steps.jsonl is an error too.
Result<std::vector<StepRecord>> ReadRunRecords(const std::string& run_dir);

}  // namespace stepscope::sweep
