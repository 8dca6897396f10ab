#include "decide/priced_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "model/collective_fit.h"
#include "model/simulate.h"

namespace stepscope::decide {
model::Scenario WithLevers(model::Scenario s, const std::vector<LeverOption>& levers) {
  for (const LeverOption& l : levers) {
    const model::Scenario& c = l.change;
    if (c.dtype) s.dtype = c.dtype;
    if (c.bucket_mb) s.bucket_mb = c.bucket_mb;
    if (c.overlap) s.overlap = c.overlap;
    if (c.batch) s.batch = c.batch;
    if (c.accum) s.accum = c.accum;
    if (c.loader_workers) s.loader_workers = c.loader_workers;
    s.without_stragglers = s.without_stragglers || c.without_stragglers;
    s.balance_lengths = s.balance_lengths || c.balance_lengths;
  }
  return s;
}

namespace {

std::vector<Lever> LeversOf(const std::vector<LeverOption>& levers) {
  std::vector<Lever> out;
  for (const LeverOption& l : levers) out.push_back(l.lever);
  return out;
}

class Pricer {
 public:
  Pricer(const model::StepModel& model, const OptionsRequest& request)
      : model_(model), request_(request) {}

  Status Add(PricedOption o, model::Scenario s, double extra_price_per_device_hour) {
    s.replicas = o.replicas;
    Result<model::Prediction> p = model::Predict(model_, s);
    if (!p.ok()) return Status::Error("pricing '" + o.label + "': " + p.status().message());
    const DecisionInputs& in = request_.inputs;
    o.global_batch = p->batch * p->accum * o.replicas;
    o.samples_per_s = p->samples_per_s;
    o.statistical_efficiency = StatisticalEfficiency(request_.scale, o.global_batch);
    o.goodput = o.samples_per_s.value * o.statistical_efficiency;
    o.price_per_hour =
        o.replicas * (in.device_cost_per_hour.value_or(1.0) + extra_price_per_device_hour);
    o.note = p->memory_note;
    if (o.goodput > 0) {
      o.hours_per_million = 1e6 / o.goodput / 3600;
      o.cost_per_million = o.price_per_hour * o.hours_per_million;
      if (in.samples_to_target) {
        // Samples of progress at the reference batch: a target counted at batch B took
        // S_B = S_0 / efficiency(B) samples.
        const double reference_samples =
            in.samples_to_target_batch > 0
                ? *in.samples_to_target *
                      StatisticalEfficiency(request_.scale, in.samples_to_target_batch)
                : *in.samples_to_target;
        o.time_to_target_hours = reference_samples / o.goodput / 3600 + in.fixed_hours;
        o.cost_to_target = o.price_per_hour * *o.time_to_target_hours;
        if (in.deadline_hours) o.meets_deadline = *o.time_to_target_hours <= *in.deadline_hours;
        if (in.budget) o.within_budget = *o.cost_to_target <= *in.budget;
      }
    } else {
      o.meets_deadline = !in.deadline_hours;
      o.within_budget = !in.budget;
    }
    options_.push_back(std::move(o));
    return Status::Ok();
  }

  std::vector<PricedOption> Take() { return std::move(options_); }

 private:
  const model::StepModel& model_;
  const OptionsRequest& request_;
  std::vector<PricedOption> options_;
};

PricedOption Option(OptionKind kind, Decision action, int replicas, std::string label) {
  PricedOption o;
  o.kind = kind;
  o.action = action;
  o.replicas = replicas;
  o.label = std::move(label);
  return o;
}

std::string Replicas(int n) { return fmt::format("{} replica{}", n, n == 1 ? "" : "s"); }

std::string LinkWords(const LinkUpgrade& l) {
  return fmt::format("{:g} GB/s, {:g} us", l.gbps, l.latency_us);
}

}  // namespace

std::string_view ToString(OptionKind k) {
  switch (k) {
    case OptionKind::kStay:
      return "stay";
    case OptionKind::kLever:
      return "lever";
    case OptionKind::kAllLevers:
      return "all_levers";
    case OptionKind::kMoreDevices:
      return "more_devices";
    case OptionKind::kFewerDevices:
      return "fewer_devices";
    case OptionKind::kFasterLink:
      return "faster_link";
    case OptionKind::kFasterDevices:
      return "faster_devices";
    case OptionKind::kAccumulation:
      return "accumulation";
  }
  return "stay";
}

std::optional<OptionKind> ParseOptionKind(std::string_view text) {
  for (OptionKind k : {OptionKind::kStay, OptionKind::kLever, OptionKind::kAllLevers,
                       OptionKind::kMoreDevices, OptionKind::kFewerDevices, OptionKind::kFasterLink,
                       OptionKind::kFasterDevices, OptionKind::kAccumulation}) {
    if (ToString(k) == text) return k;
  }
  return std::nullopt;
}

double TimeOf(const PricedOption& o) {
  if (o.time_to_target_hours) return *o.time_to_target_hours;
  return o.hours_per_million > 0 ? o.hours_per_million : std::numeric_limits<double>::infinity();
}

double CostOf(const PricedOption& o) {
  if (o.cost_to_target) return *o.cost_to_target;
  return o.cost_per_million > 0 ? o.cost_per_million : std::numeric_limits<double>::infinity();
}

Result<std::vector<PricedOption>> PriceOptions(const model::StepModel& model,
                                               const OptionsRequest& request) {
  Pricer pricer(model, request);
  const int n = request.largest_measured;
  const model::Scenario& base = request.base;
  STEPSCOPE_RETURN_IF_ERROR(pricer.Add(Option(OptionKind::kStay, Decision::kStay, n,
                                              "stay: " + Replicas(n) + " " + request.base_words),
                                       base, 0));

  for (const LeverOption& l : request.levers) {
    PricedOption o =
        Option(OptionKind::kLever, Decision::kPullLevers, n,
               fmt::format("{}, lever {} ({})", Replicas(n), ToString(l.lever), l.words));
    o.levers = {l.lever};
    STEPSCOPE_RETURN_IF_ERROR(pricer.Add(std::move(o), WithLevers(base, {l}), 0));
  }
  // The free configuration more hardware is priced on: the levers together when there are any.
  const model::Scenario levered = WithLevers(base, request.levers);
  const bool with_levers = !request.levers.empty();
  const std::string suffix = with_levers ? ", with the free levers" : "";
  if (request.levers.size() > 1) {
    PricedOption o =
        Option(OptionKind::kAllLevers, Decision::kPullLevers, n, Replicas(n) + ", all free levers");
    o.levers = LeversOf(request.levers);
    STEPSCOPE_RETURN_IF_ERROR(pricer.Add(std::move(o), levered, 0));
  }

  const std::vector<int> candidates = CandidateReplicas(request.inputs, n);
  for (int m : candidates) {
    if (m == n) continue;
    const bool more = m > n;
    PricedOption o =
        Option(more ? OptionKind::kMoreDevices : OptionKind::kFewerDevices,
               more ? Decision::kBuyDevices : Decision::kReduceDevices, m, Replicas(m) + suffix);
    o.levers = LeversOf(request.levers);
    STEPSCOPE_RETURN_IF_ERROR(pricer.Add(std::move(o), levered, 0));
  }
  for (int m : request.measured_replicas) {
    if (m >= n || std::find(candidates.begin(), candidates.end(), m) != candidates.end()) continue;
    PricedOption o =
        Option(OptionKind::kFewerDevices, Decision::kReduceDevices, m, Replicas(m) + suffix);
    o.levers = LeversOf(request.levers);
    STEPSCOPE_RETURN_IF_ERROR(pricer.Add(std::move(o), levered, 0));
  }

  std::vector<int> upgraded_counts = {n};
  for (int m : candidates) {
    if (m > n) upgraded_counts.push_back(m);
  }
  for (const LinkUpgrade& l : request.inputs.link_upgrades) {
    model::Scenario s = levered;
    s.link = model::LinkAlphaBeta(l.gbps, l.latency_us * 1e-6);
    for (int m : upgraded_counts) {
      PricedOption o = Option(OptionKind::kFasterLink, Decision::kUpgradeInterconnect, m,
                              fmt::format("{} on a {} link{}", Replicas(m), LinkWords(l), suffix));
      o.link = LinkWords(l);
      o.levers = LeversOf(request.levers);
      STEPSCOPE_RETURN_IF_ERROR(pricer.Add(std::move(o), s, l.price_per_device_hour));
    }
  }
  for (const DeviceUpgrade& d : request.inputs.device_upgrades) {
    model::Scenario s = levered;
    s.compute_scale = d.speed;
    for (int m : upgraded_counts) {
      PricedOption o =
          Option(OptionKind::kFasterDevices, Decision::kUpgradeDevices, m,
                 fmt::format("{} of {:g}x faster devices{}", Replicas(m), d.speed, suffix));
      o.device_speed = d.speed;
      o.levers = LeversOf(request.levers);
      STEPSCOPE_RETURN_IF_ERROR(pricer.Add(std::move(o), s, d.price_per_device_hour));
    }
  }
  // Accumulation instead of more devices: today's count reaching a candidate's global batch.
  const int accum = levered.accum.value_or(model.reference.accum);
  for (int m : candidates) {
    if (m <= n || m % n != 0) continue;
    model::Scenario s = levered;
    s.accum = accum * (m / n);
    PricedOption o =
        Option(OptionKind::kAccumulation, Decision::kPullLevers, n,
               fmt::format("{} accumulating {} micro-batches (the global batch of {}){}",
                           Replicas(n), *s.accum, Replicas(m), suffix));
    o.levers = LeversOf(request.levers);
    o.levers.push_back(Lever::kGradientAccumulation);
    STEPSCOPE_RETURN_IF_ERROR(pricer.Add(std::move(o), s, 0));
  }
  return pricer.Take();
}

}  // namespace stepscope::decide
