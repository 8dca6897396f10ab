#include "report/terminal_table.h"

#include <gtest/gtest.h>

#include "report/report_testing.h"
#include "report/terminal_report.h"

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

TEST(TerminalReport, NamesTheStragglerAndVerdictWithoutEscapesWhenPlain) {
  auto d = MakeTestDiagnosis({.after = true});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::string text = TerminalReport(d.value());
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("binding constraint: " + std::string(ToString(d.value().verdict.binding))),
            std::string::npos);
  EXPECT_NE(text.find("straggler"), std::string::npos);
  EXPECT_NE(text.find("After applying loader_workers_prefetch (--loader-workers 2 --prefetch 8), "
                      "remove_straggler"),
            std::string::npos);
  EXPECT_NE(TerminalReport(d.value(), {.colour = true}).find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace stepscope::report
