// A planned run's changes mapped onto `stepscope train`: typed (TrainOptions) and as the argument
// list the run is launched with. This file is the one place that knows which train flag carries
// which change.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/lever_change.h"
#include "plan/train_args.h"
#include "train/options.h"

namespace stepscope::plan {

// A fault injection that names one rank (train/options.h InjectionOptions). Stragglers, which
// may name several, are kept or left out rank by rank (StragglersWithin).
enum class RankedInjection { kNoise, kCrash, kHang };

// Everything a run changes in the workload; the defaults change nothing.
struct RunChange {
  LeverChange levers;
  bool no_reduce = false;        // ablation: replicas train alone (and fp32, nothing on the wire)
  bool synthetic_input = false;  // ablation: one in-memory batch instead of the input pipeline
  std::vector<RankedInjection> dropped;  // injections left out of the run
  // The injected stragglers the run keeps (those its replica count has); unset: the workload's.
  std::optional<std::vector<train::StragglerInjection>> stragglers;
  std::optional<uint64_t> seed;        // another --seed
  std::optional<int64_t> steps;        // another --steps
  std::optional<int> grad_norm_every;  // another --grad-norm-every
  bool measure_wire_error = false;     // --measure-wire-error
  // Numerics, not timing: no emulated device or link and no injected fault.
  bool unpaced = false;
};

struct TrainMapping {
  train::TrainOptions options;     // the workload's options with the change applied
  std::vector<std::string> args;   // the run's train arguments (flattened)
  std::vector<std::string> flags;  // the options the change set, in words ("--batch 4")
  // Parts of the change train cannot make (yet), in words; they are left out of options/args.
  std::vector<std::string> not_applicable;
};

// Applies `change` to the workload: each changed option replaces the workload's occurrences of
// that flag. `options` must be `workload` parsed.
TrainMapping MapOntoTrain(const TrainArgs& workload, const train::TrainOptions& options,
                          const RunChange& change);

// The values the levers start from in a train workload (the gradient size from its model).
LeverBasis TrainBasis(const train::TrainOptions& options);

// The injections in `options` that name a rank a job of `replicas` does not have, with a note
// for each ("--inject-crash names rank 1: left out of the 1-replica runs").
std::vector<RankedInjection> InjectionsBeyond(const train::TrainOptions& options, int replicas,
                                              std::vector<std::string>* notes);

// The injected stragglers a job of `replicas` has, with a note for each one it lacks
// ("--inject-straggler names rank 3: left out of the 2-replica runs").
std::vector<train::StragglerInjection> StragglersWithin(const train::TrainOptions& options,
                                                        int replicas,
                                                        std::vector<std::string>* notes);

// "1:1.6,3:1.4": stragglers as --inject-straggler reads them.
std::string StragglersText(const std::vector<train::StragglerInjection>& stragglers);

}  // namespace stepscope::plan
