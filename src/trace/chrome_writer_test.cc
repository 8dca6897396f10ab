#include "trace/chrome_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace stepscope::trace {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("stepscope_writer_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ChromeTraceWriter, WritesValidObjectForm) {
  std::string path = TempPath("basic.json");
  {
    auto w = ChromeTraceWriter::Open(path);
    ASSERT_TRUE(w.ok()) << w.status().message();
    (*w)->ProcessName(0, "rank 0");
    (*w)->ThreadName(0, 1, "main");
    (*w)->Complete(0, 1, "forward", "compute", 1.5, 0.25, {{"step", 3}});
    (*w)->Instant(0, 1, "mark", 2.0);
    (*w)->FlowStart(0, 1, 7, "arrive", 1.0);
    (*w)->FlowEnd(0, 2, 7, "arrive", 1.1);
    (*w)->Metadata("distributedInfo", {{"rank", 0}, {"world_size", 2}});
    ASSERT_TRUE((*w)->Close().ok());
    EXPECT_TRUE((*w)->Close().ok());  // second close is harmless
  }
  auto j = nlohmann::json::parse(Slurp(path));
  ASSERT_TRUE(j.contains("traceEvents"));
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  EXPECT_EQ(j["distributedInfo"]["world_size"], 2);
  const auto& ev = j["traceEvents"];
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[2]["ph"], "X");
  EXPECT_DOUBLE_EQ(ev[2]["ts"].get<double>(), 1.5e6);
  EXPECT_DOUBLE_EQ(ev[2]["dur"].get<double>(), 0.25e6);
  EXPECT_EQ(ev[2]["args"]["step"], 3);
  EXPECT_EQ(ev[4]["ph"], "s");
  EXPECT_EQ(ev[5]["ph"], "f");
  EXPECT_EQ(ev[5]["bp"], "e");
  EXPECT_EQ(ev[5]["id"], 7);
  std::filesystem::remove(path);
}

TEST(ChromeTraceWriter, HostileStringsSurvive) {
  const std::string hostile = std::string("a\"b\\c\nd\te\x01\x1f</script><b>&") + '\0' + "z";
  std::string path = TempPath("hostile.json");
  {
    auto w = ChromeTraceWriter::Open(path);
    ASSERT_TRUE(w.ok());
    (*w)->ThreadName(0, 0, hostile);
    (*w)->Complete(0, 0, hostile, hostile, 0, 1e-6, {{"k", hostile}});
    (*w)->Metadata(hostile, hostile);
  }  // destructor closes
  std::string text = Slurp(path);
  EXPECT_EQ(text.find("</script>"), std::string::npos);
  auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["traceEvents"][0]["args"]["name"], hostile);
  EXPECT_EQ(j["traceEvents"][1]["name"], hostile);
  EXPECT_EQ(j["traceEvents"][1]["cat"], hostile);
  EXPECT_EQ(j["traceEvents"][1]["args"]["k"], hostile);
  EXPECT_EQ(j[hostile], hostile);
  std::filesystem::remove(path);
}

TEST(ChromeTraceWriter, EmptyTraceIsValid) {
  std::string path = TempPath("empty.json");
  {
    auto w = ChromeTraceWriter::Open(path);
    ASSERT_TRUE(w.ok());
  }
  auto j = nlohmann::json::parse(Slurp(path));
  EXPECT_TRUE(j["traceEvents"].empty());
  std::filesystem::remove(path);
}

TEST(ChromeTraceWriter, UnwritablePathIsAnError) {
  auto w = ChromeTraceWriter::Open("/nonexistent-dir/x/trace.json");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("/nonexistent-dir/x/trace.json"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::trace
