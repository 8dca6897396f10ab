// Why a run of a sweep failed, in words, from its launcher's exit status and log: the rank or
// host is named whenever the log tells it (stepscope's own "rank R (host H): ..." messages,
// OpenMPI's "process rank R ... on node H exited on signal S", PyTorch's launcher's summary of
// the failed ranks).
#pragma once

#include <string>

#include "sweep/child_process.h"

namespace stepscope::sweep {

// `log_text` is the run's log.txt (the launcher's stdout and stderr); `run_timeout_s` the limit
// the run was held to (0: none), named when the run outlived it.
std::string FailureCause(const ChildResult& result, double run_timeout_s,
                         const std::string& log_text);

// When the filesystem holding `dir` is full (under 1 MiB free to this user), a cause that says so
// and names `dir`: a run that cannot write its log fails silently otherwise. "" when there is
// room, or when `dir` cannot be examined.
std::string FullDiskCause(const std::string& dir);

}  // namespace stepscope::sweep
