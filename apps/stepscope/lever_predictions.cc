#include "apps/stepscope/lever_predictions.h"

#include <fmt/format.h>

#include "core/text_format.h"
#include "decide/lever_pruning.h"
#include "model/simulate.h"
#include "plan/variant.h"

namespace stepscope::app {
namespace {

// The difference of two predictions of one model: the same constants at the same end of their
// intervals move both, so the band pairs low with low and high with high.
Estimate Difference(const Estimate& a, const Estimate& b) {
  const double gain = a.value - b.value;
  return {gain, std::min({gain, a.low - b.low, a.high - b.high}),
          std::max({gain, a.low - b.low, a.high - b.high})};
}

// A lever's own run at some replica count: its name and measured samples/s.
struct LeverRun {
  std::string name;
  double samples_per_s = 0;
};

// A lever's own run at `replicas`: its single-lever run, or the all-levers run when it was the
// only lever applied.
std::optional<LeverRun> MeasuredAlone(const decide::Diagnosis& d, Lever lever, int replicas) {
  if (!d.after) return std::nullopt;
  const std::vector<decide::AppliedLever>& applied = d.after->levers_applied;
  for (const decide::AppliedLever& a : applied) {
    if (a.lever != lever) continue;
    if (a.alone_replicas == replicas && a.alone_samples_per_s > 0) {
      return LeverRun{plan::RunName({plan::Variant::OneLever(lever), replicas}),
                      a.alone_samples_per_s};
    }
    if (applied.size() == 1) {
      for (const decide::DiagnosisPoint& p : d.after->points) {
        if (p.scaling.replicas == replicas) {
          return LeverRun{
              plan::RunName({plan::Variant::Of(plan::VariantKind::kAllLevers), replicas}),
              p.scaling.samples_per_s};
        }
      }
    }
  }
  return std::nullopt;
}

// The lever's gain as its run and the baseline drew their lengths (Scenario::as_drawn), when
// the model has both runs' positions.
std::optional<Estimate> GainAsDrawn(const model::StepModel& model,
                                    const decide::LeverOption& option, int replicas,
                                    const std::string& lever_run) {
  const std::string baseline =
      plan::RunName({plan::Variant::Of(plan::VariantKind::kBaseline), replicas});
  if (model.drawn.count(baseline) == 0 || model.drawn.count(lever_run) == 0) return std::nullopt;
  model::Scenario from;
  from.replicas = replicas;
  from.as_drawn = baseline;
  model::Scenario with = decide::WithLevers(from, {option});
  with.as_drawn = lever_run;
  Result<model::Prediction> before = model::Predict(model, from);
  Result<model::Prediction> after = model::Predict(model, with);
  if (!before.ok() || !after.ok()) return std::nullopt;
  return Difference(after->samples_per_s, before->samples_per_s);
}

}  // namespace

std::vector<LeverPrediction> PredictLeversFrom(const model::StepModel& model,
                                               const model::Scenario& base, int replicas,
                                               const std::vector<decide::LeverOption>& levers,
                                               std::vector<std::string>* warnings) {
  std::vector<LeverPrediction> out;
  model::Scenario from = base;
  from.replicas = replicas;
  Result<model::Prediction> before = model::Predict(model, from);
  if (!before.ok()) {
    warnings->push_back("the levers were not simulated: " + before.status().message());
    return out;
  }
  for (const decide::LeverOption& option : levers) {
    model::Scenario with = decide::WithLevers(from, {option});
    Result<model::Prediction> after = model::Predict(model, with);
    if (!after.ok()) {
      warnings->push_back(fmt::format("lever {} not simulated: {}", ToString(option.lever),
                                      after.status().message()));
      continue;
    }
    LeverPrediction p;
    p.lever = option.lever;
    p.change = option.words;
    p.replicas = replicas;
    p.predicted_samples_per_s = after->samples_per_s;
    p.predicted_efficiency = after->efficiency.value;
    p.predicted_gain_samples_per_s = Difference(after->samples_per_s, before->samples_per_s);
    p.memory_note = after->memory_note;
    p.wire_note = after->wire_note;
    p.bucket_note = after->bucket_note;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<LeverPrediction> PredictLevers(const model::StepModel& model,
                                           const std::vector<decide::LeverOption>& levers,
                                           const decide::Diagnosis& d,
                                           std::vector<std::string>* warnings) {
  if (d.points.empty()) return {};
  const decide::DiagnosisPoint& largest = d.points.back();
  const int n = largest.scaling.replicas;
  std::vector<LeverPrediction> out = PredictLeversFrom(model, {}, n, levers, warnings);
  for (LeverPrediction& p : out) {
    const std::optional<LeverRun> run = MeasuredAlone(d, p.lever, n);
    if (!run) continue;
    p.measured_samples_per_s = run->samples_per_s;
    p.measured_gain_samples_per_s = run->samples_per_s - largest.scaling.samples_per_s;
    for (const decide::LeverOption& option : levers) {
      if (option.lever == p.lever) {
        p.predicted_gain_as_drawn = GainAsDrawn(model, option, n, run->name);
      }
    }
  }
  return out;
}

std::vector<model::Prediction> LeverCurve(const model::StepModel& model,
                                          const std::vector<decide::LeverOption>& levers,
                                          const std::vector<int>& replicas) {
  if (levers.empty()) return {};
  model::Scenario all = decide::WithLevers(model::Scenario{}, levers);
  std::vector<model::Prediction> out;
  for (int n : replicas) {
    all.replicas = n;
    Result<model::Prediction> p = model::Predict(model, all);
    if (!p.ok()) return {};
    out.push_back(*p);
  }
  return out;
}

void UseModelGains(const std::vector<LeverPrediction>& predictions, decide::Verdict* verdict,
                   double one_replica_samples_per_s) {
  bool changed = false;
  const double measured_x = decide::LeverBaseSamplesPerS(verdict->levers);
  const std::string old_words = decide::BestLeverWords(verdict->levers, measured_x);
  for (decide::LeverAdvice& l : verdict->levers) {
    for (const LeverPrediction& p : predictions) {
      if (p.lever != l.lever) continue;
      l.expected_gain_samples_per_s = p.predicted_gain_samples_per_s.value;
      l.expected_samples_per_s = measured_x + l.expected_gain_samples_per_s;
      l.expected_efficiency =
          p.predicted_efficiency > 0 ? p.predicted_efficiency
          : one_replica_samples_per_s > 0
              ? l.expected_samples_per_s / (p.replicas * one_replica_samples_per_s)
              : 0;
      l.basis = fmt::format(
          "step-time model re-simulated with {} at N={}: {:+.1f} samples/s "
          "(90% band {:+.1f} to {:+.1f})",
          p.change, p.replicas, p.predicted_gain_samples_per_s.value,
          p.predicted_gain_samples_per_s.low, p.predicted_gain_samples_per_s.high);
      if (!p.memory_note.empty()) l.basis += "; " + p.memory_note;
      if (!p.wire_note.empty()) l.basis += "; " + p.wire_note;
      if (!p.bucket_note.empty()) l.basis += "; " + p.bucket_note;
      changed = true;
    }
  }
  if (!changed) return;
  // The situation names the most promising lever by its gain: now the model's.
  decide::RefreshLeverWords(old_words, measured_x, verdict);
  // A lever the model rules out (and its own run, where one ran, does not contradict) is no
  // longer recommended: it would be priced, listed and joined into "all free levers".
  std::vector<decide::LeverGainEvidence> evidence;
  for (const LeverPrediction& p : predictions) {
    evidence.push_back({p.lever, p.predicted_gain_samples_per_s, p.measured_gain_samples_per_s});
  }
  decide::DropLeversThatDoNotPay(evidence, measured_x, verdict);
}

nlohmann::json ToJson(const std::vector<LeverPrediction>& predictions) {
  nlohmann::json out = nlohmann::json::array();
  for (const LeverPrediction& p : predictions) {
    nlohmann::json j = {
        {"lever", ToString(p.lever)},
        {"change", p.change},
        {"replicas", p.replicas},
        {"predicted_samples_per_s", stepscope::ToJson(p.predicted_samples_per_s)},
        {"expected_gain_samples_per_s", stepscope::ToJson(p.predicted_gain_samples_per_s)},
        {"measured_samples_per_s",
         p.measured_samples_per_s ? nlohmann::json(*p.measured_samples_per_s) : nullptr},
        {"measured_gain_samples_per_s",
         p.measured_gain_samples_per_s ? nlohmann::json(*p.measured_gain_samples_per_s) : nullptr}};
    if (p.predicted_gain_as_drawn) {
      j["expected_gain_as_drawn_samples_per_s"] = stepscope::ToJson(*p.predicted_gain_as_drawn);
    }
    if (!p.memory_note.empty()) j["memory_note"] = p.memory_note;
    if (!p.wire_note.empty()) j["wire_note"] = p.wire_note;
    if (!p.bucket_note.empty()) j["bucket_note"] = p.bucket_note;
    out.push_back(std::move(j));
  }
  return out;
}

std::string LeverPredictionsText(const std::vector<LeverPrediction>& predictions) {
  if (predictions.empty()) return "";
  std::string out = fmt::format(
      "\nlevers at N={}, the step-time model's gain against the measured one (samples/s):\n",
      predictions.front().replicas);
  for (const LeverPrediction& p : predictions) {
    const Estimate& g = p.predicted_gain_samples_per_s;
    out += fmt::format("  {:<26} predicted {:+9.1f} [{:+.1f}, {:+.1f}]  measured {}\n",
                       ToString(p.lever), g.value, g.low, g.high,
                       p.measured_gain_samples_per_s
                           ? fmt::format("{:+9.1f}", *p.measured_gain_samples_per_s)
                           : std::string("(no run of this lever)"));
    if (p.predicted_gain_as_drawn) {
      const Estimate& a = *p.predicted_gain_as_drawn;
      out += fmt::format(
          "  {:<26} as drawn  {:+9.1f} [{:+.1f}, {:+.1f}]  (the lengths its run "
          "and the baseline drew)\n",
          "", a.value, a.low, a.high);
    }
    if (!p.memory_note.empty()) out += "  " + std::string(26, ' ') + " " + p.memory_note + "\n";
  }
  return out;
}

}  // namespace stepscope::app
