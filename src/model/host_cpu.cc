#include "model/host_cpu.h"

#include <algorithm>
#include <string>

namespace stepscope::model {

std::optional<HostCpu> FitHostCpu(const std::vector<HostCpuPoint>& baselines,
                                  const std::optional<HostCpuPoint>& paired,
                                  const std::optional<HostCpuPoint>& doubled) {
  if (baselines.empty()) return std::nullopt;
  const int cores = baselines.front().cores_per_host;
  int most = 0;
  for (const HostCpuPoint& p : baselines) {
    if (cores <= 0 || p.cores_per_host != cores || p.ranks_per_host <= 0 ||
        !(p.cpu_per_step >= 0)) {
      return std::nullopt;
    }
    most = std::max(most, p.ranks_per_host);
  }
  const HostCpuPoint& largest = *std::max_element(
      baselines.begin(), baselines.end(),
      [](const HostCpuPoint& a, const HostCpuPoint& b) { return a.replicas < b.replicas; });
  const bool several = largest.replicas >= 2;
  Estimate d = Estimate::Exact(largest.cpu_per_step);
  for (const HostCpuPoint& p : baselines) {
    if (several && p.replicas < 2) continue;
    d.low = std::min(d.low, p.cpu_per_step), d.high = std::max(d.high, p.cpu_per_step);
  }
  HostCpu h;
  h.cores_per_host = cores;
  h.max_ranks_per_host = most;
  h.reference_samples = largest.samples_per_rank_step;
  h.per_step = {
      "host_cpu_per_step", d, "CPU s per rank per step",
      "process CPU time per steady step (every thread) outside the gradient reductions, mean "
      "over ranks, of " +
          largest.name + "; band: the least and most of the baselines" +
          (several ? " at two or more replicas" : "")};
  h.reduction_per_byte = FitReductionCpu(baselines);
  if (paired && doubled && doubled->samples_per_rank_step > paired->samples_per_rank_step) {
    const double slope = (doubled->cpu_per_step - paired->cpu_per_step) /
                         (doubled->samples_per_rank_step - paired->samples_per_rank_step);
    h.per_sample = {"host_cpu_per_sample", Estimate::Exact(std::max(0.0, slope)),
                    "CPU s per rank per sample",
                    "the growth from " + paired->name + " to " + doubled->name +
                        " (twice the micro-batch), per sample"};
  } else {
    h.per_sample = {"host_cpu_per_sample", Estimate::Exact(0), "CPU s per rank per sample",
                    "assumed 0: no run at twice the micro-batch recorded its CPU time (the "
                    "CPU per step is held at the reference micro-batch's)",
                    true};
  }
  return h;
}

std::optional<Constant> FitReductionCpu(const std::vector<HostCpuPoint>& baselines) {
  const HostCpuPoint* largest = nullptr;
  Estimate a = Estimate::Exact(0);
  for (const HostCpuPoint& p : baselines) {
    if (!p.host_reduces || !p.reduction_cpu_least_rank || p.replicas < 2 ||
        p.wire_bytes_per_step <= 0 || p.ranks_per_host > p.cores_per_host) {
      continue;
    }
    const double per_byte =
        *p.reduction_cpu_least_rank /
        (BandwidthShare(p.replicas) * static_cast<double>(p.wire_bytes_per_step));
    if (!largest) {
      a = Estimate::Exact(per_byte);
    } else {
      a.low = std::min(a.low, per_byte), a.high = std::max(a.high, per_byte);
    }
    if (!largest || p.replicas > largest->replicas) {
      largest = &p;
      a.value = per_byte;
    }
  }
  if (!largest) return std::nullopt;
  return Constant{"host_reduction_cpu_per_byte", a, "CPU s per rank per wire byte",
                  "the reductions' CPU per step of the rank that waited least in " + largest->name +
                      " (a core per rank), over its wire bytes per step and the ring's bandwidth "
                      "share 2(N-1)/N; band: the least and most of the baselines with a core per "
                      "rank at two or more replicas"};
}

Seconds ReductionCpuFloor(const HostCpu& h, const Scenario& s, Bytes wire_bytes, Side side) {
  if (!h.reduction_per_byte) return 0;
  const int ranks = ScenarioRanksPerHost(h.max_ranks_per_host, s);
  if (ranks <= h.cores_per_host) return 0;
  return ranks * Pick(h.reduction_per_byte->estimate, side) * BandwidthShare(s.replicas) *
         static_cast<double>(wire_bytes) / h.cores_per_host;
}

int ScenarioRanksPerHost(int max_ranks_per_host, const Scenario& s) {
  if (s.ranks_per_host) return *s.ranks_per_host;
  if (s.devices_per_host) return std::min(s.replicas, *s.devices_per_host);
  return std::min(s.replicas, max_ranks_per_host);
}

Seconds HostCpuFloor(const HostCpu& h, const Scenario& s, int samples_per_rank_step, Side side) {
  const int ranks = ScenarioRanksPerHost(h.max_ranks_per_host, s);
  const double extra = samples_per_rank_step - h.reference_samples;
  const Seconds d =
      std::max(0.0, Pick(h.per_step.estimate, side) + h.per_sample.estimate.value * extra);
  return ranks * d / h.cores_per_host;
}

}  // namespace stepscope::model
