// The gradient reductions' cost and how fast they progress beside backward, fitted from the
// collectives train (or the PyTorch helper, or a trace) recorded: per wire precision an
// alpha-beta cost (collective_fit.h) on each reduction's duration from the last rank's start,
// and the overlap rate (docs/model.md, "all-reduce cost" and "overlap rate").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/collective_fit.h"
#include "model/run_observation.h"
#include "model/step_model.h"

namespace stepscope::model {

// One sample per (run, bucket): the median over steps of the last-starting rank's duration, and
// of the time it ran beside that rank's reducing backward; and one of the run's latency probe
// where it has one (the median of its durations, `probe` set).
std::vector<CollectiveSample> CollectiveSamples(const RunObservation& run);

// Every run's CollectiveSamples, read once for the fits below and the host CPU fit's cap.
using SamplesByRun = std::map<const RunObservation*, std::vector<CollectiveSample>>;
SamplesByRun CollectiveSamplesOf(const std::vector<RunObservation>& runs);

// All-reduce cost per wire precision into m->collectives, from every run given that reduced at
// N >= 2 (its reductions' cost does not depend on what else the run changed), each reduction
// that overlapped backward corrected for the overlap rate (CollectiveSamples). Notes what the
// samples cannot identify into `notes`.
Status FitCollectives(const std::vector<RunObservation>& runs, const SamplesByRun& samples,
                      double overlap_rate, StepModel* m, std::vector<std::string>* notes);

// How fast reductions progress beside backward (a share of full speed) into m->overlap_rate,
// from the runs that reduced several buckets a step with overlap at N >= 2. Left out: synthetic
// input, and a run whose loader set the step (it waited for input): its step is one loader
// period whatever the reduction overlapped, and fitting on it would pick an arbitrary rate that
// then inflates every step the loader no longer sets. From the reductions' durations where the
// reductions that did not overlap identify their cost alone (m->collectives is then fitted again,
// each overlapped reduction less what the rate slowed it by); else the rate that best reproduces
// those runs' exposed communication (a grid over [0, 1]; the band: every rate within 10 % of the
// best fit's squared error, and at least one grid step). Their exposed communication, not their
// throughput: a run's compute moves with the host from run to run, and fitted on the throughput
// the rate would absorb that movement. Without such a run the rate stays as it was (1, assumed).
// The runs used that are not baselines join m->cost_runs.
Status FitOverlapRate(const std::vector<RunObservation>& runs, const SamplesByRun& samples,
                      StepModel* m);

}  // namespace stepscope::model
