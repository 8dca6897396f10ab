#include "core/placeholders.h"

#include <gtest/gtest.h>

namespace stepscope::core {
namespace {

using Names = std::vector<std::string>;

TEST(Placeholders, NamesAreBracedIdentifiersNotJsonNorEscapedNorShellVariables) {
  EXPECT_EQ(PlaceholderNames("--batch={batch}"), Names{"batch"});
  EXPECT_EQ(PlaceholderNames("run-{n}-{seed}.log"), (Names{"n", "seed"}));
  EXPECT_EQ(PlaceholderNames("{bucket-mb}"), Names{"bucket-mb"});
  EXPECT_EQ(PlaceholderNames("{\"lr\": 0.1}"), Names{});
  EXPECT_EQ(PlaceholderNames("{}"), Names{});
  EXPECT_EQ(PlaceholderNames("{1}"), Names{});
  EXPECT_EQ(PlaceholderNames("{{epoch}}"), Names{});
  EXPECT_EQ(PlaceholderNames("${HOME}/x"), Names{});
  EXPECT_EQ(PlaceholderNames("{{{batch}}}"), Names{"batch"});
  EXPECT_EQ(PlaceholderNames("{batch"), Names{});
}

TEST(Placeholders, FillReplacesKnownNamesAndUnescapesBraces) {
  const std::vector<std::pair<std::string_view, std::string>> values = {{"batch", "32"},
                                                                        {"n", "4"}};
  EXPECT_EQ(FillPlaceholders("--batch={batch}", values), "--batch=32");
  EXPECT_EQ(FillPlaceholders("{batch}x{batch}", values), "32x32");
  EXPECT_EQ(FillPlaceholders("ckpt-{{epoch}}.pt", values), "ckpt-{epoch}.pt");
  EXPECT_EQ(FillPlaceholders("{{batch}}", values), "{batch}");
  EXPECT_EQ(FillPlaceholders("{{{n}}}", values), "{4}");
  EXPECT_EQ(FillPlaceholders("${n}", values), "${n}");
  EXPECT_EQ(FillPlaceholders("{\"a\": 1}", values), "{\"a\": 1}");
  EXPECT_EQ(FillPlaceholders("{other}", values), "{other}");
}

TEST(Placeholders, AnUnknownNameIsRefusedWithTheNearestKnownOne) {
  const std::vector<std::string_view> known = {"batch", "accum", "bucket_mb"};
  EXPECT_TRUE(CheckPlaceholders({"--batch", "{batch}", "{{epoch}}", "${X}"}, known, "w").ok());
  Status s = CheckPlaceholders({"--bs", "{bacth}"}, known, "option --torch");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "option --torch: '{bacth}' in '{bacth}' is not a placeholder stepscope fills (did you "
            "mean {batch}?); the placeholders are {batch}, {accum}, {bucket_mb}. To pass braces "
            "to the program as written, double them ('{{bacth}}')");
  s = CheckPlaceholders({"--bs={batch_size}"}, known, "w");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("did you mean {batch}?"), std::string::npos) << s.message();
  s = CheckPlaceholders({"{bucket-mb}"}, known, "w");
  EXPECT_NE(s.message().find("did you mean {bucket_mb}?"), std::string::npos) << s.message();
  s = CheckPlaceholders({"out/{epoch}"}, known, "w");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().find("did you mean"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace stepscope::core
