#include "report/html_escape.h"

#include <gtest/gtest.h>

namespace stepscope::report {
namespace {

TEST(EscapeHtml, ReplacesTheFiveSpecialCharacters) {
  EXPECT_EQ(EscapeHtml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(EscapeHtml("plain text"), "plain text");
}

TEST(EscapeHtml, ControlCharactersBecomeReplacementCharacters) {
  EXPECT_EQ(EscapeHtml("a\x01"
                       "b\x1b[31mc\x7f\td\ne"),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD[31mc\xEF\xBF\xBD\td\ne");
  EXPECT_EQ(EscapeHtml(std::string("nul\0", 4)), "nul\xEF\xBF\xBD");
}

TEST(JsonForScript, NoScriptBreakoutAndSameValue) {
  const std::string hostile = "</script><img src=x onerror=alert(1)> <!-- & \xE2\x80\xA8";
  const nlohmann::json j = {{"name", hostile}};
  const std::string s = JsonForScript(j);
  EXPECT_EQ(s.find('<'), std::string::npos);
  EXPECT_EQ(s.find('>'), std::string::npos);
  EXPECT_EQ(s.find('&'), std::string::npos);
  EXPECT_EQ(s.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(s)["name"], hostile);  // parses back to the same text
}

TEST(JsonForScript, InvalidUtf8BecomesReplacementCharacter) {
  const std::string s = JsonForScript(nlohmann::json("bad \xFF byte"));
  EXPECT_EQ(nlohmann::json::parse(s).get<std::string>(), "bad \xEF\xBF\xBD byte");
}

}  // namespace
}  // namespace stepscope::report
