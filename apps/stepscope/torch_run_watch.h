// How diagnose watches a run of a user's script under the helper (docs/torch.md, "How diagnose
// runs the script"): a rank that never reaches stepscope_torch.wrap is beyond the helper's stall
// watchdog, so the run is ended at --start-timeout; before a stuck run is ended (that, or
// --run-timeout) its processes are asked where they are (sweep/process_stacks.h).
#pragma once

#include <string>

namespace stepscope::app {

// The cause that ends a run of `replicas` ranks `elapsed_s` seconds after it started, when some
// rank has not reached wrap by `start_timeout_s` (no rank-R.steps.jsonl in `run_dir`: the
// helper opens it in wrap); "" otherwise, and always with a `start_timeout_s` of 0.
std::string TorchStartEndReason(const std::string& run_dir, int replicas, double elapsed_s,
                                double start_timeout_s);

// Where the script's processes of a run of `replicas` ranks are, in words, asked through the
// helper's stack dump; "" when none imported the helper and no rank is known to be missing.
std::string TorchWhereProcessesAre(const std::string& run_dir, int replicas);

}  // namespace stepscope::app
