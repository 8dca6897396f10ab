#include "decide/decision_inputs.h"

#include <gtest/gtest.h>

namespace stepscope::decide {
namespace {

TEST(DecisionInputs, BadInputIsRefusedNamingTheOption) {
  DecisionInputs in;
  EXPECT_TRUE(Validate(in).ok());
  in.device_cost_per_hour = -1;
  EXPECT_NE(Validate(in).message().find("--device-cost"), std::string::npos);
  in.device_cost_per_hour = 2;
  in.deadline_hours = 10;  // no target
  EXPECT_NE(Validate(in).message().find("--samples-to-target"), std::string::npos);
  in.samples_to_target = 1e6;
  EXPECT_TRUE(Validate(in).ok());
  in.budget = -5;
  EXPECT_NE(Validate(in).message().find("--budget"), std::string::npos);
  in.budget.reset();
  in.link_upgrades.push_back({0, 5, 1});
  EXPECT_NE(Validate(in).message().find("--link-upgrade"), std::string::npos);
  in.link_upgrades = {{25, 5, 0.5}};
  in.device_cost_per_hour.reset();  // an upgrade's price needs the device's
  EXPECT_NE(Validate(in).message().find("--device-cost"), std::string::npos);
}

TEST(DecisionInputs, TimeWithoutDeadlineOrBudgetIsFine) {
  DecisionInputs in;
  in.currency = Currency::kTime;
  EXPECT_TRUE(Validate(in).ok());
}

TEST(DecisionInputs, DefaultCandidatesDoubleUpToEightTimes) {
  DecisionInputs in;
  EXPECT_EQ(CandidateReplicas(in, 4), (std::vector<int>{8, 16, 32}));
  in.candidates = {64, 8, 64};
  EXPECT_EQ(CandidateReplicas(in, 4), (std::vector<int>{8, 64}));
}

}  // namespace
}  // namespace stepscope::decide
