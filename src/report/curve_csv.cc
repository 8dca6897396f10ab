#include "report/curve_csv.h"

#include <fmt/format.h>

#include <cmath>

namespace stepscope::report {
namespace {

std::string Num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : ""; }

std::string Cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Line(const decide::DiagnosisPoint& p, const char* phase) {
  const auto& s = p.scaling;
  const auto& d = p.decomposition;
  const auto& c = d.job;
  std::vector<std::string> cells = {
      phase,
      std::to_string(s.replicas),
      Num(s.samples_per_s),
      Num(s.speedup),
      Num(s.efficiency),
      s.has_marginal ? Num(s.marginal_device_value) : "",
      std::to_string(d.steps),
      Num(d.samples_per_step),
      Num(c.step),
      Num(d.step_p50),
      Num(d.step_p90),
      Num(c.compute),
      Num(c.input_wait),
      Num(c.sync_wait),
      Num(c.transfer),
      Num(c.overhead),
      Num(c.exposed_comm),
      Num(c.comm_busy),
      Num(p.skew.compute_spread),
      Num(p.skew.arrival_skew_mean),
      Num(p.skew.arrival_skew_p90),
      fmt::format("{}", fmt::join(p.skew.straggler_ranks, " ")),
      !p.ablations.agree ? "" : (*p.ablations.agree ? "true" : "false"),
      Num(c.script_comm),
  };
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    out += Cell(cells[i]);
  }
  return out + "\n";
}

}  // namespace

const std::vector<std::string>& CurveCsvColumns() {
  static const std::vector<std::string> kColumns = {"phase",
                                                    "replicas",
                                                    "samples_per_s",
                                                    "speedup",
                                                    "efficiency",
                                                    "marginal_device_value",
                                                    "steps",
                                                    "samples_per_step",
                                                    "step_mean_s",
                                                    "step_p50_s",
                                                    "step_p90_s",
                                                    "compute_s",
                                                    "input_wait_s",
                                                    "sync_wait_s",
                                                    "transfer_s",
                                                    "overhead_s",
                                                    "exposed_comm_s",
                                                    "comm_busy_s",
                                                    "compute_spread_s",
                                                    "arrival_skew_mean_s",
                                                    "arrival_skew_p90_s",
                                                    "straggler_ranks",
                                                    "ablations_agree",
                                                    "script_comm_s"};
  return kColumns;
}

std::string CurveCsv(const decide::Diagnosis& d) {
  std::string out;
  const auto& cols = CurveCsvColumns();
  // Without a batch size the rate is steps per second, and its column says so.
  const bool steps = d.source.throughput_unit == analysis::ThroughputUnit::kSteps;
  for (size_t i = 0; i < cols.size(); ++i) {
    out += (i ? "," : "") + (steps && cols[i] == "samples_per_s" ? "steps_per_s" : cols[i]);
  }
  out += "\n";
  for (const auto& p : d.points) out += Line(p, "before");
  if (d.after) {
    for (const auto& p : d.after->points) out += Line(p, "after");
  }
  return out;
}

}  // namespace stepscope::report
