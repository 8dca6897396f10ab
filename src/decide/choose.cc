#include "decide/choose.h"

#include <fmt/format.h>

#include <cmath>

namespace stepscope::decide {
namespace {

std::string Figure(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "unbounded";
  return fmt::format("{:.4g} {}", v, unit);
}

}  // namespace

PricedDecision Choose(const std::vector<PricedOption>& options, const DecisionInputs& in) {
  const bool by_cost = in.currency == Currency::kCost;
  auto metric = [&](const PricedOption& o) { return by_cost ? CostOf(o) : TimeOf(o); };
  auto other = [&](const PricedOption& o) { return by_cost ? TimeOf(o) : CostOf(o); };
  auto feasible = [&](const PricedOption& o) {
    return by_cost ? o.meets_deadline : o.within_budget;
  };
  bool any_feasible = false;
  for (const PricedOption& o : options) any_feasible = any_feasible || feasible(o);
  auto eligible = [&](const PricedOption& o) { return !any_feasible || feasible(o); };

  const PricedOption* best = nullptr;
  for (const PricedOption& o : options) {
    if (eligible(o) && (best == nullptr || metric(o) < metric(*best))) best = &o;
  }
  // A tie within tie_share of the best goes to the option better in the other currency.
  const PricedOption* chosen = best;
  for (const PricedOption& o : options) {
    if (eligible(o) && metric(o) <= metric(*best) * (1 + in.tie_share) &&
        other(o) < other(*chosen)) {
      chosen = &o;
    }
  }
  // Staying as measured wins when no eligible option beats it by more than tie_share in either
  // currency: a change has to pay for itself beyond the model's error, not by a few percent.
  const PricedOption* stay = nullptr;
  for (const PricedOption& o : options) {
    if (o.kind == OptionKind::kStay && eligible(o)) stay = &o;
  }
  const bool stays = stay != nullptr && chosen != stay &&
                     metric(*stay) <= metric(*best) * (1 + in.tie_share) &&
                     other(*stay) <= other(*chosen) * (1 + in.tie_share);
  if (stays) chosen = stay;
  const PricedOption* runner = nullptr;
  for (const PricedOption& o : options) {
    if (!eligible(o) || o.action == chosen->action) continue;
    if (runner == nullptr || metric(o) < metric(*runner)) runner = &o;
  }

  PricedDecision d;
  d.action = chosen->action;
  d.option = chosen->label;
  d.replicas = chosen->replicas;
  d.link = chosen->link;
  d.device_speed = chosen->device_speed;
  d.levers = chosen->levers;
  d.currency = in.currency;
  const std::string unit = by_cost ? CostUnit(in) : "hours";
  const std::string per = in.samples_to_target ? " to the target" : " per million samples";
  std::string why = fmt::format("{} has the least {}{} ({})", chosen->label,
                                by_cost ? "cost" : "time", per, Figure(metric(*chosen), unit));
  if (stays) {
    why = fmt::format(
        "{} is within {:.0f}% of the least {}{} ({} against {} for {}) and no option that close is "
        "more than {:.0f}% {}: no change pays for itself beyond the model's error",
        chosen->label, 100 * in.tie_share, by_cost ? "cost" : "time", per,
        Figure(metric(*chosen), unit), Figure(metric(*best), unit), best->label, 100 * in.tie_share,
        by_cost ? "faster" : "cheaper");
  } else if (chosen != best) {
    why = fmt::format(
        "{} is within {:.0f}% of the least {}{} ({} against {} for {}) and {} ({} against {})",
        chosen->label, 100 * in.tie_share, by_cost ? "cost" : "time", per,
        Figure(metric(*chosen), unit), Figure(metric(*best), unit), best->label,
        by_cost ? "faster" : "cheaper", Figure(other(*chosen), by_cost ? "hours" : CostUnit(in)),
        Figure(other(*best), by_cost ? "hours" : CostUnit(in)));
  }
  if (by_cost && in.deadline_hours) {
    why +=
        any_feasible
            ? fmt::format(" among the options that meet the {:g}-hour deadline", *in.deadline_hours)
            : fmt::format("; no option meets the {:g}-hour deadline", *in.deadline_hours);
  }
  if (!by_cost && in.budget) {
    why += any_feasible ? fmt::format(" within the budget of {:g}", *in.budget)
                        : fmt::format("; no option stays within the budget of {:g}", *in.budget);
  }
  if (runner != nullptr) {
    d.runner_up = runner->label;
    const double m = metric(*chosen);
    d.margin = m > 0 && std::isfinite(m) ? (metric(*runner) - m) / m : 0;
    why += fmt::format("; the runner-up, {}, {}", runner->label,
                       d.margin >= 0
                           ? fmt::format("needs {:.0f}% more", 100 * d.margin)
                           : fmt::format("needs {:.0f}% less but loses the tie", -100 * d.margin));
  }
  d.reason = why;
  return d;
}

}  // namespace stepscope::decide
