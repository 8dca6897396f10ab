#include "analysis/summary.h"

#include <fmt/format.h>

namespace stepscope::analysis {

std::string CurveTable(const std::vector<DiagnosisPoint>& points) {
  std::string out = fmt::format("{:>5} {:>11} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
                                "N", "samples/s", "eff", "marginal", "p50 ms", "compute", "input",
                                "sync", "transfer", "overhead");
  for (const DiagnosisPoint& p : points) {
    const Components& c = p.decomposition.job;
    const std::string marginal =
        p.scaling.has_marginal ? fmt::format("{:.2f}", p.scaling.marginal_device_value) : "-";
    out += fmt::format(
        "{:>5} {:>11.1f} {:>5.0f}% {:>9} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f}\n",
        p.scaling.replicas, p.scaling.samples_per_s, 100 * p.scaling.efficiency, marginal,
        1e3 * p.decomposition.step_p50, 1e3 * c.compute, 1e3 * c.input_wait, 1e3 * c.sync_wait,
        1e3 * c.transfer, 1e3 * c.overhead);
  }
  return out;
}

std::string WaterfallText(const Attribution& a) {
  std::string out = fmt::format("  {:<22} {:>8.2f}\n", "ideal devices", a.ideal_devices);
  double level = a.ideal_devices;
  for (const WaterfallLine& l : a.lines) {
    level -= l.devices;
    out += fmt::format("  {:<22} {:>+8.2f}  -> {:.2f}\n", ToString(l.component), -l.devices, level);
  }
  out += fmt::format("  {:<22} {:>8.2f}{}\n", "measured speed-up", a.measured_speedup,
                     a.reference_estimated ? "  (1-replica reference estimated)" : "");
  return out;
}

std::string SummaryText(const Diagnosis& d) {
  std::string out;
  out += fmt::format("stepscope {}", d.source.origin.empty() ? "diagnosis" : d.source.origin);
  if (!d.source.tool_version.empty()) out += " " + d.source.tool_version;
  out += '\n';
  if (!d.source.workload.empty()) out += fmt::format("workload: {}\n", d.source.workload);
  if (d.emulation.emulated) {
    std::vector<std::string> params;
    for (const auto& [k, v] : d.emulation.parameters) params.push_back(fmt::format("{}={}", k, v));
    out += fmt::format("EMULATED devices/links: {}\n", fmt::join(params, ", "));
  }
  out += '\n';
  out += CurveTable(d.points);
  if (d.after) {
    out += fmt::format("\nafter applying {}:\n", AppliedLeversText(d.after->levers_applied));
    out += CurveTable(d.after->points);
    for (const DiagnosisPoint& a : d.after->points) {
      for (const DiagnosisPoint& b : d.points) {
        if (b.scaling.replicas != a.scaling.replicas || b.scaling.samples_per_s <= 0) continue;
        out += fmt::format("  N={}: {:.1f} -> {:.1f} samples/s ({:+.0f}%)\n", a.scaling.replicas,
                           b.scaling.samples_per_s, a.scaling.samples_per_s,
                           100 * (a.scaling.samples_per_s / b.scaling.samples_per_s - 1));
      }
    }
  }
  if (d.attribution) {
    out += fmt::format(
        "\nwhere the devices went at N={} (devices; components sum to the loss "
        "of {:.2f}):\n",
        d.attribution->replicas, d.attribution->lost_devices);
    out += WaterfallText(*d.attribution);
  }
  if (!d.points.empty()) {
    const DiagnosisPoint& p = d.points.back();
    out += fmt::format("\nablations at N={}: {}\n", p.scaling.replicas, p.ablations.sentence);
    for (const AblationCheck& c : p.ablations.checks) {
      out += fmt::format("  [{}] {}\n", c.agrees ? "agree" : "DISAGREE", c.sentence);
    }
  }
  const Verdict& v = d.verdict;
  out += fmt::format("\nbinding constraint: {}\n", ToString(v.binding));
  if (!v.straggler_ranks.empty()) {
    out += fmt::format("straggler rank(s): {}\n", fmt::join(v.straggler_ranks, ", "));
  }
  for (const std::string& e : v.evidence) out += fmt::format("  - {}\n", e);
  if (!v.levers.empty()) {
    out += "free levers, cheapest first:\n";
    int i = 1;
    for (const LeverAdvice& l : v.levers) {
      out +=
          fmt::format("  {}. {}: {:+.1f} samples/s", i++, l.action, l.expected_gain_samples_per_s);
      if (l.expected_efficiency > 0) {
        out += fmt::format(" (efficiency {:.0f}%)", 100 * l.expected_efficiency);
      }
      out += fmt::format(" [{}]\n", l.basis);
    }
  }
  out += fmt::format("decision: {}: {} ({})\n", ToString(v.decision), DecisionWords(v.decision),
                     v.decision_reason);
  if (!v.costs.empty()) {
    out += "cost per million samples:\n";
    for (const CostPoint& c : v.costs) {
      out += fmt::format("  N={:<4} {:>10.2f}", c.replicas, c.cost_per_million_samples);
      if (c.marginal_cost_per_million_samples > 0) {
        out += fmt::format("   added devices: {:.2f} per million added samples",
                           c.marginal_cost_per_million_samples);
      }
      out += "\n";
    }
  }
  out += fmt::format("currency: {} ({})\n{}\n\n{}\n", ToString(v.currency),
                     CurrencyWords(v.currency), v.quality_note, v.explanation);
  for (const std::string& w : d.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

}  // namespace stepscope::analysis
