#include "report/terminal_table.h"

#include <gtest/gtest.h>

namespace stepscope::report {
namespace {

TEST(TextTable, AlignsColumnsWithoutColour) {
  TextTable t({"name", "value"}, {Align::kLeft, Align::kRight});
  t.AddRow({"a", "1.5"});
  t.AddRow({"longer→", "12.25"});
  EXPECT_EQ(t.Render(false, 0),
            "name     value\n"
            "a          1.5\n"
            "longer→  12.25\n");
}

TEST(TextTable, ColourOnlyWhenAsked) {
  TextTable t({"x"}, {Align::kLeft});
  t.AddRow({"bad"}, Style::kRed);
  EXPECT_EQ(t.Render(false).find('\x1b'), std::string::npos);
  EXPECT_NE(t.Render(true).find("\x1b[31m  bad\x1b[0m"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::report
