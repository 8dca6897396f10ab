// The verdict: binding constraint at the largest replica count, the free levers with their
// expected gains, whether to buy more devices, costs, and a plain-words explanation.
// Rules: docs/metrics.md ("Verdict").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/ablation.h"
#include "analysis/decomposition.h"
#include "analysis/scaling.h"
#include "analysis/skew.h"
#include "core/vocabulary.h"
#include "decide/binding_losses.h"
#include "decide/choose.h"
#include "decide/noise_scale.h"
#include "decide/priced_options.h"
#include "decide/script_collectives.h"
#include "decide/wire_check.h"

namespace stepscope::decide {

struct CostInputs {
  std::optional<double> device_cost_per_hour;  // price of one device for one hour
  std::optional<double> deadline_hours;        // wall-clock budget to the target
  std::optional<double> samples_to_target;     // samples the job needs (with a deadline)
};

struct VerdictOptions {
  double none_efficiency = 0.9;        // binding `none` at or above this efficiency...
  double waste_share = 0.15;           // ...unless a non-compute component is this share of step
  double near_linear_marginal = 0.8;   // buy more devices only at or above this marginal value
  double levers_recover_a_lot = 0.15;  // "not yet" when levers gain this fraction of X or more
  double min_lever_gain = 0.02;        // levers below this fraction of X are left out
  double override_ratio = 1.5;         // an ablation's drop this many times the other's wins
  // The verdict names no cause when more than this share of the paced segments of the runs
  // that decide it were not honoured by the emulation (docs/metrics.md, "Emulation honesty").
  double max_unhonoured_share = 0.05;
  // The communication hook of the script's own that reduces the gradients (a --torch job's, by
  // name; empty: the reducer's own): its wire precision is the script's choice, so the verdict
  // does not recommend the reduced-precision lever and says why in its evidence.
  std::string script_comm_hook;
};

// One recommended free lever with its expected effect.
struct LeverAdvice {
  Lever lever = Lever::kBiggerMicroBatch;
  std::string action;  // what to change, in words
  double expected_samples_per_s = 0;
  double expected_gain_samples_per_s = 0;
  double expected_efficiency = 0;  // 0 when the curve has no reference
  std::string basis;               // which components the estimate comes from
  // With a priced decision: the lever's gain in goodput (samples/s x statistical efficiency) on
  // the step-time model, against staying as is; a bigger batch can gain samples/s and lose
  // goodput. Unset without one.
  std::optional<double> expected_gain_goodput;
};

// A lever the verdict no longer recommends because the step-time model and its own run (when
// one ran) agree that it does not pay: its gain and why it was dropped (docs/decide.md,
// "Levers that do not pay").
struct DroppedLever {
  Lever lever = Lever::kBiggerMicroBatch;
  std::string action;
  double expected_gain_samples_per_s = 0;
  std::string reason;
};

// A binding candidate the noise (or the emulation) could not rule out, with its loss.
struct BindingCandidate {
  Binding binding = Binding::kCompute;
  Estimate seconds;  // per step, with its interval (BindingLoss::estimate)
  Estimate devices;  // N * seconds / T(N)
};

// How well the emulation honoured the runs that decide the binding (run.json `emulation`).
struct EmulationHonesty {
  int64_t paced_segments = 0;
  int64_t unhonoured_segments = 0;
  int64_t unhonoured_links = 0;  // link reductions the pacer could not slow down enough
  int64_t link_reductions = 0;   // paced link reductions (0 when unknown or no link emulated)
  // unhonoured_segments / paced_segments and unhonoured_links / link_reductions (0 when
  // nothing was paced).
  double SegmentShare() const {
    return paced_segments > 0 ? static_cast<double>(unhonoured_segments) / paced_segments : 0;
  }
  double LinkShare() const {
    return link_reductions > 0 ? static_cast<double>(unhonoured_links) / link_reductions : 0;
  }
};

struct CostPoint {
  int replicas = 0;
  double cost_per_million_samples = 0;
  // Price of a million samples of the throughput the devices added since the previous point
  // delivered; 0 when not defined (first point, or no throughput gained).
  double marginal_cost_per_million_samples = 0;
};

// What turned throughput into progress toward the target when the options were priced.
struct TimeToQuality {
  StatisticalScale scale;
  std::optional<double> samples_to_target;  // at samples_to_target_batch
  double samples_to_target_batch = 0;       // 0: at scale.reference_batch
  std::optional<double> deadline_hours, budget;
  double fixed_hours = 0;  // per job, outside the steps (start-up, evaluation)
  std::string fixed_how;
  std::string cost_unit;  // "cost" or "device-hours"
};

struct Verdict {
  // What holds scaling back: the candidate that lost the most devices between one replica and
  // the largest count (docs/metrics.md, "Binding constraint"), confirmed or overturned by the
  // ablations.
  Binding binding = Binding::kInconclusive;
  // What holds one device back already (input wait or overhead at one replica): a throughput
  // lever, not a scaling loss. kNone when neither is large.
  Binding throughput_constraint = Binding::kNone;
  std::vector<BindingLoss> losses;  // the devices each candidate lost at the largest count
  // With binding kInconclusive: the candidates that could not be told apart, largest first
  // (empty otherwise, and when the emulation was not honoured).
  std::vector<BindingCandidate> candidates;
  std::vector<int> straggler_ranks;
  std::vector<std::string> evidence;
  std::vector<LeverAdvice> levers;           // in order of cost, cheapest first
  std::vector<DroppedLever> levers_dropped;  // recommended, then ruled out by the model
  Decision decision = Decision::kStay;
  std::string decision_reason;  // why, in words
  Currency currency = Currency::kCost;
  std::vector<CostPoint> costs;  // empty without a device price
  std::string quality_note;      // samples/s is not time to target quality
  std::string situation;         // the explanation up to its decision sentence
  std::string explanation;       // plain words
  // The priced decision (decide/choose.h), set when the step-time model priced every option;
  // `decision`, `decision_reason` and `currency` then hold its action, reason and currency.
  // Without it the decision comes from the curve's shape alone (DecideVerdict).
  std::optional<PricedDecision> priced;
  std::vector<PricedOption> options;             // every option priced (with `priced`)
  std::optional<TimeToQuality> time_to_quality;  // what the pricing assumed (with `priced`)
  // The reduced-precision lever's numerical check, when that lever was recommended and checked;
  // a lever that failed it is no longer among `levers`.
  std::optional<WireCheck> wire_check;
};

struct VerdictInputs {
  std::vector<analysis::ScalingPoint> points;  // the curve, sorted by replicas
  analysis::Decomposition largest;             // decomposition at the largest replica count
  // The repeats of the largest count's run (diagnose --repeats): the losses are then the mean
  // over the runs, with an interval for the mean (binding_losses.h, PoolLosses).
  std::vector<analysis::Decomposition> largest_repeats;
  analysis::Decomposition reference;   // at one replica (same micro-batch), or estimated
  bool reference_estimated = false;    // no 1-replica run: `reference` was estimated from N
  analysis::AblationReport ablations;  // at the largest replica count (may be empty)
  analysis::SkewReport skew;           // at the largest replica count
  NoiseScale noise;
  CostInputs cost;
  // Emulated runs only: pacing of the runs at the largest count and the reference, summed.
  std::optional<EmulationHonesty> emulation;
  // The job's own blocking collectives at the largest replica count, by name (their words in
  // the evidence; script_collectives.h).
  std::vector<ScriptCollectiveCalls> script_collectives;
};

Verdict DecideVerdict(const VerdictInputs& in, const VerdictOptions& options = {});

// The explanation: the situation followed by the decision, its reason and the currency.
std::string ExplainVerdict(const Verdict& v);

// The situation's sentence on the most promising lever of `levers` (their gains against the
// measured `samples_per_s`), or that none is expected to gain much. With every lever's goodput
// gain known (a priced decision), the most promising is the one that gains the most goodput: a
// bigger batch can gain samples/s and lose progress per sample.
std::string BestLeverWords(const std::vector<LeverAdvice>& levers, double samples_per_s);

// The measured samples/s the levers' expected gains are against (0 without levers).
double LeverBaseSamplesPerS(const std::vector<LeverAdvice>& levers);

// After the levers changed (new gains, dropped levers): the situation's sentence on the most
// promising lever, `old_words` as BestLeverWords gave it before, replaced by today's, and the
// explanation made anew.
void RefreshLeverWords(const std::string& old_words, double samples_per_s, Verdict* v);

// The decision and the currency in plain words, for sentences (the enums' own text is for JSON).
std::string_view DecisionWords(Decision d);
std::string_view CurrencyWords(Currency c);

}  // namespace stepscope::decide
