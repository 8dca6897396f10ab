#include "core/json_number.h"

#include <gtest/gtest.h>

#include "core/step_record.h"

namespace stepscope {
namespace {

using nlohmann::json;

TEST(JsonValueTo, IntegersOnlyWithinRange) {
  int i = 7;
  EXPECT_TRUE(JsonValueTo(json(42), &i));
  EXPECT_EQ(i, 42);
  EXPECT_TRUE(JsonValueTo(json(3.7), &i));  // truncated toward zero, as get<int>() does
  EXPECT_EQ(i, 3);
  EXPECT_TRUE(JsonValueTo(json(-2147483648.0), &i));
  EXPECT_EQ(i, -2147483648);
  i = 7;
  for (const json& bad :
       {json(1e300), json(-1e300), json(2147483648.0), json(2147483648LL), json(-2147483649LL),
        json(18446744073709551615ULL), json(true), json("3"), json(nullptr), json::array()}) {
    EXPECT_FALSE(JsonValueTo(bad, &i)) << bad.dump();
    EXPECT_EQ(i, 7) << bad.dump();  // untouched
  }
  int64_t big = 0;
  EXPECT_FALSE(JsonValueTo(json(9223372036854775808.0), &big));
  EXPECT_TRUE(JsonValueTo(json(-9223372036854775807LL - 1), &big));
  unsigned u = 0;
  EXPECT_FALSE(JsonValueTo(json(-1), &u));
  EXPECT_TRUE(JsonValueTo(json(4294967295ULL), &u));
  EXPECT_EQ(u, 4294967295u);
}

TEST(JsonValueTo, BoolsAndFloats) {
  bool b = false;
  EXPECT_TRUE(JsonValueTo(json(true), &b));
  EXPECT_TRUE(b);
  EXPECT_FALSE(JsonValueTo(json(1), &b));
  double d = 0;
  EXPECT_TRUE(JsonValueTo(json(1e300), &d));
  EXPECT_EQ(d, 1e300);
  EXPECT_TRUE(JsonValueTo(json(18446744073709551615ULL), &d));
  EXPECT_FALSE(JsonValueTo(json("1.5"), &d));
}

// A step record whose rank does not fit an int is an error naming the line and the field.
TEST(JsonValueTo, StepRecordOutOfRangeIsNamed) {
  auto r = StepRecordFromJson(R"({"rank":1e300,"step":0,"start":0,"end":1})", "f.jsonl:3");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("f.jsonl:3: field 'rank'"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("out of range"), std::string::npos);
}

}  // namespace
}  // namespace stepscope
