#include "train/latency_probe.h"

#include <algorithm>
#include <string>
#include <utility>

namespace stepscope::train {

Result<LatencyProbe> ProbeLatency(comm::Allreducer* allreducer, const ReducerOptions& options,
                                  const EmulationOptions& emulation, int world,
                                  Reducer::ClockFn clock, const ProbeHooks& hooks, int repeats) {
  std::vector<float> payload(std::max(kLatencyProbeFloats, static_cast<size_t>(world)), 0.0f);
  // The run's reduction path, one bucket launched once "backward" is done, no norms measured.
  ReducerOptions o = options;
  o.overlap = false;
  o.bucket_mb = 2.0 * static_cast<double>(payload.size() * sizeof(float)) / kMiB;
  o.measure_wire_error = false;
  Reducer reducer(payload, o, emulation, allreducer, world, std::move(clock));
  LatencyProbe out;
  out.bytes = comm::WireBytes(o.dtype, payload.size());
  for (int i = 0; i < kLatencyProbeWarmup + repeats; ++i) {
    const std::string which = "latency probe " + std::to_string(i + 1);
    STEPSCOPE_RETURN_IF_ERROR(hooks.together().WithContext(which));
    reducer.BeginStep(/*measure_norms=*/false, /*counted=*/i >= kLatencyProbeWarmup);
    reducer.OnGradReady(0, payload.size());
    Result<Seconds> done = reducer.FinishStep();
    if (!done.ok()) return done.status().WithContext(which);
    const ReduceStats stats = reducer.TakeStats();
    if (stats.collectives.size() != 1) {
      return Status::Error(which + ": " + std::to_string(stats.collectives.size()) +
                           " reductions where one was launched");
    }
    if (i >= kLatencyProbeWarmup) {
      out.seconds.push_back(std::max(0.0, stats.collectives[0].end - stats.collectives[0].start));
    }
    if (emulation.link_gbps > 0) {  // paced from the quickest any rank saw, as the steps are
      std::vector<Seconds> quickest = reducer.QuickestReductions();
      STEPSCOPE_RETURN_IF_ERROR(hooks.least_over_ranks(&quickest).WithContext(which));
      reducer.SetQuickestReductions(std::move(quickest));
    }
  }
  STEPSCOPE_RETURN_IF_ERROR(
      hooks.least_over_ranks(&out.seconds).WithContext("latency probe's durations"));
  return out;
}

}  // namespace stepscope::train
