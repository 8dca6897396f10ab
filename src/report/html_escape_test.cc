#include "report/html_escape.h"

#include <gtest/gtest.h>

namespace stepscope::report {
namespace {

TEST(EscapeHtml, ReplacesTheFiveSpecialCharacters) {
  EXPECT_EQ(EscapeHtml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(EscapeHtml("plain text"), "plain text");
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
