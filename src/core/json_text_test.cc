#include "core/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace stepscope {
namespace {

TEST(JsonText, NumbersReadBackExactly) {
  for (double v :
       {0.0, -0.0, 1.0, 0.1, 1.0 / 3.0, 12345.678901234567, 1e-300, -2.5e300, 10719.338073233}) {
    std::string out;
    AppendJsonNumber(v, out);
    EXPECT_EQ(nlohmann::json::parse(out).get<double>(), v) << out;
  }
}

TEST(JsonText, NonFiniteNumbersAreNullOrZero) {
  std::string out;
  AppendJsonNumber(std::numeric_limits<double>::quiet_NaN(), out);
  EXPECT_EQ(out, "null");
  out.clear();
  AppendJsonFixed(std::numeric_limits<double>::infinity(), 3, out);
  EXPECT_EQ(out, "0.000");
  out.clear();
  AppendJsonFixed(1234.56789, 3, out);
  EXPECT_EQ(out, "1234.568");
}

TEST(JsonText, ObjectWriterWritesValidJson) {
  std::string out;
  JsonObjectWriter w(out);
  w.Int("a", -42).Bool("b", true).Number("c", 0.25);
  w.Raw("d") += "[1,2]";
  w.End();
  EXPECT_EQ(out, R"({"a":-42,"b":true,"c":0.25,"d":[1,2]})");
  EXPECT_EQ(nlohmann::json::parse(out)["d"][1], 2);
}

}  // namespace
}  // namespace stepscope
