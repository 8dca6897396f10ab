#include "apps/stepscope/decision_section.h"

#include <fmt/format.h>

#include "comm/allreduce.h"
#include "core/statistics.h"
#include "decide/choose.h"
#include "decide/priced_options.h"
#include "sweep/run_records.h"

namespace stepscope::app {

std::vector<decide::LeverOption> LeverOptions(const std::vector<Lever>& recommended,
                                              const plan::LeverBasis& basis) {
  std::vector<decide::LeverOption> out;
  const plan::LeverPlan plan = plan::PlanLevers(recommended, basis);
  for (const plan::PlannedLever& p : plan.planned) {
    const plan::LeverChange& c = p.change;
    decide::LeverOption o{p.lever, p.words, {}};
    o.change.balance_lengths = c.balance_lengths.value_or(false);
    o.change.batch = c.micro_batch;
    o.change.accum = c.accumulation;
    o.change.bucket_mb = c.bucket_mib;
    o.change.overlap = c.overlap;
    if (c.wire) o.change.dtype = comm::ToString(*c.wire);
    o.change.loader_workers = c.loader_workers;
    out.push_back(std::move(o));
  }
  for (Lever l : recommended) {
    if (l != Lever::kRemoveStraggler) continue;
    decide::LeverOption o{l, "the straggler ranks fixed or replaced", {}};
    o.change.without_stragglers = true;
    out.push_back(std::move(o));
    break;
  }
  return out;
}

plan::LeverBasis LeveredBasis(const std::vector<Lever>& applied, const plan::LeverBasis& basis) {
  plan::LeverBasis levered = basis;
  for (const plan::PlannedLever& p : plan::PlanLevers(applied, basis).planned) {
    levered = plan::AfterChange(levered, p.change);
  }
  return levered;
}

void AddMeasuredStartup(const sweep::SweepStore& store, decide::DecisionInputs* inputs) {
  std::vector<double> outside;
  for (const sweep::StoredRun& stored : store.runs()) {
    if (stored.state != "finished" || !(stored.seconds > 0)) continue;
    Result<sweep::RunSummary> run = sweep::ReadRunSummary(store.RunDir(stored.name));
    if (!run.ok() || !(run->wall_time_s > 0)) continue;
    const double steps = run->wall_time_s - run->startup_s - run->evaluation_s;
    outside.push_back(std::max(0.0, stored.seconds - steps - run->evaluation_s));
  }
  if (outside.empty()) return;
  const double startup = Median(outside);
  inputs->fixed_hours += startup / 3600;
  inputs->fixed_parts.push_back(
      fmt::format("start-up and shut-down {:.1f} s (launcher, data, model; median of {} runs)",
                  startup, outside.size()));
}

namespace {

// The noise scale the pricing used, in words: where it was measured, at what progress of
// training, and that it grows as training proceeds.
std::string NoiseScaleHow(const decide::NoiseScale& noise) {
  if (!noise.known) {
    return fmt::format("unknown ({}): every global batch taken as equally efficient",
                       noise.reason.empty() ? "no gradient norms" : noise.reason);
  }
  if (noise.method == "over_training") {
    return fmt::format(
        "B_noise {:.3g} averaged over steps {} to {} of training ({:.0f} samples) at a global "
        "batch of {:g} ({}); it grows as training proceeds, so a longer job is likely to see more "
        "and to lose less to a bigger batch",
        noise.b_noise, noise.first_step, noise.last_step, noise.samples_seen, noise.global_batch,
        noise.reason);
  }
  return fmt::format(
      "B_noise {:.3g} (90% band {:.3g} to {:.3g}) from {} steps of {} runs, up to a global batch "
      "of {:g}, at steps {} to {} of training (it grows as training proceeds)",
      noise.b_noise, noise.b_noise_low, noise.b_noise_high, noise.steps, noise.runs,
      noise.global_batch, noise.first_step, noise.last_step);
}

// Prices the options of one verdict from `base` (its "stay"), with `levers` priced on top, and
// sets the verdict's priced decision; false (with a warning) when the model cannot price them.
bool PriceVerdict(const model::StepModel& model, const decide::DecisionInputs& inputs,
                  const std::vector<decide::DiagnosisPoint>& points,
                  const decide::NoiseScale& noise, const model::Scenario& base,
                  const std::string& base_words, std::vector<decide::LeverOption> levers,
                  decide::Verdict* v, std::vector<std::string>* warnings) {
  decide::OptionsRequest request;
  request.base = base;
  request.base_words = base_words;
  request.largest_measured = points.back().scaling.replicas;
  for (const decide::DiagnosisPoint& p : points) {
    request.measured_replicas.push_back(p.scaling.replicas);
  }
  request.levers = std::move(levers);
  request.scale.known = noise.known;
  request.scale.b_noise = noise.b_noise;
  request.scale.reference_batch =
      static_cast<double>(model.reference.batch) * model.reference.accum;
  request.scale.how = NoiseScaleHow(noise);
  if (inputs.b_noise_to_target) {
    request.scale.known = true;
    request.scale.b_noise = *inputs.b_noise_to_target;
    request.scale.how = inputs.b_noise_to_target_how;
  }
  request.inputs = inputs;
  Result<std::vector<decide::PricedOption>> options = decide::PriceOptions(model, request);
  if (!options.ok()) {
    warnings->push_back("the options could not be priced: " + options.status().message() +
                        "; the decision is the curve's");
    return false;
  }
  double stay_goodput = 0;
  for (const decide::PricedOption& o : *options) {
    if (o.kind == decide::OptionKind::kStay) stay_goodput = o.goodput;
  }
  const double measured_x = decide::LeverBaseSamplesPerS(v->levers);
  const std::string old_words = decide::BestLeverWords(v->levers, measured_x);
  for (decide::LeverAdvice& l : v->levers) {
    for (const decide::PricedOption& o : *options) {
      if (o.kind == decide::OptionKind::kLever && o.levers == std::vector<Lever>{l.lever}) {
        l.expected_gain_goodput = o.goodput - stay_goodput;
      }
    }
  }
  // With goodput known, the most promising lever is the one that gains the most of it.
  decide::RefreshLeverWords(old_words, measured_x, v);
  decide::PricedDecision chosen = decide::Choose(*options, inputs);
  v->decision = chosen.action;
  v->decision_reason = chosen.reason;
  v->currency = chosen.currency;
  v->priced = std::move(chosen);
  v->options = std::move(options).value();
  decide::TimeToQuality t;
  t.scale = request.scale;
  t.samples_to_target = inputs.samples_to_target;
  t.samples_to_target_batch = inputs.samples_to_target_batch;
  t.deadline_hours = inputs.deadline_hours;
  t.budget = inputs.budget;
  t.fixed_hours = inputs.fixed_hours;
  t.fixed_how = fmt::format("{}", fmt::join(inputs.fixed_parts, "; "));
  t.cost_unit = decide::CostUnit(inputs);
  v->time_to_quality = std::move(t);
  v->explanation = decide::ExplainVerdict(*v);
  return true;
}

}  // namespace

void ApplyPricedDecision(const model::StepModel& model, const decide::DecisionInputs& inputs,
                         const plan::LeverBasis& basis, decide::Diagnosis* d) {
  if (d->points.empty()) return;
  std::vector<Lever> recommended;
  for (const decide::LeverAdvice& l : d->verdict.levers) recommended.push_back(l.lever);
  PriceVerdict(model, inputs, d->points, d->noise_scale, model::Scenario{}, "as measured",
               LeverOptions(recommended, basis), &d->verdict, &d->warnings);
  // After the levers: the same model (it describes the workload; the levered runs are its
  // checks), from the levered configuration, the second verdict's levers planned from the
  // values the first levers left.
  if (!d->after || !d->after->verdict || d->after->points.empty()) return;
  std::vector<Lever> applied;
  for (const decide::AppliedLever& a : d->after->levers_applied) applied.push_back(a.lever);
  const model::Scenario levered = decide::WithLevers({}, LeverOptions(applied, basis));
  std::vector<Lever> next;
  for (const decide::LeverAdvice& l : d->after->verdict->levers) next.push_back(l.lever);
  PriceVerdict(model, inputs, d->after->points, d->noise_scale, levered,
               "with the free levers applied", LeverOptions(next, LeveredBasis(applied, basis)),
               &*d->after->verdict, &d->warnings);
}

}  // namespace stepscope::app
