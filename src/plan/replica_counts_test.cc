#include "plan/replica_counts.h"

#include <gtest/gtest.h>

namespace stepscope::plan {
namespace {

TEST(ParseReplicaCounts, DistinctAndAscending) {
  Result<std::vector<int>> counts = ParseReplicaCounts("4,1,2,4", "--replicas");
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(counts.value(), (std::vector<int>{1, 2, 4}));
}

TEST(ParseReplicaCounts, RefusesWhatIsNotACountAndNamesTheFlag) {
  for (const char* bad :
       {"", "0", "1,x", "2.5", "-1", "1,,2", " 2", "+2", "4x", "1,2,", ",1", "99999999999"}) {
    Result<std::vector<int>> counts = ParseReplicaCounts(bad, "--replicas");
    ASSERT_FALSE(counts.ok()) << bad;
    EXPECT_NE(counts.status().message().find("--replicas"), std::string::npos);
  }
}

TEST(ParseAblateAt, AllLargestOrAList) {
  const std::vector<int> replicas = {1, 2, 4};
  EXPECT_EQ(ParseAblateAt("all", replicas).value(), (std::set<int>{1, 2, 4}));
  EXPECT_EQ(ParseAblateAt("largest", replicas).value(), (std::set<int>{4}));
  EXPECT_EQ(ParseAblateAt("2,4", replicas).value(), (std::set<int>{2, 4}));
  Result<std::set<int>> bad = ParseAblateAt("most", replicas);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--ablate-at"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::plan
