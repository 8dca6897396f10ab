#include "report/curve_csv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "report/report_testing.h"

namespace stepscope::report {
namespace {

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

TEST(CurveCsv, OneRowPerReplicaCountAndPhaseWithStableColumns) {
  auto d = MakeTestDiagnosis({.after = true});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::string csv = CurveCsv(d.value());
  std::stringstream ss(csv);
  std::string line;
  std::getline(ss, line);
  EXPECT_EQ(Split(line), CurveCsvColumns());
  EXPECT_EQ(line.substr(0, 32), "phase,replicas,samples_per_s,spe");
  std::vector<std::vector<std::string>> rows;
  while (std::getline(ss, line)) rows.push_back(Split(line));
  ASSERT_EQ(rows.size(), d.value().points.size() + d.value().after->points.size());
  for (const auto& r : rows) EXPECT_EQ(r.size(), CurveCsvColumns().size());
  EXPECT_EQ(rows[0][0], "before");
  EXPECT_EQ(rows[0][1], "1");
  EXPECT_EQ(rows[0][5], "");  // no marginal value at the first point
  EXPECT_EQ(rows.back()[0], "after");
  // The columns parse back to the diagnosis' numbers.
  EXPECT_NEAR(std::stod(rows[2][2]), d.value().points[2].scaling.samples_per_s, 1e-6);
  EXPECT_NEAR(std::stod(rows[2][4]), d.value().points[2].scaling.efficiency, 1e-9);
  EXPECT_EQ(rows[2][21], "3");  // the straggler at N=4
}

TEST(CurveCsv, StepRatesHaveAStepsColumn) {
  auto d = MakeTestDiagnosis();
  ASSERT_TRUE(d.ok()) << d.status().message();
  d.value().source.throughput_unit = analysis::ThroughputUnit::kSteps;
  const std::string csv = CurveCsv(d.value());
  EXPECT_EQ(csv.substr(0, 30), "phase,replicas,steps_per_s,spe");
  const std::vector<std::string> header = Split(csv.substr(0, csv.find('\n')));
  EXPECT_EQ(std::count(header.begin(), header.end(), "samples_per_s"), 0);
}

}  // namespace
}  // namespace stepscope::report
