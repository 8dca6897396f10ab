#include "report/terminal_report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analysis/synthetic_run.h"
#include "decide/build_diagnosis.h"
#include "report/html_report.h"
#include "report/report_testing.h"

namespace stepscope::report {
namespace {

using analysis::ThroughputUnit;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A diagnosis from one replica count (4, with a straggler) and no 1-replica run, the shape
// `analyze` gives for a single trace set.
decide::Diagnosis OneReplicaCount(ThroughputUnit unit) {
  analysis::SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.buckets = 2;
  spec.rank_compute_factor = {{2, 1.5}};
  decide::RunSet run;
  run.baseline = analysis::SynthesizeRun(spec);
  decide::DiagnoseOptions options;
  options.source.origin = "analyze";
  options.source.throughput_unit = unit;
  Result<decide::Diagnosis> d = decide::BuildDiagnosis({run}, options);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? std::move(d).value() : decide::Diagnosis{};
}

TEST(TerminalReport, NamesTheStragglerAndVerdictWithoutEscapesWhenPlain) {
  auto d = MakeTestDiagnosis({.after = true});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::string text = TerminalReport(d.value());
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("binding constraint: " + std::string(ToString(d.value().verdict.binding))),
            std::string::npos);
  EXPECT_NE(text.find("straggler"), std::string::npos);
  EXPECT_NE(text.find("After applying loader_workers_prefetch (--loader-workers 2 --prefetch 8), "
                      "remove_straggler"),
            std::string::npos);
  EXPECT_NE(TerminalReport(d.value(), {.colour = true}).find('\x1b'), std::string::npos);
}

// The ranks' table gives each rank's overhead, and of it the time in the job's own collectives
// once any rank recorded some (a PyTorch script's barrier: rank 1 waits there).
TEST(TerminalReport, RanksShowTheirOverheadAndTheirOwnCollectivesWhereRecorded) {
  decide::Diagnosis d = OneReplicaCount(ThroughputUnit::kSamples);
  ASSERT_FALSE(d.points.empty());
  const auto header = [](const std::string& text) {
    for (const std::string& line : Lines(text)) {
      if (line.find("compute ms") != std::string::npos) return line;
    }
    return std::string();
  };
  EXPECT_NE(header(TerminalReport(d)).find("overhead ms"), std::string::npos);
  EXPECT_EQ(header(TerminalReport(d)).find("own collectives"), std::string::npos);
  for (analysis::RankDecomposition& r : d.points.back().decomposition.ranks) {
    r.mean.overhead = 0.004;
    r.mean.script_comm = r.rank == 1 ? 0.0035 : 0;
  }
  const std::string text = TerminalReport(d);
  EXPECT_NE(header(text).find("of it own collectives ms"), std::string::npos) << text;
  bool seen = false;
  for (const std::string& line : Lines(text)) {
    const size_t first = line.find_first_not_of(' ');
    seen |= first != std::string::npos && line.compare(first, 2, "1 ") == 0 &&
            line.find("4.000") != std::string::npos && line.find("3.500") != std::string::npos;
  }
  EXPECT_TRUE(seen) << text;
}

TEST(TerminalReport, HoldsEverySection) {
  auto made = MakeTestDiagnosis({.after = true, .emulated = true});
  ASSERT_TRUE(made.ok()) << made.status().message();
  const decide::Diagnosis& d = made.value();
  const std::string s = TerminalReport(d);
  for (const char* part :
       {"samples/s", "EMULATED", "Scaling curve", "Where the devices went", "measured speed-up",
        "Ablations at N=4", "Ranks at N=4", "Verdict", "decision: ", "Free levers, cheapest first",
        "Cost per million samples", "currency: "}) {
    EXPECT_NE(s.find(part), std::string::npos) << part;
  }
  EXPECT_NE(s.find("N=4: "), std::string::npos);  // before -> after at the same N
  // The re-measured curve's verdict comes first, then the one before the levers; both
  // efficiencies of the re-measured points are said.
  ASSERT_TRUE(d.after && d.after->verdict);
  const size_t after = s.find("Verdict after the free levers (the one that counts)");
  const size_t before = s.find("Verdict before the levers");
  ASSERT_NE(after, std::string::npos);
  ASSERT_NE(before, std::string::npos);
  EXPECT_LT(after, before);
  EXPECT_NE(s.find("against the levered X(1)"), std::string::npos);
  EXPECT_NE(s.find(d.after->verdict->explanation), std::string::npos);
  for (const std::string& e : d.verdict.evidence) EXPECT_NE(s.find(e), std::string::npos) << e;
  for (const std::string& w : d.warnings) {
    EXPECT_NE(s.find("warning: " + w), std::string::npos) << w;
  }
  for (const analysis::AblationCheck& c : d.points.back().ablations.checks) {
    EXPECT_NE(s.find(c.sentence), std::string::npos) << c.sentence;
  }
}

TEST(TerminalReport, CurveTableHasOneAlignedRowPerReplicaCount) {
  auto d = MakeTestDiagnosis();
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::vector<std::string> lines =
      Lines(CurveTable(d.value().points, ThroughputUnit::kSamples));
  ASSERT_EQ(lines.size(), 1 + d.value().points.size());
  for (const std::string& line : lines) EXPECT_EQ(line.size(), lines.front().size()) << line;
  EXPECT_EQ(lines[1].substr(lines[1].find_first_not_of(' '), 2), "1 ");
}

TEST(TerminalReport, StepRatesNeverReadAsSamples) {
  const decide::Diagnosis d = OneReplicaCount(ThroughputUnit::kSteps);
  const std::string s = TerminalReport(d);
  EXPECT_EQ(s.find("samples/s"), std::string::npos) << s;
  EXPECT_EQ(s.find("per sample"), std::string::npos) << s;
  EXPECT_NE(s.find("steps/s"), std::string::npos);
  // The same records counted in samples say so.
  EXPECT_NE(TerminalReport(OneReplicaCount(ThroughputUnit::kSamples)).find("samples/s"),
            std::string::npos);
}

TEST(TerminalReport, NoMarginalFromOneReplicaCount) {
  const decide::Diagnosis d = OneReplicaCount(ThroughputUnit::kSamples);
  ASSERT_EQ(d.points.size(), 1u);
  EXPECT_FALSE(d.points[0].scaling.has_marginal);
  const std::vector<std::string> lines = Lines(CurveTable(d.points, ThroughputUnit::kSamples));
  ASSERT_EQ(lines.size(), 2u);
  // The marginal column (the fifth) holds "-".
  std::istringstream row(lines[1]);
  std::vector<std::string> cells;
  for (std::string c; row >> c;) cells.push_back(c);
  ASSERT_GE(cells.size(), 5u);
  EXPECT_EQ(cells[4], "-") << lines[1];
  EXPECT_EQ(d.verdict.decision, Decision::kPullLevers);
}

// A failed run is listed with its cause and its log, in the terminal and in the page.
TEST(TerminalReport, ListsFailedRunsWithCauseAndLog) {
  auto d = MakeTestDiagnosis();
  ASSERT_TRUE(d.ok()) << d.status().message();
  d->failed_runs.push_back({"baseline-n8", 8, "rank 5 on host node-2 died of signal 9 (Killed)",
                            137, "/sweeps/a/runs/baseline-n8/log.txt"});
  const std::string text = TerminalReport(*d);
  EXPECT_NE(text.find("failed runs"), std::string::npos);
  EXPECT_NE(text.find("baseline-n8 (8 replicas, exit 137): rank 5 on host node-2 died of signal 9"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("log: /sweeps/a/runs/baseline-n8/log.txt"), std::string::npos);
  const std::string page = RenderHtmlReport(*d);
  EXPECT_NE(page.find("<h2>Failed runs</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td>rank 5 on host node-2 died of signal 9 (Killed)</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<td>/sweeps/a/runs/baseline-n8/log.txt</td>"), std::string::npos);
  d->failed_runs.clear();
  EXPECT_EQ(TerminalReport(*d).find("failed runs"), std::string::npos);
  EXPECT_EQ(RenderHtmlReport(*d).find("Failed runs"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::report
