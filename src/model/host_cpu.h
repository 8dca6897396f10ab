// The host's CPU as a ceiling: a step cannot end before its host's cores have done its ranks'
// CPU work. R ranks on a host of C cores, each taking d CPU-seconds per step (the whole process:
// the training thread, loader workers, the kernel's share; outside the gradient reductions,
// whose spinning while they wait for other ranks yields to work and cannot be told from their
// arithmetic without a clock read per barrier), step no faster than R d / C: a lower bound. The
// crowding lines (host_crowding.h) extrapolate how sharing stretches compute and overhead; past the
// point where the ranks' work fills the cores, the step is the cores' time, which a line fitted
// below that point does not reach (docs/model.md "Host CPU").
#pragma once

#include <optional>
#include <vector>

#include "model/collective_fit.h"
#include "model/step_model.h"

namespace stepscope::model {

// One run as the fit sees it.
struct HostCpuPoint {
  std::string name;
  int replicas = 0;
  int ranks_per_host = 0;  // the most ranks any host ran
  int cores_per_host = 0;
  Seconds cpu_per_step = 0;       // process CPU s per step outside reductions, mean over ranks
  int samples_per_rank_step = 0;  // micro-batch times accumulation
  // The reductions' CPU s per step on the rank that waited least for the others (unset: not
  // recorded), the wire bytes a rank reduces per step, and whether the all-reduce is the host's
  // own arithmetic (shm), not a wire's.
  std::optional<Seconds> reduction_cpu_least_rank;
  Bytes wire_bytes_per_step = 0;
  bool host_reduces = false;
};

// `baselines` in replica order; `paired` and `doubled`, when given, a baseline and the run at
// twice its micro-batch (for the growth per sample). nullopt unless every baseline recorded its
// CPU time and they share one known core count. The value: the largest baseline's d (the
// nearest to the replica counts a prediction extrapolates to); its band: the least and most of
// the baselines at two or more replicas (one replica has no collective), or of all when only one
// ran.
std::optional<HostCpu> FitHostCpu(const std::vector<HostCpuPoint>& baselines,
                                  const std::optional<HostCpuPoint>& paired,
                                  const std::optional<HostCpuPoint>& doubled);

// The ranks a scenario runs on one host: as a measured run did (a check), else its devices per
// host when given, else as the fitted runs filled their hosts, up to the most they put on one:
// devices beyond what was measured come on hosts like the largest run's, with cores of their own.
int ScenarioRanksPerHost(int max_ranks_per_host, const Scenario& s);

// The step's floor R d / C for a scenario at `samples_per_rank_step` samples per rank per step.
Seconds HostCpuFloor(const HostCpu& h, const Scenario& s, int samples_per_rank_step, Side side);

// The reductions' own CPU per wire byte (HostCpu::reduction_per_byte) from the baselines that
// reduced on the host with a core per rank at two or more replicas: the largest such baseline's
// least-waiting rank's CPU / (its bandwidth share x its wire bytes), the band the least and
// most of them. nullopt without one.
std::optional<Constant> FitReductionCpu(const std::vector<HostCpuPoint>& baselines);

// The least time one all-reduce of `wire_bytes` at `replicas` takes when the scenario's ranks
// outnumber their host's cores and the host does the reduction's arithmetic: R a share(N) bytes
// / C. 0 when the model has no such constant or every rank has a core.
Seconds ReductionCpuFloor(const HostCpu& h, const Scenario& s, Bytes wire_bytes, Side side);

}  // namespace stepscope::model
