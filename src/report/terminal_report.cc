#include "report/terminal_report.h"

#include <fmt/format.h>

#include "core/text_format.h"
#include "report/options_table.h"
#include "report/rank_table.h"
#include "report/terminal_table.h"

namespace stepscope::report {
namespace {

using analysis::ThroughputUnit;
using decide::DiagnosisPoint;

// Seconds as a bare millisecond figure for a table cell (the header names the unit).
std::string MsCell(double seconds) { return Fixed(1e3 * seconds, 3); }

std::string Heading(const std::string& text, bool colour) {
  return "\n" + Paint(text, Style::kBold, colour) + "\n";
}

// Before -> after at every replica count measured both times.
std::string AfterChanges(const decide::Diagnosis& d, ThroughputUnit unit) {
  std::string out;
  for (const DiagnosisPoint& a : d.after->points) {
    for (const DiagnosisPoint& b : d.points) {
      if (b.scaling.replicas != a.scaling.replicas || b.scaling.samples_per_s <= 0) continue;
      out += fmt::format("  N={}: {} -> {} {} ({:+.0f}%)", a.scaling.replicas,
                         Fixed(b.scaling.samples_per_s, 1), Fixed(a.scaling.samples_per_s, 1),
                         UnitText(unit),
                         100 * (a.scaling.samples_per_s / b.scaling.samples_per_s - 1));
      const double original = d.after->EfficiencyAgainstOriginal(a);
      if (a.scaling.replicas > 1 && original > 0) {
        out += fmt::format("; efficiency {} against the levered X(1), {} against the original",
                           Percent(a.scaling.efficiency), Percent(original));
      }
      out += "\n";
    }
  }
  return out;
}

std::string AblationSection(const DiagnosisPoint& p, bool colour) {
  std::string out = Heading(fmt::format("Ablations at N={}", p.scaling.replicas), colour);
  out += "  " + p.ablations.sentence + "\n";
  if (p.ablations.checks.empty()) return out;
  TextTable t({"ablation", "measured", "predicted", "agrees"},
              {Align::kLeft, Align::kRight, Align::kRight, Align::kLeft});
  for (const analysis::AblationCheck& c : p.ablations.checks) {
    const std::string predicted = c.predicted_high != c.predicted
                                      ? Fixed(c.predicted, 4) + ".." + Fixed(c.predicted_high, 4)
                                      : Fixed(c.predicted, 4);
    t.AddRow({std::string(ToString(c.check)), Fixed(c.measured, 4) + " " + c.unit, predicted,
              c.agrees ? "yes" : "NO"},
             c.agrees ? Style::kPlain : Style::kRed);
  }
  out += t.Render(colour);
  for (const analysis::AblationCheck& c : p.ablations.checks) {
    out += fmt::format("  [{}] {}\n", c.agrees ? "agree" : "DISAGREE", c.sentence);
  }
  return out;
}

std::string RankSection(const DiagnosisPoint& p, bool colour) {
  const analysis::SkewReport& s = p.skew;
  if (s.ranks.empty()) return "";
  std::string out =
      Heading(fmt::format("Ranks at N={} (arrival skew mean {} ms, p90 {} ms)", p.scaling.replicas,
                          MsCell(s.arrival_skew_mean), MsCell(s.arrival_skew_p90)),
              colour);
  const RankTable rows = RankTableOf(p);
  std::vector<Align> align(rows.header.size(), Align::kRight);
  align.back() = Align::kLeft;
  TextTable t(rows.header, align);
  for (const RankTable::Row& r : rows.rows) {
    t.AddRow(r.cells, r.straggler ? Style::kRed : Style::kPlain);
  }
  return out + t.Render(colour);
}

std::string VerdictSection(const decide::Verdict& v, ThroughputUnit unit, bool colour,
                           const std::string& heading = "Verdict") {
  std::string out = Heading(heading, colour);
  out += "  binding constraint: " + Paint(std::string(ToString(v.binding)), Style::kYellow, colour);
  if (!v.straggler_ranks.empty()) {
    out += fmt::format(" (straggler ranks: {})", fmt::join(v.straggler_ranks, ", "));
  }
  out += "\n";
  if (v.throughput_constraint != Binding::kNone) {
    out += "  throughput constraint (already at one replica): " +
           Paint(std::string(ToString(v.throughput_constraint)), Style::kYellow, colour) + "\n";
  }
  for (const decide::BindingCandidate& c : v.candidates) {
    out +=
        fmt::format("  candidate {}: {} per step ({} to {}), {} devices lost ({} to {})\n",
                    ToString(c.binding), Ms(c.seconds.value), Ms(c.seconds.low), Ms(c.seconds.high),
                    Fixed(c.devices.value, 2), Fixed(c.devices.low, 2), Fixed(c.devices.high, 2));
  }
  for (const std::string& e : v.evidence) out += "  - " + e + "\n";
  out += "  decision: " +
         Paint(std::string(ToString(v.decision)),
               v.decision == Decision::kBuyDevices ? Style::kGreen : Style::kRed, colour) +
         ": " + std::string(decide::DecisionWords(v.decision)) + " (" + v.decision_reason + ")\n";
  if (!v.levers.empty()) {
    out += Heading("Free levers, cheapest first", colour);
    TextTable t({"lever", fmt::format("expected {}", UnitText(unit)), "gain", "goodput gain",
                 "efficiency", "action", "basis"},
                {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                 Align::kLeft, Align::kLeft});
    for (const decide::LeverAdvice& l : v.levers) {
      t.AddRow({std::string(ToString(l.lever)), Fixed(l.expected_samples_per_s, 1),
                fmt::format("{:+.1f}", l.expected_gain_samples_per_s),
                l.expected_gain_goodput ? fmt::format("{:+.1f}", *l.expected_gain_goodput) : "-",
                l.expected_efficiency > 0 ? Fixed(100 * l.expected_efficiency, 0) + "%" : "-",
                l.action, l.basis});
    }
    out += t.Render(colour);
  }
  if (!v.levers_dropped.empty()) {
    out += Heading("Levers ruled out by the step-time model", colour);
    for (const decide::DroppedLever& l : v.levers_dropped) {
      out += "  - " + std::string(ToString(l.lever)) + " (" + l.action + "): " + l.reason + "\n";
    }
  }
  if (!v.costs.empty()) {
    const std::string_view noun = UnitNoun(unit);
    out += Heading(fmt::format("Cost per million {}", noun), colour);
    TextTable t({"N", "cost", fmt::format("added devices, per million added {}", noun)},
                std::vector<Align>(3, Align::kRight));
    for (const decide::CostPoint& c : v.costs) {
      t.AddRow({std::to_string(c.replicas), Fixed(c.cost_per_million_samples, 2),
                c.marginal_cost_per_million_samples > 0
                    ? Fixed(c.marginal_cost_per_million_samples, 2)
                    : "-"});
    }
    out += t.Render(colour);
  }
  if (const OptionsTable options = PricedOptionsTable(v); !options.rows.empty()) {
    out += Heading("Options, priced (* the decision)", colour);
    std::vector<Align> align(options.header.size(), Align::kRight);
    align[1] = align[2] = Align::kLeft;
    TextTable t(options.header, align);
    for (const std::vector<std::string>& row : options.rows) t.AddRow(row);
    out += t.Render(colour) + "  " + options.caption + "\n";
  }
  std::string currency(decide::CurrencyWords(v.currency));
  if (unit == ThroughputUnit::kSteps && v.currency == Currency::kCost) {
    currency = "cost per step";
  }
  out += fmt::format("\n  currency: {} ({})\n  {}\n\n{}\n", ToString(v.currency), currency,
                     v.quality_note, v.explanation);
  return out;
}

}  // namespace

std::string CurveTable(const std::vector<DiagnosisPoint>& points, ThroughputUnit unit,
                       bool colour) {
  TextTable t({"N", std::string(UnitText(unit)), "speed-up", "eff", "marginal", "p50 ms", "compute",
               "input", "sync", "transfer", "overhead"},
              std::vector<Align>(11, Align::kRight));
  for (const DiagnosisPoint& p : points) {
    const analysis::ScalingPoint& s = p.scaling;
    const analysis::Components& c = p.decomposition.job;
    const Style style = s.efficiency < 0.5   ? Style::kRed
                        : s.efficiency < 0.8 ? Style::kYellow
                                             : Style::kPlain;
    t.AddRow({std::to_string(s.replicas), Fixed(s.samples_per_s, 1), Fixed(s.speedup, 2),
              Fixed(100 * s.efficiency, 0) + "%",
              s.has_marginal ? Fixed(s.marginal_device_value, 2) : "-",
              MsCell(p.decomposition.step_p50), MsCell(c.compute), MsCell(c.input_wait),
              MsCell(c.sync_wait), MsCell(c.transfer), MsCell(c.overhead)},
             style);
  }
  return t.Render(colour);
}

std::string WaterfallTable(const analysis::Attribution& a, bool colour) {
  TextTable t({"step", "devices", "level"}, {Align::kLeft, Align::kRight, Align::kRight});
  double level = a.ideal_devices;
  t.AddRow({"ideal devices", Fixed(a.ideal_devices, 2), Fixed(level, 2)});
  for (const analysis::WaterfallLine& l : a.lines) {
    level -= l.devices;
    t.AddRow(
        {std::string(ToString(l.component)), fmt::format("{:+.2f}", -l.devices), Fixed(level, 2)},
        l.devices > 0.05 * a.ideal_devices ? Style::kRed : Style::kPlain);
  }
  t.AddRow({"measured speed-up", Fixed(a.measured_speedup, 2), Fixed(a.measured_speedup, 2)},
           Style::kBold);
  return t.Render(colour);
}

std::string TerminalReport(const decide::Diagnosis& d, const TerminalReportOptions& options) {
  const bool colour = options.colour;
  const ThroughputUnit unit = d.source.throughput_unit;
  std::string out =
      Paint(fmt::format("stepscope {}{}", d.source.origin.empty() ? "report" : d.source.origin,
                        d.source.workload.empty() ? std::string() : ": " + d.source.workload),
            Style::kBold, colour) +
      "\n";
  if (!d.source.tool_version.empty()) out += fmt::format("version {}\n", d.source.tool_version);
  if (unit == ThroughputUnit::kSteps) {
    out += "throughput in steps/s: the records give no batch size\n";
  }
  if (d.emulation.emulated) {
    std::vector<std::string> params;
    for (const auto& [k, v] : d.emulation.parameters) params.push_back(k + "=" + v);
    out += Paint(fmt::format("EMULATED devices/links: {}", fmt::join(params, ", ")), Style::kYellow,
                 colour) +
           "\n";
  }

  out += Heading("Scaling curve (times in ms per step)", colour);
  out += CurveTable(d.points, unit, colour);

  if (d.attribution) {
    const analysis::Attribution& a = *d.attribution;
    out += Heading(fmt::format("Where the devices went at N={} ({} of {} lost{})", a.replicas,
                               Fixed(a.lost_devices, 2), Fixed(a.ideal_devices, 0),
                               a.reference_estimated ? "; 1-replica reference estimated" : ""),
                   colour);
    out += WaterfallTable(a, colour);
  }

  if (!d.points.empty()) {
    out += AblationSection(d.points.back(), colour);
    out += RankSection(d.points.back(), colour);
  }

  if (d.after) {
    out += Heading("After applying " + decide::AppliedLeversText(d.after->levers_applied), colour);
    out += CurveTable(d.after->points, unit, colour);
    out += AfterChanges(d, unit);
  }

  if (d.after && d.after->verdict) {
    // The verdict on the re-measured curve counts: it comes first.
    out += VerdictSection(*d.after->verdict, unit, colour,
                          "Verdict after the free levers (the one that counts)");
    out += VerdictSection(d.verdict, unit, colour, "Verdict before the levers");
  } else {
    out += VerdictSection(d.verdict, unit, colour);
  }
  if (!d.failed_runs.empty()) {
    out +=
        Paint("\nfailed runs (the diagnosis is made without them):", Style::kYellow, colour) + "\n";
    for (const decide::FailedRun& f : d.failed_runs) {
      out += fmt::format("  {} ({} replica{}, exit {}): {}\n    log: {}\n", f.run, f.replicas,
                         f.replicas == 1 ? "" : "s", f.exit_code, f.cause, f.log);
    }
  }
  for (const std::string& w : d.warnings) {
    out += Paint("warning: " + w, Style::kYellow, colour) + "\n";
  }
  return out;
}

}  // namespace stepscope::report
