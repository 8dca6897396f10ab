#include "core/number_text.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

const NumberContext kLink{"option --emulate-link", "--emulate-link 0.012,50"};

TEST(NumberText, DoubleConsumesTheWholeText) {
  EXPECT_DOUBLE_EQ(ParseDouble("0.05", kLink).value(), 0.05);
  EXPECT_DOUBLE_EQ(ParseDouble("1e-3", kLink).value(), 1e-3);
  EXPECT_DOUBLE_EQ(ParseDouble("-2", kLink).value(), -2);
  for (const char* bad :
       {"0.05abc", "1.7x", "", " 3", "3 ", "abc", "1,5", "inf", "nan", "0x10", "1e", "--1"}) {
    Result<double> r = ParseDouble(bad, kLink);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), std::string("option --emulate-link: '") + bad +
                                        "' is not a number; write e.g. --emulate-link 0.012,50");
  }
}

TEST(NumberText, IntegerRefusesFractionsAndOverflow) {
  const NumberContext c{"option --replicas", "--replicas 1,2,4"};
  EXPECT_EQ(ParseInteger("12", c).value(), 12);
  EXPECT_EQ(ParseInteger("-1", c).value(), -1);
  for (const char* bad : {"1.5", "1e3", "4x", "", "99999999999999999999"}) {
    Result<int64_t> r = ParseInteger(bad, c);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("is not a whole number; write e.g. --replicas 1,2,4"),
              std::string::npos);
  }
}

TEST(NumberText, SplitKeepsEmptyParts) {
  EXPECT_TRUE(SplitText("", ',').empty());
  const auto parts = SplitText("1,,2", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
  EXPECT_EQ(SplitText("1:1.6", ':').back(), "1.6");
}

}  // namespace
}  // namespace stepscope
