#include "report/options_table.h"

#include <fmt/format.h>

#include "core/text_format.h"

namespace stepscope::report {

OptionsTable PricedOptionsTable(const decide::Verdict& v) {
  OptionsTable t;
  if (v.options.empty()) return t;
  const bool target = v.time_to_quality && v.time_to_quality->samples_to_target;
  const std::string unit = v.time_to_quality ? v.time_to_quality->cost_unit : "cost";
  t.header = {"",
              "option",
              "action",
              "N",
              "global batch",
              "samples/s",
              "stat. eff",
              "goodput",
              "price/h",
              target ? "hours to target" : "hours per M",
              target ? unit + " to target" : unit + " per M",
              "deadline",
              "budget"};
  const std::string chosen = v.priced ? v.priced->option : "";
  for (const decide::PricedOption& o : v.options) {
    const double hours = o.time_to_target_hours.value_or(o.hours_per_million);
    const double cost = o.cost_to_target.value_or(o.cost_per_million);
    t.rows.push_back({o.label == chosen ? "*" : "", o.label, std::string(ToString(o.action)),
                      std::to_string(o.replicas), std::to_string(o.global_batch),
                      Fixed(o.samples_per_s.value, 1), Fixed(o.statistical_efficiency, 3),
                      Fixed(o.goodput, 1), Fixed(o.price_per_hour, 2), fmt::format("{:.4g}", hours),
                      fmt::format("{:.4g}", cost), o.meets_deadline ? "ok" : "missed",
                      o.within_budget ? "ok" : "over"});
  }
  t.caption = fmt::format(
      "{}; goodput = samples/s x statistical efficiency against the one-replica global batch ({})",
      target ? fmt::format("to a target of {:g} samples at the one-replica batch",
                           *v.time_to_quality->samples_to_target)
             : "per million samples of progress (no target given)",
      v.time_to_quality ? v.time_to_quality->scale.how : "noise scale unknown");
  if (target && v.time_to_quality->fixed_hours > 0) {
    t.caption += fmt::format("; every job to the target also pays {:.3g} h outside its steps ({})",
                             v.time_to_quality->fixed_hours, v.time_to_quality->fixed_how);
  }
  return t;
}

}  // namespace stepscope::report
