#include "report/terminal_report.h"

#include <fmt/format.h>

#include <cmath>

#include "report/terminal_table.h"

namespace stepscope::report {
namespace {

using analysis::DiagnosisPoint;

std::string F(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "-";
}
std::string Ms(double seconds) { return F(1e3 * seconds, 3); }

std::string CurveTable(const std::vector<DiagnosisPoint>& points, bool colour) {
  TextTable t({"N", "samples/s", "speed-up", "eff", "marginal", "p50 ms", "compute", "input",
               "sync", "transfer", "overhead"},
              std::vector<Align>(11, Align::kRight));
  for (const DiagnosisPoint& p : points) {
    const auto& s = p.scaling;
    const auto& c = p.decomposition.job;
    const Style style = s.efficiency < 0.5   ? Style::kRed
                        : s.efficiency < 0.8 ? Style::kYellow
                                             : Style::kPlain;
    t.AddRow({std::to_string(s.replicas), F(s.samples_per_s, 1), F(s.speedup, 2),
              F(100 * s.efficiency, 0) + "%", s.has_marginal ? F(s.marginal_device_value, 2) : "-",
              Ms(p.decomposition.step_p50), Ms(c.compute), Ms(c.input_wait), Ms(c.sync_wait),
              Ms(c.transfer), Ms(c.overhead)},
             style);
  }
  return t.Render(colour);
}

}  // namespace

std::string TerminalReport(const analysis::Diagnosis& d, const TerminalReportOptions& options) {
  const bool colour = options.colour;
  auto heading = [&](const std::string& s) { return "\n" + Paint(s, Style::kBold, colour) + "\n"; };
  std::string out =
      Paint(fmt::format("stepscope report{}",
                        d.source.workload.empty() ? std::string() : ": " + d.source.workload),
            Style::kBold, colour) +
      "\n";
  out += fmt::format("from {} {}\n", d.source.origin.empty() ? "-" : d.source.origin,
                     d.source.tool_version);
  if (d.emulation.emulated) {
    std::vector<std::string> params;
    for (const auto& [k, v] : d.emulation.parameters) params.push_back(k + "=" + v);
    out += Paint(fmt::format("EMULATED devices/links: {}", fmt::join(params, ", ")), Style::kYellow,
                 colour) +
           "\n";
  }

  out += heading("Scaling curve (times in ms per step)");
  out += CurveTable(d.points, colour);

  if (d.attribution) {
    const analysis::Attribution& a = *d.attribution;
    out += heading(fmt::format("Where the devices went at N={} ({} of {} lost{})", a.replicas,
                               F(a.lost_devices, 2), F(a.ideal_devices, 0),
                               a.reference_estimated ? "; 1-replica reference estimated" : ""));
    TextTable t({"step", "devices", "level"}, {Align::kLeft, Align::kRight, Align::kRight});
    double level = a.ideal_devices;
    t.AddRow({"ideal devices", F(a.ideal_devices, 2), F(level, 2)});
    for (const auto& l : a.lines) {
      level -= l.devices;
      t.AddRow(
          {std::string(ToString(l.component)), fmt::format("{:+.2f}", -l.devices), F(level, 2)},
          l.devices > 0.05 * a.ideal_devices ? Style::kRed : Style::kPlain);
    }
    t.AddRow({"measured speed-up", F(a.measured_speedup, 2), F(a.measured_speedup, 2)},
             Style::kBold);
    out += t.Render(colour);
  }

  if (!d.points.empty()) {
    const DiagnosisPoint& p = d.points.back();
    out += heading(fmt::format("Ablations at N={}", p.scaling.replicas));
    out += "  " + p.ablations.sentence + "\n";
    if (!p.ablations.checks.empty()) {
      TextTable t({"ablation", "measured", "predicted", "agrees"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kLeft});
      for (const auto& c : p.ablations.checks) {
        const std::string predicted = c.predicted_high != c.predicted
                                          ? F(c.predicted, 4) + ".." + F(c.predicted_high, 4)
                                          : F(c.predicted, 4);
        t.AddRow({std::string(ToString(c.check)), F(c.measured, 4) + " " + c.unit, predicted,
                  c.agrees ? "yes" : "NO"},
                 c.agrees ? Style::kPlain : Style::kRed);
      }
      out += t.Render(colour);
    }
    const auto& s = p.skew;
    if (!s.ranks.empty()) {
      out +=
          heading(fmt::format("Ranks at N={} (arrival skew mean {} ms, p90 {} ms)",
                              p.scaling.replicas, Ms(s.arrival_skew_mean), Ms(s.arrival_skew_p90)));
      TextTable t({"rank", "compute ms", "excess", "arrived last", ""},
                  {Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
      for (const auto& r : s.ranks) {
        bool straggler = false;
        for (int x : s.straggler_ranks) straggler |= x == r.rank;
        t.AddRow({std::to_string(r.rank), Ms(r.compute_mean),
                  fmt::format("{:+.0f}%", 100 * r.compute_excess),
                  F(100 * r.last_fraction, 0) + "%", straggler ? "straggler" : ""},
                 straggler ? Style::kRed : Style::kPlain);
      }
      out += t.Render(colour);
    }
  }

  if (d.after) {
    out += heading("After applying " + analysis::AppliedLeversText(d.after->levers_applied));
    out += CurveTable(d.after->points, colour);
  }

  const analysis::Verdict& v = d.verdict;
  out += heading("Verdict");
  out += "  binding constraint: " + Paint(std::string(ToString(v.binding)), Style::kYellow, colour);
  if (!v.straggler_ranks.empty()) {
    out += fmt::format(" (straggler ranks: {})", fmt::join(v.straggler_ranks, ", "));
  }
  out += "\n";
  for (const auto& e : v.evidence) out += "  - " + e + "\n";
  out += "  decision: " +
         Paint(std::string(ToString(v.decision)),
               v.decision == Decision::kBuyDevices ? Style::kGreen : Style::kRed, colour) +
         ": " + std::string(analysis::DecisionWords(v.decision)) + " (" + v.decision_reason + ")\n";
  if (!v.levers.empty()) {
    out += heading("Free levers, cheapest first");
    TextTable t({"lever", "expected samples/s", "gain", "efficiency", "action"},
                {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
    for (const auto& l : v.levers) {
      t.AddRow({std::string(ToString(l.lever)), F(l.expected_samples_per_s, 1),
                fmt::format("{:+.1f}", l.expected_gain_samples_per_s),
                l.expected_efficiency > 0 ? F(100 * l.expected_efficiency, 0) + "%" : "-",
                l.action});
    }
    out += t.Render(colour);
  }
  if (!v.costs.empty()) {
    out += heading("Cost per million samples");
    TextTable t({"N", "cost", "marginal"}, std::vector<Align>(3, Align::kRight));
    for (const auto& c : v.costs) {
      t.AddRow({std::to_string(c.replicas), F(c.cost_per_million_samples, 2),
                c.marginal_cost_per_million_samples > 0 ? F(c.marginal_cost_per_million_samples, 2)
                                                        : "-"});
    }
    out += t.Render(colour);
  }
  out += fmt::format("\n  currency: {} ({})\n  {}\n\n{}\n", ToString(v.currency),
                     analysis::CurrencyWords(v.currency), v.quality_note, v.explanation);
  for (const auto& w : d.warnings) out += Paint("warning: " + w, Style::kYellow, colour) + "\n";
  return out;
}

}  // namespace stepscope::report
