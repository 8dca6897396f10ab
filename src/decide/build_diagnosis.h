// From step records to a Diagnosis: decomposition, skew, ablations, curve, attribution, noise
// scale and verdict, in that order. Shared by `stepscope diagnose` (a sweep over replica counts)
// and `stepscope analyze` (one replica count from imported traces).
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "analysis/ablation.h"
#include "analysis/skew.h"
#include "core/status.h"
#include "core/step_record.h"
#include "decide/diagnosis.h"
#include "decide/verdict.h"

namespace stepscope::decide {

// All runs at one replica count: the baseline and any ablations.
struct RunSet {
  int replicas = 0;  // ranks launched; 0: take the count from the records. A mismatch warns.
  std::vector<StepRecord> baseline;
  std::optional<std::vector<StepRecord>> no_reduce;
  std::optional<std::vector<StepRecord>> synthetic_input;
  std::optional<std::vector<StepRecord>> double_batch;
  // Repeats 2..K of the baseline (diagnose --repeats K): their throughputs widen the point's
  // interval to the run-to-run spread, which a bootstrap over one run's steps cannot see.
  std::vector<std::vector<StepRecord>> repeats;
  // Emulated runs: how well the emulation honoured the baseline run (its run.json); nullopt when
  // not emulated or unknown.
  std::optional<EmulationHonesty> honesty;
  // The same for the ablation runs of the set (they can confirm or overturn the binding), by
  // the ablation's name (no_reduce, synthetic_input, double_batch).
  std::map<std::string, EmulationHonesty> ablation_honesty;
  // The job's own blocking collectives in its baseline run, by name, with their calls per step
  // (a PyTorch script's, from its run.json: script_collectives.h); empty where none were seen.
  std::vector<ScriptCollectiveCalls> script_collectives;
};

struct DiagnoseOptions {
  analysis::SkewOptions skew;
  analysis::AblationOptions ablation;
  VerdictOptions verdict;
  CostInputs cost;
  SourceInfo source;
  Emulation emulation;
  // The noise scale measured by diagnose's dedicated run (NoiseScaleOfRun); when known it is
  // the diagnosis's, and the one pooled from the sweep's short runs is not used.
  std::optional<NoiseScale> measured_noise;
};

// One DiagnosisPoint per run set, sorted by replica count (taken from the records). Without a
// 1-replica run, X(1) is estimated from the smallest run (EstimateSingleReplica) and a warning
// says so. `reference` receives the 1-replica decomposition used (measured or estimated).
Result<std::vector<DiagnosisPoint>> BuildPoints(const std::vector<RunSet>& runs,
                                                const DiagnoseOptions& options,
                                                analysis::Decomposition* reference,
                                                std::vector<std::string>* warnings);

// The whole diagnosis. Errors name the replica count and run (baseline or ablation) that failed.
Result<Diagnosis> BuildDiagnosis(const std::vector<RunSet>& runs, const DiagnoseOptions& options);

// Adds the curve re-measured after the levers were applied (before/after).
Status AddAfterLevers(const std::vector<RunSet>& runs, const std::vector<AppliedLever>& levers,
                      const DiagnoseOptions& options, Diagnosis* diagnosis);

}  // namespace stepscope::decide
