// What diagnose runs, from a workload: the baseline curve, the ablations, repeats, and the runs
// after the free levers, each as a named run with its train arguments. Launching them is
// sweep/'s job; reading them, analysis/'s.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plan/lever_change.h"
#include "plan/torch_command.h"
#include "plan/train_args.h"
#include "plan/train_mapping.h"
#include "plan/variant.h"
#include "train/options.h"

namespace stepscope::plan {

// The built-in default workload: a communication-bound gpt on an emulated 16-device cluster
// (docs/diagnose.md explains each choice).
TrainArgs DefaultWorkload();

// What every run gets unless the workload says otherwise: 30 steps, 5 of them warm-up (a whole
// epoch per run would be too long), no evaluation.
TrainArgs SweepDefaults();

struct PlanRequest {
  TrainArgs workload;           // the effective train arguments, sweep defaults included
  train::TrainOptions options;  // `workload`, parsed
  std::vector<int> replicas;    // ascending, distinct
  std::set<int> ablate_at;      // the replica counts that get the ablations
  int repeats = 1;              // baseline runs at each replica count (>= 1)
  // diagnose --torch: the user's script, run through the helper, instead of `stepscope train`
  // (the workload then holds only the options torch_command.h lists).
  std::optional<TorchCommand> torch;
};

struct PlannedRun {
  RunId id;
  std::string name;                   // RunName(id), also the run's folder under DIR/runs/
  std::vector<std::string> args;      // its train arguments, or with --torch the script's
  std::vector<std::string> env = {};  // with --torch: NAME=VALUE for the helper
  int micro_batch = 0;                // the run's micro-batch (a profiler trace does not say)
  int64_t steps = 0;                  // the steps it is asked to run; 0: as many as it runs
};

struct RunPlan {
  std::vector<PlannedRun> runs;    // in the order to run them
  std::vector<std::string> notes;  // what was left out of which runs; distinct
};

// The main sweep, in this order:
//   1. the baseline at every replica count, ascending (the curve early);
//   2. the ablations at the ablate_at counts, from the largest down (the verdict reads the
//      largest): no_reduce (not at 1 replica: nothing to reduce), synthetic_input,
//      double_batch;
//   3. repeats 2..K of the baseline, one pass over the replica counts per repeat.
// Injections naming a rank beyond N are left out of the N-replica runs, with a note.
// The reduced-precision check (docs/decide.md): wire_fp32-n2, wire_reduced-n2 and
// wire_fp32_seed2-n2, `steps` steps each, without emulation or injected faults (they measure the
// loss, not the time); the reseeded run trains with --seed one above the workload's.
RunPlan PlanWireCheck(const PlanRequest& request, comm::WireDtype reduced, int64_t steps);

// The noise-scale measurement (docs/decide.md): noise_scale-n2, `steps` steps without emulation
// or injected faults, fp32 on the wire, the gradient norms sampled every step.
RunPlan PlanNoiseScale(const PlanRequest& request, int64_t steps);

RunPlan PlanMainRuns(const PlanRequest& request);

// One more baseline at `replicas` (repeat request.repeats + 1): the run that confirms a straggler
// named from a single run (docs/metrics.md "Persistent across repeats").
RunPlan PlanConfirmingRepeat(const PlanRequest& request, int replicas);

// What a variant changes in the workload (kOneLever, kAllLevers: `levers`).
RunChange ChangeFor(VariantKind kind, const train::TrainOptions& options,
                    const LeverChange& levers);

// A lever as the runs apply it.
struct TrainLever {
  PlannedLever lever;
  // the train options it sets, in words ("--batch 4"); with --torch, the placeholders and
  // variables ("{batch} 4", "STEPSCOPE_BUCKET_MB=1")
  std::vector<std::string> flags;
};

struct LeverRuns {
  RunPlan plan;
  std::vector<TrainLever> applied;    // the levers the runs apply, as recommended
  std::vector<SkippedLever> skipped;  // `levers.skipped`, and the levers train cannot make
};

// The runs after the free levers: every applicable lever together at every replica count, then
// each lever on its own at the largest count when more than one applies. No runs when no lever
// applies.
LeverRuns PlanLeverRuns(const PlanRequest& request, const LeverPlan& levers);

}  // namespace stepscope::plan
