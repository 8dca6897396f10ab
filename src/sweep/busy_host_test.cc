#include "sweep/busy_host.h"

#include <gtest/gtest.h>

namespace stepscope::sweep {
namespace {

TEST(BusyHost, WarnsFromNinetyPercentOfTheCores) {
  RunSummary run;
  run.cores_per_host = 2;
  run.ranks_per_host = 16;
  run.cpu_per_step = 0.00655;
  EXPECT_FALSE(BusyHostWarning(16, run).has_value());  // not recorded
  run.busiest_host_share = 0.89;
  EXPECT_FALSE(BusyHostWarning(16, run).has_value());
  run.busiest_host_share = 0.95;
  const std::optional<std::string> w = BusyHostWarning(16, run);
  ASSERT_TRUE(w.has_value());
  for (const char* part : {"at 16 replica(s)", "2 cores were 95 % busy", "16 ranks",
                           "6.55 ms of CPU", "the host's pace"}) {
    EXPECT_NE(w->find(part), std::string::npos) << part << " in: " << *w;
  }
}

}  // namespace
}  // namespace stepscope::sweep
