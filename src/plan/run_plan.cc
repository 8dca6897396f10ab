#include "plan/run_plan.h"

#include <algorithm>

namespace stepscope::plan {
namespace {

void AddNotes(std::vector<std::string> more, RunPlan* plan) {
  for (std::string& note : more) {
    if (std::find(plan->notes.begin(), plan->notes.end(), note) == plan->notes.end()) {
      plan->notes.push_back(std::move(note));
    }
  }
}

// A change as the request's runs make it: onto `stepscope train`, or onto the user's script.
struct MappedRun {
  std::vector<std::string> args, env, flags, not_applicable;
};

MappedRun Map(const PlanRequest& request, const RunChange& change, int replicas) {
  if (request.torch) {
    TorchMapping m = MapOntoTorch(*request.torch, request.options, change, replicas);
    return {std::move(m.args), std::move(m.env), std::move(m.flags), std::move(m.not_applicable)};
  }
  TrainMapping m = MapOntoTrain(request.workload, request.options, change);
  return {std::move(m.args), {}, std::move(m.flags), std::move(m.not_applicable)};
}

void AddRun(const PlanRequest& request, const RunId& id, const LeverChange& levers, RunPlan* plan) {
  std::vector<std::string> notes;
  RunChange change = ChangeFor(id.variant.kind, request.options, levers);
  change.dropped = InjectionsBeyond(request.options, id.replicas, &notes);
  change.stragglers = StragglersWithin(request.options, id.replicas, &notes);
  MappedRun mapped = Map(request, change, id.replicas);
  plan->runs.push_back({id, RunName(id), std::move(mapped.args), std::move(mapped.env),
                        change.levers.micro_batch.value_or(request.options.batch),
                        change.steps.value_or(request.options.steps)});
  AddNotes(std::move(notes), plan);
}

// A run that measures numerics (docs/decide.md): 2 replicas, `steps` steps, the kind's change.
void AddNumericsRun(const PlanRequest& request, VariantKind kind, const LeverChange& levers,
                    int64_t steps, RunPlan* plan) {
  const RunId id{Variant::Of(kind), 2};
  RunChange change = ChangeFor(kind, request.options, levers);
  change.steps = steps;
  MappedRun mapped = Map(request, change, id.replicas);
  plan->runs.push_back({id, RunName(id), std::move(mapped.args), std::move(mapped.env),
                        change.levers.micro_batch.value_or(request.options.batch),
                        change.steps.value_or(request.options.steps)});
}

}  // namespace

TrainArgs DefaultWorkload() {
  return {{"--model", "gpt"},
          {"--layers", "2"},
          {"--width", "128"},
          {"--heads", "4"},
          {"--context", "64"},
          {"--batch", "2"},
          {"--steps", "12"},
          {"--warmup-steps", "3"},
          {"--emulate-device-speed", "0.05"},
          {"--emulate-link", "0.012,50"}};
}

TrainArgs SweepDefaults() {
  return {{"--steps", "30"}, {"--warmup-steps", "5"}, {"--no-eval", std::nullopt}};
}

RunChange ChangeFor(VariantKind kind, const train::TrainOptions& options,
                    const LeverChange& levers) {
  RunChange change;
  switch (kind) {
    case VariantKind::kBaseline:
      break;
    case VariantKind::kNoReduce:
      change.no_reduce = true;
      break;
    case VariantKind::kSyntheticInput:
      change.synthetic_input = true;
      break;
    case VariantKind::kDoubleBatch:
      change.levers.micro_batch = 2 * options.batch;
      break;
    case VariantKind::kOneLever:
    case VariantKind::kAllLevers:
      change.levers = levers;
      break;
    case VariantKind::kWireFp32:
    case VariantKind::kWireReduced:
    case VariantKind::kWireReseeded:
      change.unpaced = true;
      change.levers.wire = kind == VariantKind::kWireReduced ? levers.wire : comm::WireDtype::kFp32;
      if (kind == VariantKind::kWireReseeded) change.seed = options.seed + 1;
      change.measure_wire_error = kind == VariantKind::kWireReduced;
      break;
    case VariantKind::kNoiseScale:
      change.unpaced = true;
      change.levers.wire = comm::WireDtype::kFp32;
      change.grad_norm_every = 1;
      break;
  }
  return change;
}

RunPlan PlanWireCheck(const PlanRequest& request, comm::WireDtype reduced, int64_t steps) {
  RunPlan plan;
  LeverChange wire;
  wire.wire = reduced;
  for (VariantKind kind :
       {VariantKind::kWireFp32, VariantKind::kWireReduced, VariantKind::kWireReseeded}) {
    AddNumericsRun(request, kind, wire, steps, &plan);
  }
  return plan;
}

RunPlan PlanNoiseScale(const PlanRequest& request, int64_t steps) {
  RunPlan plan;
  AddNumericsRun(request, VariantKind::kNoiseScale, LeverChange{}, steps, &plan);
  return plan;
}

RunPlan PlanMainRuns(const PlanRequest& request) {
  RunPlan plan;
  const LeverChange none;
  for (int n : request.replicas) {
    AddRun(request, {Variant::Of(VariantKind::kBaseline), n}, none, &plan);
  }
  for (auto it = request.replicas.rbegin(); it != request.replicas.rend(); ++it) {
    const int n = *it;
    if (request.ablate_at.count(n) == 0) continue;
    for (VariantKind kind :
         {VariantKind::kNoReduce, VariantKind::kSyntheticInput, VariantKind::kDoubleBatch}) {
      if (kind == VariantKind::kNoReduce && n == 1) continue;  // nothing to reduce
      if (request.torch && !request.torch->helper && kind != VariantKind::kDoubleBatch) {
        AddNotes({"the no_reduce and synthetic_input ablations need the stepscope_torch helper: "
                  "not run for a script that writes profiler traces"},
                 &plan);
        continue;
      }
      AddRun(request, {Variant::Of(kind), n}, none, &plan);
    }
  }
  for (int k = 2; k <= request.repeats; ++k) {
    for (int n : request.replicas) {
      AddRun(request, {Variant::Of(VariantKind::kBaseline), n, k}, none, &plan);
    }
  }
  return plan;
}

RunPlan PlanConfirmingRepeat(const PlanRequest& request, int replicas) {
  RunPlan plan;
  AddRun(request, {Variant::Of(VariantKind::kBaseline), replicas, request.repeats + 1},
         LeverChange{}, &plan);
  return plan;
}

LeverRuns PlanLeverRuns(const PlanRequest& request, const LeverPlan& levers) {
  LeverRuns out;
  out.skipped = levers.skipped;
  for (const PlannedLever& lever : levers.planned) {
    RunChange change;
    change.levers = lever.change;
    MappedRun mapped = Map(request, change, request.replicas.empty() ? 1 : request.replicas.back());
    if (mapped.not_applicable.empty()) {
      out.applied.push_back({lever, std::move(mapped.flags)});
    } else {
      out.skipped.push_back({lever.lever, (request.torch ? "not applicable to the script: "
                                                         : "not applicable to train yet: ") +
                                              mapped.not_applicable.front()});
    }
  }
  if (out.applied.empty() || request.replicas.empty()) return out;
  LeverChange all;
  for (const TrainLever& applied : out.applied) all.Merge(applied.lever.change);
  for (int n : request.replicas) {
    AddRun(request, {Variant::Of(VariantKind::kAllLevers), n}, all, &out.plan);
  }
  if (out.applied.size() > 1) {
    const int largest = request.replicas.back();
    for (const TrainLever& applied : out.applied) {
      const PlannedLever& lever = applied.lever;
      AddRun(request, {Variant::OneLever(lever.lever), largest}, lever.change, &out.plan);
    }
  }
  return out;
}

}  // namespace stepscope::plan
