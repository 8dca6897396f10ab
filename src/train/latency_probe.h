// The gradient reduction's latency, probed after a run's steps: a few all-reduces of a small
// payload through the run's own reduction path (its algorithm, wire precision and emulated link),
// each begun by every rank together. A run's buckets are mostly of one size, and at one or two
// replica counts their durations cannot tell the reduction's latency from its bandwidth (nor from
// a fixed cost per reduction): the probe gives the model a point at almost no bytes
// (model/collective_fit.h; docs/model.md "The latency probe").
#pragma once

#include <functional>
#include <vector>

#include "comm/allreduce.h"
#include "core/status.h"
#include "core/units.h"
#include "train/options.h"
#include "train/reducer.h"

namespace stepscope::train {

// What the probe measured: the payload per rank at wire precision and each probe's duration as
// the last rank to begin it saw it (the least over the ranks: an all-reduce ends for every rank
// once the last has begun it, so the shortest duration is that rank's).
struct LatencyProbe {
  Bytes bytes = 0;
  std::vector<Seconds> seconds;
};

// How the ranks act together, given by the caller (MPI in train, in-process in tests).
struct ProbeHooks {
  std::function<Status()> together;  // returns on every rank once every rank has called it
  // Replaces each element by its least over the ranks.
  std::function<Status(std::vector<double>*)> least_over_ranks;
};

// Probes before the `repeats` that are kept: the emulated link paces from the quickest reduction
// seen, which the first probe has not yet seen.
constexpr int kLatencyProbeWarmup = 2;
// The payload: this many floats, or one per rank where there are more ranks.
constexpr size_t kLatencyProbeFloats = 256;

// Runs the probe through `allreducer` at `world` ranks (world >= 2, options.reduce). Every rank
// of the job must call it. Errors: a failed reduction or hook, named as the probe's.
Result<LatencyProbe> ProbeLatency(comm::Allreducer* allreducer, const ReducerOptions& options,
                                  const EmulationOptions& emulation, int world,
                                  Reducer::ClockFn clock, const ProbeHooks& hooks, int repeats);

}  // namespace stepscope::train
