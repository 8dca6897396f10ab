#include "sweep/busy_host.h"

#include <fmt/format.h>

namespace stepscope::sweep {

std::optional<std::string> BusyHostWarning(int replicas, const RunSummary& run) {
  if (!run.busiest_host_share || *run.busiest_host_share < kBusyHostShare) return std::nullopt;
  return fmt::format(
      "at {} replica(s) the host's {} cores were {:.0f} % busy over the steady steps (up to {} "
      "ranks on a host, {:.2f} ms of CPU each per step): that point's step is the host's pace, "
      "not the devices'; devices bought come with cores of their own (docs/model.md \"Host CPU\")",
      replicas, run.cores_per_host, 100 * *run.busiest_host_share, run.ranks_per_host,
      1e3 * run.cpu_per_step.value_or(0));
}

}  // namespace stepscope::sweep
