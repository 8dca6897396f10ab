// A run whose host's cores were nearly all busy over its steady steps measured the host's pace,
// not its devices': said as a warning beside the diagnosis (docs/model.md "Host CPU").
#pragma once

#include <optional>
#include <string>

#include "sweep/run_records.h"

namespace stepscope::sweep {

// From this share of its busiest host's cores (run.json cpu.busiest_host_share) a run is taken
// as paced by its host.
inline constexpr double kBusyHostShare = 0.9;

// The warning for a run at `replicas` whose host was that busy; nullopt otherwise (or when the
// run did not record its CPU time).
std::optional<std::string> BusyHostWarning(int replicas, const RunSummary& run);

}  // namespace stepscope::sweep
