// Diagnosis: everything `diagnose` and `analyze` conclude about a job, and its JSON form
// (diagnosis.json; schema in docs/diagnosis.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/ablation.h"
#include "analysis/attribution.h"
#include "analysis/decomposition.h"
#include "analysis/scaling.h"
#include "analysis/skew.h"
#include "core/status.h"
#include "decide/noise_scale.h"
#include "decide/verdict.h"

namespace stepscope::decide {

// Version 2: enums as fixed words (core/vocabulary.h), the verdict's decision, estimates
// {value, low, high}, applied levers as objects. Version 3: verdict.decision an object (the
// priced decision), verdict.options[] and verdict.time_to_quality. Versions 1 and 2 still read
// (docs/diagnosis.md).
inline constexpr int kDiagnosisSchemaVersion = 3;

// One replica count: its place on the curve and everything measured at it.
struct DiagnosisPoint {
  analysis::ScalingPoint scaling;
  analysis::Decomposition decomposition;
  analysis::SkewReport skew;
  analysis::AblationReport ablations;
  // The decompositions of the point's repeats (diagnose --repeats), whose losses the verdict
  // pools with the first run's; not written to diagnosis.json.
  std::vector<analysis::Decomposition> repeats;
};

struct Emulation {
  bool emulated = false;
  std::map<std::string, std::string> parameters;  // e.g. device_speed -> "0.25"
};

struct SourceInfo {
  std::string origin;    // "diagnose" or "analyze"
  std::string workload;  // what ran, in words (model, micro-batch, dataset)
  std::string tool_version;
  // What every throughput in the diagnosis counts: steps when the records give no batch size.
  analysis::ThroughputUnit throughput_unit = analysis::ThroughputUnit::kSamples;
};

// The curve re-measured after the free levers were applied.
struct AppliedLever {
  Lever lever = Lever::kBiggerMicroBatch;
  std::string change;  // what was changed, in words ("--batch 4 (was 2)")
  // This lever's own run, when several levers were applied (the single-lever run at the
  // largest replica count); 0 replicas when it was not measured on its own.
  int alone_replicas = 0;
  double alone_samples_per_s = 0;
};

// "overlap_bucketing (--bucket-mb 1), ...": the applied levers in words, for headings.
std::string AppliedLeversText(const std::vector<AppliedLever>& levers);

struct AfterLevers {
  std::vector<AppliedLever> levers_applied;
  std::vector<DiagnosisPoint> points;  // their efficiency is against the levered X(1)
  // The verdict on the re-measured curve: the one that counts once the levers are pulled (its
  // binding from what the levered runs lost, its decision priced from the levered
  // configuration). Absent in files written before it.
  std::optional<Verdict> verdict;
  // One device's throughput before the levers (the original curve's X(1)), so that each
  // re-measured point's efficiency can also be read against it; 0 when unknown.
  double original_x1 = 0;
  // X(N) / (N * original_x1) at `point`; 0 when original_x1 is unknown.
  double EfficiencyAgainstOriginal(const DiagnosisPoint& point) const;
};

// A run of the sweep that did not finish: which, why (in words, naming the rank or host when the
// log tells: "rank 1 on host vm died of signal 9 (Killed)") and where its launcher's log is.
struct FailedRun {
  std::string run;  // the run's name, e.g. "baseline-n4"
  int replicas = 0;
  std::string cause;
  int exit_code = 0;  // the launcher's exit status (128 + signal when it died of one)
  std::string log;    // path of the run's log.txt
};

struct Diagnosis {
  int schema_version = kDiagnosisSchemaVersion;  // as read; ToJson always writes the current
  SourceInfo source;
  Emulation emulation;
  std::vector<DiagnosisPoint> points;                // sorted by replica count
  std::optional<analysis::Attribution> attribution;  // at the largest replica count
  NoiseScale noise_scale;
  Verdict verdict;
  std::optional<AfterLevers> after;
  std::vector<FailedRun> failed_runs;  // runs of the sweep that did not finish
  std::vector<std::string> warnings;
};

nlohmann::json ToJson(const Diagnosis& d);
// Errors name the missing or mistyped field, e.g. "points[1].components.compute".
Result<Diagnosis> DiagnosisFromJson(const nlohmann::json& j);
std::string DiagnosisToString(const Diagnosis& d);  // pretty-printed JSON
Result<Diagnosis> DiagnosisFromString(const std::string& text);

}  // namespace stepscope::decide
